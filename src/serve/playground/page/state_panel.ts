/// <reference lib="dom" />
/**
 * The state panel: the NPC's memory (facts, summary, relationship with its history), the live world tree,
 * a table of every turn's latency and usage, and save/restore of `npc/state`.
 * @module
 */
import type { NpcMemory } from "../../../client/game_types.ts";
import type { JsonValue } from "../../../protocol/json.ts";
import type { TurnRecord } from "./conversation.ts";
import { fileButton, h, tabs } from "./dom.ts";
import { listFrom, numberFrom } from "./values.ts";
import { type WorldActions, WorldTree } from "./world_tree.ts";

/** One point of the relationship's history. */
export interface RelationshipPoint {
  /** "start", "turn 3", "you"… */
  label: string;
  /** The value after it. */
  value: number;
  /** Why it changed (the change_relationship reasons of the turn). */
  reasons: string[];
}

/** What the panel asks the page to do. */
export interface StateActions extends WorldActions {
  /** Download the NPC's state. */
  download(): void;
  /** Restore from a state file's text. */
  restore(name: string, text: string): void;
  /** Restore the last state the page saw (after the bridge went away). */
  restoreLast(): void;
  /** Change the live memory (`npc/update`); rejects with the bridge's error. */
  updateMemory(memory: NpcMemory): Promise<void>;
  /** Read the memory again. */
  refresh(): void;
  /** A reply is running (a memory update waits until it ends). */
  replyRunning(): boolean;
}

function attitude(value: number): string {
  if (value < -60) return "hostile";
  if (value < -20) return "unfriendly";
  if (value <= 20) return "neutral";
  if (value <= 60) return "friendly";
  return "devoted";
}

/** A small line chart of the relationship (-100…100), as SVG. */
function chart(points: RelationshipPoint[]): SVGSVGElement {
  const ns = "http://www.w3.org/2000/svg";
  const w = 300;
  const hgt = 80;
  const svg = document.createElementNS(ns, "svg");
  svg.setAttribute("viewBox", `0 0 ${w} ${hgt}`);
  svg.setAttribute("class", "chart");
  svg.setAttribute("role", "img");
  svg.setAttribute(
    "aria-label",
    `Relationship over time: ${points.map((p) => `${p.label} ${p.value}`).join(", ")}`,
  );
  const y = (v: number) => hgt / 2 - (v / 100) * (hgt / 2 - 4);
  const zero = document.createElementNS(ns, "line");
  for (const [k, v] of Object.entries({ x1: 0, x2: w, y1: y(0), y2: y(0), class: "zero" })) {
    zero.setAttribute(k, String(v));
  }
  svg.append(zero);
  if (points.length > 0) {
    const step = points.length > 1 ? (w - 8) / (points.length - 1) : 0;
    const coords = points.map((p, i) => `${4 + i * step},${y(p.value)}`);
    const line = document.createElementNS(ns, "polyline");
    line.setAttribute("points", coords.join(" "));
    line.setAttribute("class", "series");
    svg.append(line);
    points.forEach((p, i) => {
      const dot = document.createElementNS(ns, "circle");
      dot.setAttribute("cx", String(4 + i * step));
      dot.setAttribute("cy", String(y(p.value)));
      dot.setAttribute("r", "3");
      svg.append(dot);
    });
  }
  return svg;
}

/** The state panel. */
export class StatePanel {
  /** The world tree. */
  readonly world: WorldTree;
  readonly #actions: StateActions;
  readonly #memory: HTMLElement;
  readonly #turnsBody: HTMLTableSectionElement;
  readonly #saveMessage: HTMLElement;
  readonly #restoreLast: HTMLButtonElement;
  readonly #select: (id: string) => void;
  #points: RelationshipPoint[] = [];
  #current: NpcMemory | null = null;
  #editing = false;
  /** The next memory shown focuses "Edit memory" (its edit form closed with the focus in it). */
  #refocusEdit = false;

  /** Builds the panel in `host`. */
  constructor(host: HTMLElement, actions: StateActions) {
    this.#actions = actions;
    this.world = new WorldTree(actions);
    this.#memory = h("div", { class: "memory" });
    this.#turnsBody = h("tbody", {});
    this.#saveMessage = h("div", { class: "status", role: "status", "aria-live": "polite" });
    this.#restoreLast = h("button", {
      type: "button",
      id: "restore-last",
      text: "Restore the last state seen",
      hidden: true,
      on: { click: () => actions.restoreLast() },
    });
    const tabHost = h("div", { class: "tabs" });
    host.append(tabHost);
    this.#select = tabs(tabHost, {
      name: "NPC state",
      items: [
        { id: "state-memory", label: "Memory", panel: this.#memoryPanel() },
        { id: "state-world", label: "World", panel: h("div", {}, this.world.root) },
        { id: "state-turns", label: "Turns", panel: this.#turnsPanel() },
        { id: "state-save", label: "Save", panel: this.#savePanel() },
      ],
    });
    this.showMemory(null);
  }

  /** The Memory tab: a Refresh button over the memory (filled by {@link StatePanel.showMemory}). */
  #memoryPanel(): HTMLElement {
    return h(
      "div",
      {},
      h(
        "div",
        { class: "row" },
        h("button", {
          type: "button",
          class: "small",
          text: "Refresh",
          on: { click: () => this.#actions.refresh() },
        }),
      ),
      this.#memory,
    );
  }

  /** The Turns tab: the table of each turn's latency and tokens (rows added by {@link StatePanel.addTurn}). */
  #turnsPanel(): HTMLElement {
    const columns = ["#", "Emotion at", "First words", "Done", "In", "Cached", "Out", "Tools", "Result"];
    return h(
      "div",
      { class: "table-wrap" },
      h(
        "table",
        { class: "turns-table" },
        h("caption", { text: "Latency (ms after sending) and tokens of each turn" }),
        h("thead", {}, h("tr", {}, ...columns.map((t) => h("th", { scope: "col", text: t })))),
        this.#turnsBody,
      ),
    );
  }

  /** The Save tab: download the state, restore it from a file or from the last state seen. */
  #savePanel(): HTMLElement {
    const actions = this.#actions;
    return h(
      "div",
      {},
      h("p", {
        class: "hint",
        text: "A state file is the npc/state result (persona, memory, conversation, options, tools) plus a " +
          "snapshot of the NPC's world: restore it here, in another browser or in a game.",
      }),
      h(
        "div",
        { class: "row" },
        h("button", {
          type: "button",
          id: "download-state",
          text: "Download state",
          on: { click: () => actions.download() },
        }),
        fileButton("restore-state", {
          label: "Restore from file…",
          accept: ".json",
          onFiles: async (files) => {
            const file = files[0];
            actions.restore(file.name, await file.text());
          },
        }),
        this.#restoreLast,
      ),
      this.#saveMessage,
    );
  }

  /** Selects a tab (`memory`, `world`, `turns`, `save`). */
  selectTab(id: string): void {
    this.#select(`state-${id}`);
  }

  /** Starts a new relationship history at `value`. */
  resetHistory(value: number, label = "start"): void {
    this.#points = [{ label, value, reasons: [] }];
    this.#turnsBody.replaceChildren();
  }

  /** Adds a point to the relationship history (when the value changed). */
  addPoint(point: RelationshipPoint): void {
    const last = this.#points[this.#points.length - 1];
    if (last && last.value === point.value && point.reasons.length === 0) return;
    this.#points.push(point);
  }

  /** Shows the NPC's memory (null: no NPC). */
  showMemory(memory: NpcMemory | null): void {
    this.#current = memory;
    if (this.#editing) return;
    if (memory === null) {
      this.#memory.replaceChildren(h("p", { class: "hint", text: "Start the NPC to see its memory." }));
      return;
    }
    const relationship = memory.relationship ?? 0;
    const facts = memory.facts ?? [];
    // A chatty model gives long reasons every turn: the latest HISTORY_SHOWN changes are listed (numbered as in
    // the whole history), each reason cut to REASON_SHOWN characters (whole in its tooltip); the chart has all.
    const first = Math.max(0, this.#points.length - HISTORY_SHOWN);
    const history = h(
      "ol",
      { class: "relationship-history", start: first > 0 ? String(first + 1) : null },
      ...this.#points.slice(first).map((p, j) => {
        const i = first + j;
        const before = i > 0 ? this.#points[i - 1].value : null;
        const delta = before === null ? "" : ` (${p.value - before >= 0 ? "+" : ""}${p.value - before})`;
        const reasons = p.reasons.flatMap((reason, k) => [k > 0 ? "; " : "", reasonShown(reason)]);
        return h("li", {}, `${p.label}: ${p.value}${delta}`, p.reasons.length ? " — " : "", ...reasons);
      }),
    );
    const earlier = first === 0 ? null : h("p", {
      class: "hint relationship-earlier",
      text: `${first} earlier ${first === 1 ? "change" : "changes"} not listed (the chart shows them all).`,
    });
    // The focus stays on "Edit memory" when the memory is read again (after each turn), and comes back to it
    // when its edit form closed with the focus in it.
    const refocus = this.#refocusEdit ||
      document.activeElement === this.#memory.querySelector(".edit-memory");
    this.#refocusEdit = false;
    const edit = h("button", {
      type: "button",
      class: "small edit-memory",
      text: "Edit memory",
      on: { click: () => this.#edit() },
    });
    this.#memory.replaceChildren(
      h(
        "div",
        { class: "relationship" },
        h("h3", { text: "Relationship" }),
        h(
          "p",
          { class: "relationship-value" },
          h("strong", { text: String(relationship) }),
          ` (${attitude(relationship)}) on -100…100`,
        ),
        h("meter", {
          min: -100,
          max: 100,
          low: -20,
          high: 20,
          optimum: 100,
          value: relationship,
          "aria-label": `Relationship ${relationship}`,
        }),
        chart(this.#points),
        earlier,
        history,
      ),
      h("h3", { text: `Facts (${facts.length})` }),
      facts.length
        ? h("ul", { class: "facts" }, ...facts.map((f) => h("li", { dir: "auto", text: f })))
        : h("p", { class: "hint", text: "No facts yet (memory tools let the NPC store them)." }),
      h("h3", { text: "Summary" }),
      h("p", {
        class: memory.summary ? "" : "hint",
        dir: memory.summary ? "auto" : null,
        text: memory.summary ||
          "None yet (older turns are summarized once the conversation needs the room, or when the NPC is saved).",
      }),
      edit,
    );
    if (refocus) edit.focus();
  }

  #edit(): void {
    const memory = this.#current;
    if (!memory) return;
    this.#editing = true;
    const relationship = h("input", {
      type: "text",
      id: "memory-relationship",
      class: "short",
      value: String(memory.relationship ?? 0),
    });
    const facts = h("textarea", {
      id: "memory-facts",
      rows: 4,
      dir: "auto",
      value: (memory.facts ?? []).join("\n"),
    });
    const summary = h("textarea", {
      id: "memory-summary",
      rows: 3,
      dir: "auto",
      value: memory.summary ?? "",
    });
    const message = h("p", { class: "message", role: "alert" });
    const save = h("button", { type: "submit", class: "primary small", text: "Save memory" });
    const form = h(
      "form",
      { class: "memory-edit" },
      h(
        "div",
        { class: "field" },
        h("label", { for: relationship.id, text: "Relationship (-100…100)" }),
        relationship,
      ),
      h("div", { class: "field" }, h("label", { for: facts.id, text: "Facts (one per line)" }), facts),
      h("div", { class: "field" }, h("label", { for: summary.id, text: "Summary" }), summary),
      message,
      h(
        "div",
        { class: "row" },
        save,
        h("button", { type: "button", class: "small", text: "Cancel", on: { click: () => cancel() } }),
      ),
    );
    // Escape cancels, like the world tree's edits; either way the focus goes back to "Edit memory".
    const cancel = () => {
      this.#editing = false;
      this.#refocusEdit = true;
      this.showMemory(this.#current);
    };
    form.addEventListener("keydown", (event) => {
      if (event.key === "Escape") {
        event.preventDefault();
        cancel();
      }
    });
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      if (save.ariaDisabled === "true") return; // a save waits (a second click or Enter in a field)
      void this.#saveMemory({ relationship, facts, summary }, { message, save });
    });
    this.#memory.replaceChildren(form);
    relationship.focus();
  }

  /**
   * Saves the memory form's values (`message` shows what is wrong with them, or the bridge's refusal). While a
   * reply runs the update waits for it to end (a call may wait for the designer's answer): the form says so
   * and `save` is marked disabled meanwhile (aria-disabled: a disabled button would drop the focus).
   */
  async #saveMemory(
    fields: { relationship: HTMLInputElement; facts: HTMLTextAreaElement; summary: HTMLTextAreaElement },
    { message, save }: { message: HTMLElement; save: HTMLButtonElement },
  ): Promise<void> {
    const value = numberFrom(fields.relationship.value);
    if (typeof value !== "number" || value < -100 || value > 100) {
      message.textContent = "The relationship must be a number from -100 to 100.";
      return;
    }
    const summary = fields.summary.value.trim();
    message.textContent = this.#actions.replyRunning()
      ? "Waiting for the running reply to end (answer or cancel it), then saving…"
      : "";
    save.ariaDisabled = "true";
    try {
      await this.#actions.updateMemory({
        relationship: value,
        facts: listFrom(fields.facts.value) ?? [],
        ...(summary ? { summary } : {}),
      });
      this.#editing = false;
      this.#refocusEdit = true; // once the memory read again is shown
      this.addPoint({ label: "you", value, reasons: ["edited by hand"] });
      this.#actions.refresh();
    } catch (error) {
      message.textContent = (error as Error).message;
    } finally {
      save.ariaDisabled = null;
    }
  }

  /** Adds a turn to the table. */
  addTurn(record: TurnRecord): void {
    const r = record.reply;
    const t = record.timings;
    const cell = (v: number | undefined) => h("td", { text: v === undefined ? "–" : String(Math.round(v)) });
    this.#turnsBody.append(
      h(
        "tr",
        {},
        h("th", { scope: "row", text: String(record.index) }),
        cell(t.emotion),
        cell(t.firstLine),
        cell(t.total),
        cell(r?.usage.inputTokens),
        cell(r?.usage.cachedInputTokens),
        cell(r?.usage.outputTokens),
        cell(r?.toolCalls.length),
        h("td", { text: r ? r.emotion : record.error?.dataCode ?? "failed" }),
      ),
    );
  }

  /** Shows a save/restore message. */
  saveMessage(text: string, kind: "info" | "error" = "info"): void {
    if (text === "") return this.#saveMessage.replaceChildren();
    this.#saveMessage.replaceChildren(h("p", { class: kind === "error" ? "error" : "note", text }));
  }

  /**
   * Offers (or hides) restoring the last state seen. Hidden with the focus on it (it was pressed), it hands the
   * focus to Download state beside it, not to the page's body.
   */
  offerLast(label: string | null): void {
    const hadFocus = document.activeElement === this.#restoreLast;
    this.#restoreLast.hidden = label === null;
    if (hadFocus && label === null) {
      this.#restoreLast.parentElement?.querySelector<HTMLElement>("#download-state")?.focus();
    }
    if (label !== null) this.#restoreLast.textContent = `Restore the last state seen (${label})`;
  }
}

/** How many relationship changes the history lists (the latest; the chart shows them all). */
export const HISTORY_SHOWN = 8;
/** How many characters of a relationship reason the history shows (the whole reason is its tooltip). */
export const REASON_SHOWN = 160;

/** A reason as the history shows it: cut to {@link REASON_SHOWN} characters with "…", whole in its title. */
function reasonShown(reason: string): HTMLElement {
  const cut = reason.length > REASON_SHOWN;
  return h("span", {
    class: "reason",
    dir: "auto",
    text: cut ? `${reason.slice(0, REASON_SHOWN - 1).trimEnd()}…` : reason,
    title: cut ? reason : null,
  });
}

/** Relationship reasons of a turn's `change_relationship` calls. */
export function relationshipReasons(record: TurnRecord): string[] {
  const out: string[] = [];
  for (const call of record.reply?.toolCalls ?? []) {
    if (call.call.name !== "change_relationship" || call.isError) continue;
    const args = call.call.arguments as Record<string, JsonValue>;
    const delta = typeof args.delta === "number" ? `${args.delta >= 0 ? "+" : ""}${args.delta}` : "";
    out.push(`${delta} ${typeof args.reason === "string" ? args.reason : ""}`.trim());
  }
  return out;
}
