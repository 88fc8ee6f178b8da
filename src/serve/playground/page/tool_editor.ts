/// <reference lib="dom" />
/**
 * The Tools tab: the NPC's client tools (name, description, JSON Schema of the arguments, timeout) as cards
 * that edit the persona document, and how the page answers each tool (by hand, or automatically with a
 * canned answer). A schema that is not valid JSON stays in its box as typed, with the problem beside it.
 * In a long document, what is typed in a card is written into it after a pause in typing (see
 * {@link ToolEditorHost.edit}).
 * @module
 */
import { isJsonObject, type JsonValue } from "../../../protocol/json.ts";
import type { Check } from "./fields.ts";
import { DESCRIPTION_PLACEHOLDER, parseJsonc, type PersonaDocument } from "./document.ts";
import { focusLost, h, pretty, uid } from "./dom.ts";
import { numberFrom } from "./values.ts";
import type { Draft, ToolAnswer } from "./storage.ts";

/** What the tool editor needs from the page. */
export interface ToolEditorHost {
  /** The persona document. */
  doc: PersonaDocument;
  /** Drafts by key (shared with the page's storage). */
  drafts: Record<string, Draft>;
  /** Answer settings by tool name (shared with the page's storage). */
  answers: Record<string, ToolAnswer>;
  /** The document or a setting changed. */
  changed(): void;
  /**
   * An edit typed in a card, under `key` (a later edit under the same key replaces it): `write` runs at once,
   * or, in a long document, after a pause in typing (or at the next {@link ToolEditorHost.flush}, or when the
   * document is read).
   */
  edit(key: string, write: () => void): void;
  /** Writes the edits still waiting for a pause in typing (a card's control is left). */
  flush(): void;
  /** A tool's rename was committed: its answer settings moved from `old` to `name` (keep them). */
  renamed?(old: string, name: string): void;
}

/** The pause in typing a tool's name after which the rename is committed (its answer settings move). */
export const RENAME_PAUSE_MS = 1000;

/** The answer settings of a tool (manual by default). */
export function answerOf(answers: Record<string, ToolAnswer>, name: string): ToolAnswer {
  return Object.hasOwn(answers, name) ? answers[name] : { mode: "manual", text: "", asError: false };
}

/** The Tools tab. */
export class ToolEditor {
  /** The tab's content. */
  readonly root: HTMLElement;
  readonly #host: ToolEditorHost;
  readonly #list: HTMLElement;
  readonly #add: HTMLButtonElement;
  #cards: ToolCard[] = [];
  #bridge: Map<number, Check[]> = new Map();

  /** A tools tab editing `host.doc`. */
  constructor(host: ToolEditorHost) {
    this.#host = host;
    this.#list = h("div", { class: "tool-cards" });
    this.#add = h("button", {
      type: "button",
      text: "Add a tool",
      on: { click: () => this.#addTool() },
    });
    this.root = h(
      "div",
      {},
      h("p", {
        class: "hint",
        text:
          "Client tools the game executes: when the NPC calls one, the call appears in the conversation " +
          "and you answer it there (or it is answered automatically).",
      }),
      this.#list,
      this.#add,
    );
  }

  /** The tools of the document. */
  #tools(): JsonValue[] {
    const tools = this.#host.doc.get(["tools"]);
    return Array.isArray(tools) ? tools : [];
  }

  /** Rebuilds the cards whose tool changed in the document (others keep what is typed in them). */
  sync(): void {
    const tools = this.#tools();
    if (tools.length !== this.#cards.length) {
      // A card with the focus (its Remove button) goes: the focus moves to the card now at its place, else
      // the one before, else "Add a tool" (not to the page's body).
      const focused = this.#cards.findIndex((c) => c.root.contains(document.activeElement));
      this.commitRenames();
      this.#cards = tools.map((tool, index) => new ToolCard(this.#host, { tool, index }));
      this.#list.replaceChildren(...this.#cards.map((c) => c.root));
      if (focused >= 0 && focusLost()) {
        if (this.#cards.length > 0) this.focus(Math.min(focused, this.#cards.length - 1));
        else this.#add.focus();
      }
      return;
    }
    tools.forEach((tool, i) => {
      if (JSON.stringify(tool) === this.#cards[i].synced) return;
      this.#cards[i].commitRename();
      const card = new ToolCard(this.#host, { tool, index: i });
      this.#cards[i].root.replaceWith(card.root);
      this.#cards[i] = card;
    });
  }

  /** Commits the renames still being typed (their answer settings move now): before Start, Apply, a reload. */
  commitRenames(): void {
    for (const card of this.#cards) card.commitRename();
  }

  /** Shows checks per tool (from the review) and the bridge's warnings from `tools/validate`. */
  mark(checks: Check[][]): void {
    this.#cards.forEach((card, i) => card.mark(checks[i] ?? [], this.#bridge.get(i) ?? []));
  }

  /** Sets the bridge's warnings or error for each tool, by index (from `tools/validate`). */
  setBridgeNotes(notes: Map<number, Check[]>): void {
    this.#bridge = notes;
  }

  /** Enables or disables editing (while the JSONC text has a syntax problem). */
  setDisabled(disabled: boolean): void {
    this.#add.disabled = disabled;
    for (const card of this.#cards) card.setDisabled(disabled);
  }

  /** The first control of tool `index` (to focus it). */
  focus(index: number): void {
    this.#cards[index]?.root.querySelector<HTMLElement>("input, textarea")?.focus();
  }

  /**
   * The tools whose schema box holds text that is not valid JSON, with the problem: the document keeps the
   * schema from before that text, so Start would not give the NPC what the box shows.
   */
  schemaProblems(): { index: number; name: string; problem: string }[] {
    return this.#cards.flatMap((card, index) => {
      const problem = card.schemaProblem();
      return problem === null ? [] : [{ index, name: card.name, problem }];
    });
  }

  /** The schema box of tool `index` (to focus it). */
  focusSchema(index: number): void {
    this.#cards[index]?.schemaBox.focus();
  }

  #addTool(): void {
    const tools = this.#tools();
    const names = new Set(tools.map((t) => isJsonObject(t) ? t.name : undefined));
    let n = tools.length + 1;
    while (names.has(`tool_${n}`)) n++;
    const tool = {
      name: `tool_${n}`,
      // Empty, not placeholder text the model would read: the box's placeholder says what to write, and the
      // status list warns until it is written (the bridge warns too).
      description: "",
      parameters: { type: "object", properties: {}, required: [] },
    };
    if (this.#host.doc.get(["tools"]) === undefined) this.#host.doc.set(["tools"], [tool]);
    else this.#host.doc.set(["tools", tools.length], tool);
    this.#host.changed();
    this.focus(tools.length);
  }
}

/** A card's legend: its number and the tool's name. */
function legendText(index: number, name: string): string {
  return `Tool ${index + 1}: ${name || "(no name)"}`;
}

/** A labelled field of a card: label, control, then a hint or message. */
function field(control: HTMLElement, label: string, after: HTMLElement): HTMLElement {
  return h("div", { class: "field" }, h("label", { for: control.id, text: label }), control, after);
}

/** One tool's card: its fields edit the document's `tools[index]`; its answer settings are the page's. */
class ToolCard {
  /** The card's element. */
  readonly root: HTMLElement;
  /** JSON of the document's tool when the card was built (or last written by the card). */
  synced: string;
  readonly #host: ToolEditorHost;
  readonly #index: number;
  readonly #id: string;
  /** The tool's name as typed. */
  #name: string;
  /** The name its answer settings are kept under: the name as typed once the rename is committed. */
  #owner: string;
  #renamePause: ReturnType<typeof setTimeout> | undefined;
  /** The controls named by the tool's name (the canned answer's label, Remove), renamed with it. */
  readonly #named: { label: HTMLElement | null; remove: HTMLButtonElement | null } = {
    label: null,
    remove: null,
  };
  readonly #problem = h("ul", { class: "messages", "aria-live": "polite" });
  readonly #controls: (HTMLInputElement | HTMLTextAreaElement | HTMLButtonElement)[];
  /** The box of the arguments' JSON Schema. */
  readonly schemaBox: HTMLTextAreaElement;
  readonly #schemaProblem: () => string | null;

  constructor(host: ToolEditorHost, { tool, index }: { tool: JsonValue; index: number }) {
    this.#host = host;
    this.#index = index;
    this.synced = JSON.stringify(tool);
    const t = isJsonObject(tool) ? tool : {};
    this.#name = typeof t.name === "string" ? t.name : "";
    this.#owner = this.#name;
    this.#id = uid(`tool-${index}`);
    const legend = h("legend", { text: legendText(index, this.#name) });
    const name = this.#nameInput(legend);
    const description = this.#descriptionInput(t.description);
    const schema = this.#schemaInput(t.parameters);
    this.schemaBox = schema.input;
    this.#schemaProblem = schema.problem;
    const timeout = this.#timeoutInput(t.timeoutSeconds);
    const answer = this.#answerMode();
    const remove = this.#removeButton(schema.draftKey);
    this.#controls = [name, description, schema.input, timeout, ...answer.controls, remove];
    this.root = h(
      "fieldset",
      { class: "tool-card", "data-tool": String(index) },
      legend,
      field(name, "Name", h("p", { class: "hint", text: "1–64 of A–Z a–z 0–9 _ - . (unique)." })),
      field(
        description,
        "Description",
        h("p", { class: "hint", text: "What it does and returns: the model decides from it." }),
      ),
      schema.field,
      field(
        timeout,
        "Timeout (s)",
        h("p", { class: "hint", text: "0–86400; 0 = none. Default: the NPC's tool timeout." }),
      ),
      answer.fieldset,
      this.#problem,
      remove,
    );
    // Leaving a control writes what was typed in it at once (a click elsewhere, another tab).
    this.root.addEventListener("focusout", () => host.flush());
    if (schema.fromDraft) schema.check();
  }

  /** The tool's name as typed. */
  get name(): string {
    return this.#name;
  }

  /** The problem of the schema box's text when it is not valid JSON (the document has the schema before it). */
  schemaProblem(): string | null {
    return this.#schemaProblem();
  }

  /** Shows the review's checks of the tool and the bridge's warnings. */
  mark(checks: Check[], bridge: Check[]): void {
    const items = [
      ...checks.map((c) =>
        h("li", { class: c.error ? "error" : "warning", text: c.error ?? c.warning ?? "" })
      ),
      ...bridge.map((b) =>
        h("li", { class: b.error ? "error" : "warning", text: `Bridge: ${b.error ?? b.warning ?? ""}` })
      ),
    ];
    this.#problem.replaceChildren(...items);
    this.root.classList.toggle("has-error", [...checks, ...bridge].some((c) => c.error));
  }

  /** Enables or disables every control of the card. */
  setDisabled(disabled: boolean): void {
    for (const c of this.#controls) c.disabled = disabled;
  }

  /**
   * Writes `tools[index][key]` into the document, at once or after a pause in typing (see
   * {@link ToolEditorHost.edit}): `value` is read when it is written.
   */
  #edit(key: string, value: () => JsonValue | undefined): void {
    this.#host.edit(`${this.#id}.${key}`, () => this.#write(key, value()));
  }

  /** Writes `tools[index][key]` into the document now (a failure shows under the card). */
  #write(key: string, value: JsonValue | undefined): void {
    const doc = this.#host.doc;
    try {
      doc.set(["tools", this.#index, key], value);
    } catch (error) {
      this.#problem.textContent = (error as Error).message;
      return;
    }
    this.synced = JSON.stringify(doc.get(["tools", this.#index]));
    this.#host.changed();
  }

  /**
   * The name: renaming updates the legend at once; the tool's answer settings move to the new name when the
   * rename is committed ({@link ToolCard.commitRename}: the box is left, Enter, a pause in typing), not on
   * every key, where a name typed on the way (another tool's) would take them.
   */
  #nameInput(legend: HTMLElement): HTMLInputElement {
    const input = h("input", {
      type: "text",
      id: `${this.#id}-name`,
      value: this.#name,
      autocomplete: "off",
    });
    input.addEventListener("input", () => {
      const name = this.#name = input.value;
      legend.textContent = legendText(this.#index, name);
      this.#nameControls();
      this.#edit("name", () => input.value);
      clearTimeout(this.#renamePause);
      this.#renamePause = setTimeout(() => this.commitRename(), RENAME_PAUSE_MS);
    });
    // Left, or Enter: committed at once.
    input.addEventListener("blur", () => this.commitRename());
    input.addEventListener("keydown", (event) => {
      if (event.key === "Enter" && !event.isComposing) this.commitRename();
    });
    return input;
  }

  /**
   * Commits a rename: the answer settings move from the name they were kept under to the name typed (unless
   * another tool's settings are kept under it), and the page is told (the running NPC still calls the tool
   * by its old name until Apply).
   */
  commitRename(): void {
    clearTimeout(this.#renamePause);
    const old = this.#owner;
    const name = this.#name;
    if (old === name) return;
    this.#owner = name;
    const answers = this.#host.answers;
    if (Object.hasOwn(answers, old) && !Object.hasOwn(answers, name)) {
      answers[name] = answers[old];
      delete answers[old];
    }
    this.#host.renamed?.(old, name);
  }

  #descriptionInput(value: JsonValue | undefined): HTMLTextAreaElement {
    const input = h("textarea", {
      id: `${this.#id}-description`,
      rows: 2,
      placeholder: DESCRIPTION_PLACEHOLDER,
      value: typeof value === "string" ? value : value === undefined ? "" : pretty(value),
    });
    input.addEventListener(
      "input",
      () => this.#edit("description", () => input.value === "" ? undefined : input.value),
    );
    return input;
  }

  /**
   * The arguments' JSON Schema: text that is not valid JSON stays in the box as a draft (kept across
   * reloads while the document's schema is the one it was typed over), with the problem beside it.
   */
  #schemaInput(value: JsonValue | undefined): {
    field: HTMLElement;
    input: HTMLTextAreaElement;
    draftKey: string;
    fromDraft: boolean;
    check(): boolean;
    problem(): string | null;
  } {
    const host = this.#host;
    const index = this.#index;
    const id = this.#id;
    const draftKey = `tools.${index}.parameters`;
    const draft = host.drafts[draftKey];
    const fromDraft = draft !== undefined && draft.base === JSON.stringify(value ?? null);
    const input = h("textarea", {
      id: `${id}-parameters`,
      wrap: "off",
      class: "code",
      rows: 6,
      spellcheck: "false",
      value: fromDraft ? draft.text : value === undefined ? "" : pretty(value),
      "aria-describedby": `${id}-parameters-message`,
    });
    const message = h("p", { class: "message", id: `${id}-parameters-message`, "aria-live": "polite" });
    const problem = (): string | null => {
      if (input.value.trim() === "") return null;
      const parsed = parseJsonc(input.value, "The schema").problem;
      return parsed ? `${parsed.message} Nothing was changed.` : null;
    };
    const check = (): boolean => {
      if (input.value.trim() === "") {
        message.textContent = "";
        input.setAttribute("aria-invalid", "false");
        return true;
      }
      const parsed = parseJsonc(input.value, "The schema");
      message.textContent = parsed.problem ? `${parsed.problem.message} Nothing was changed.` : "";
      input.setAttribute("aria-invalid", String(parsed.problem !== null));
      input.closest(".field")?.classList.toggle("has-error", parsed.problem !== null);
      return parsed.problem === null;
    };
    // The box says at once whether its text is JSON; the text goes into the document (or the drafts) at
    // once or, in a long document, after a pause in typing.
    const write = () => {
      if (!check()) {
        host.drafts[draftKey] = {
          text: input.value,
          base: JSON.stringify(host.doc.get(["tools", index, "parameters"]) ?? null),
        };
        host.changed();
        return;
      }
      delete host.drafts[draftKey];
      const text = input.value.trim();
      this.#write("parameters", text === "" ? undefined : parseJsonc(text).value);
    };
    input.addEventListener("input", () => {
      check();
      host.edit(`${id}.parameters`, write);
    });
    return {
      field: field(input, "Parameters (JSON Schema)", message),
      input,
      draftKey,
      fromDraft,
      check,
      problem,
    };
  }

  #timeoutInput(value: JsonValue | undefined): HTMLInputElement {
    const input = h("input", {
      type: "text",
      id: `${this.#id}-timeout`,
      class: "short",
      inputmode: "decimal",
      placeholder: "NPC's",
      value: value === undefined || value === null ? "" : String(value),
    });
    input.addEventListener("input", () => this.#edit("timeoutSeconds", () => numberFrom(input.value)));
    return input;
  }

  /** How the page answers the tool: by hand, or automatically with a canned answer (or error). */
  #answerMode(): { fieldset: HTMLElement; controls: (HTMLInputElement | HTMLTextAreaElement)[] } {
    const host = this.#host;
    const id = this.#id;
    const answer = answerOf(host.answers, this.#owner);
    // The setting is kept at once (the conversation answers with it); the page is told (it re-syncs the views
    // and stores what was typed) at once or, in a long document, after a pause in typing.
    const setAnswer = (change: Partial<ToolAnswer>) => {
      this.commitRename();
      const name = this.#owner;
      host.answers[name] = { ...answerOf(host.answers, name), ...change };
      canned.closest(".canned")?.classList.toggle("active", host.answers[name].mode === "auto");
      host.edit(`${id}.answer`, () => host.changed());
    };
    const manual = h("input", {
      type: "radio",
      name: `${id}-mode`,
      id: `${id}-manual`,
      checked: answer.mode === "manual",
    });
    const auto = h("input", {
      type: "radio",
      name: `${id}-mode`,
      id: `${id}-auto`,
      checked: answer.mode === "auto",
    });
    manual.addEventListener("change", () => setAnswer({ mode: "manual" }));
    auto.addEventListener("change", () => setAnswer({ mode: "auto" }));
    const canned = h("textarea", {
      id: `${id}-canned`,
      class: "code",
      rows: 2,
      spellcheck: "false",
      value: answer.text,
      placeholder: "JSON or plain text",
    });
    canned.addEventListener("input", () => setAnswer({ text: canned.value }));
    const asError = h("input", { type: "checkbox", id: `${id}-as-error`, checked: answer.asError });
    asError.addEventListener("change", () => setAnswer({ asError: asError.checked }));
    const fieldset = h(
      "fieldset",
      { class: "answer-mode" },
      h("legend", { text: "Answer" }),
      h(
        "label",
        { class: "check", for: manual.id },
        manual,
        h("span", { text: "by hand, in the conversation" }),
      ),
      h("label", { class: "check", for: auto.id }, auto, h("span", { text: "automatically with:" })),
      h(
        "div",
        { class: `canned${answer.mode === "auto" ? " active" : ""}` },
        this.#named.label = h("label", { for: canned.id, class: "visually-hidden" }),
        canned,
        h("label", { class: "check", for: asError.id }, asError, h("span", { text: "as an error" })),
      ),
    );
    this.#nameControls();
    return { fieldset, controls: [manual, auto, canned, asError] };
  }

  /** Removes the tool from the document (and its schema draft). */
  #removeButton(draftKey: string): HTMLButtonElement {
    const host = this.#host;
    const remove = this.#named.remove = h("button", {
      type: "button",
      class: "small danger",
      text: "Remove",
      on: {
        click: () => {
          host.doc.set(["tools", this.#index], undefined);
          delete host.drafts[draftKey];
          host.changed();
        },
      },
    });
    this.#nameControls();
    return remove;
  }

  /** Names the canned answer's box and the Remove button by the tool's name as typed (a rename renames them). */
  #nameControls(): void {
    const { label, remove } = this.#named;
    if (label) label.textContent = `Canned answer of ${this.#name || `tool ${this.#index + 1}`}`;
    remove?.setAttribute("aria-label", `Remove tool ${this.#name || this.#index + 1}`);
  }
}
