/// <reference lib="dom" />
/**
 * The conversation's entries as elements: a turn's entry (what the player said and the context, and the
 * NPC's part: its name, emotion, badges, tool calls, line, player options and the turn's meta line, empty
 * until the turn's events fill them) and the earlier turns of a restored NPC. Owns their markup (classes,
 * `dir`, `aria-busy`); what fills them as a turn runs is the conversation's.
 * @module
 */
import { h } from "./dom.ts";
import { ToolCalls } from "./tool_calls.ts";
import type { HistoryEntry } from "./transcript.ts";

/** What {@link turnEntry} shows. */
export interface TurnEntryOptions {
  /** The turn's number (1-based). */
  index: number;
  /** What the player said. */
  line: string;
  /** The turn's context ("": none). */
  context: string;
  /** The NPC's name. */
  npcName: string;
}

/** A turn's entry and the parts of it the conversation fills in as the turn's events come. */
export interface TurnEntry {
  root: HTMLElement;
  emotion: HTMLElement;
  line: HTMLElement;
  calls: ToolCalls;
  badges: HTMLElement;
  meta: HTMLElement;
  options: HTMLElement;
}

/**
 * A turn's entry: what the player said (and the context), and the NPC's part, its emotion pending.
 *
 * @example
 * ```ts ignore
 * const entry = turnEntry({ index: 1, line: "Hello", context: "", npcName: "Mira" });
 * list.append(entry.root);
 * ```
 */
export function turnEntry({ index, line: said, context, npcName }: TurnEntryOptions): TurnEntry {
  const emotion = h("span", {
    class: "emotion",
    "data-emotion": "pending",
    text: "…",
    "aria-label": "emotion",
  });
  // dir=auto: each line reads in its own direction (Arabic right to left) in the left-to-right page.
  const line = h("p", { class: "line streaming", dir: "auto" });
  const calls = new ToolCalls();
  const badges = h("span", { class: "badges" });
  const meta = h("p", { class: "meta" });
  const options = h("div", { class: "player-options" });
  const root = h(
    "li",
    { class: "turn", "data-turn": String(index) },
    h(
      "div",
      { class: "player" },
      h("span", { class: "who", text: "Player" }),
      h("p", { class: "said", dir: "auto", text: said }),
      context ? h("p", { class: "context", text: `Context: ${context}` }) : null,
    ),
    h(
      "div",
      { class: "npc", "aria-busy": "true" },
      h(
        "div",
        { class: "npc-head" },
        h("span", { class: "who", dir: "auto", text: npcName }),
        emotion,
        badges,
      ),
      calls.root,
      line,
      options,
      meta,
    ),
  );
  return { root, emotion, line, calls, badges, meta, options };
}

/**
 * The earlier turns of a restored conversation (from its transcript), under a hint that says so; `npcName`
 * names the NPC's entries.
 *
 * @example
 * ```ts ignore
 * list.append(restoredHistory(historyOf(state.transcript), "Mira"));
 * ```
 */
export function restoredHistory(entries: HistoryEntry[], npcName: string): HTMLElement {
  const list = h("ol", { class: "history" });
  for (const e of entries) {
    list.append(
      h(
        "li",
        { class: e.who },
        h("span", {
          class: "who",
          text: e.who === "player" ? "Player" : e.who === "npc" ? npcName : "tool",
        }),
        e.emotion ? h("span", { class: "emotion", "data-emotion": e.emotion, text: e.emotion }) : null,
        " ",
        h("bdi", { text: e.text }),
      ),
    );
  }
  return h(
    "li",
    { class: "restored" },
    h("p", { class: "hint", text: "Earlier in this conversation (restored):" }),
    list,
  );
}
