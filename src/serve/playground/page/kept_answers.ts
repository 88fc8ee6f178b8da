/**
 * Answers typed to a tool call but not sent, kept for the browser tab (its session storage) by persona and
 * tool: what is typed in a waiting call's answer box, and an answer its call ended with (the bridge went
 * away, a reload cut the turn off). The next call of that tool by that persona starts with it, after a
 * reload too. A reload ends the call it was typed for (the NPC lived in the page's old connection, and the
 * bridge cancels its turn), so a kept answer is never sent by itself: it waits in the next call's box.
 *
 * It goes when it is no longer relevant: when that box takes it (the box holds it from then on), when the
 * answer is sent, when the persona no longer has the tool ({@link KeptAnswers.prune}), when another persona
 * replaces it in the page ({@link KeptAnswers.drop}), or with the tab. A persona whose id is renamed keeps them
 * ({@link KeptAnswers.rename}).
 * @module
 */

/** Where the kept answers are (the browser's `sessionStorage`, or a stand-in). */
export interface AnswerStore {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
}

const KEY = "oam-playground/kept-answers/v1";

/** Kept answers by persona id, then tool name. */
type Kept = Record<string, Record<string, string>>;

/**
 * The answers kept in `store` (quietly none when the storage is off or full).
 *
 * @example
 * ```ts
 * const kept = new KeptAnswers(sessionStorage);
 * kept.set("mira", "check_stock", '{"stock": 7}');
 * kept.take("mira", "check_stock"); // '{"stock": 7}' (and it is no longer kept)
 * ```
 */
export class KeptAnswers {
  readonly #store: AnswerStore | null;

  /** Kept answers in `store` (null: only for this page). */
  constructor(store: AnswerStore | null) {
    this.#store = store;
  }

  #memory: Kept = {};

  #read(): Kept {
    if (this.#store === null) return this.#memory;
    try {
      const raw = this.#store.getItem(KEY);
      const value = raw === null ? {} : JSON.parse(raw);
      return typeof value === "object" && value !== null && !Array.isArray(value) ? value as Kept : {};
    } catch {
      return {};
    }
  }

  #write(kept: Kept): void {
    for (const persona of Object.keys(kept)) {
      if (Object.keys(kept[persona]).length === 0) delete kept[persona];
    }
    if (this.#store === null) {
      this.#memory = kept;
      return;
    }
    try {
      this.#store.setItem(KEY, JSON.stringify(kept));
    } catch {
      // storage full or off: the answer is not kept across a reload
    }
  }

  /** Keeps `text` as the answer to `tool` of `persona` (an empty text keeps nothing). */
  set(persona: string, tool: string, text: string): void {
    const kept = this.#read();
    const tools = kept[persona] ??= {};
    if (text.trim() === "") delete tools[tool];
    else tools[tool] = text;
    this.#write(kept);
  }

  /** The answer kept for `tool` of `persona`, or undefined. */
  get(persona: string, tool: string): string | undefined {
    const tools = this.#read()[persona];
    return tools !== undefined && Object.hasOwn(tools, tool) ? tools[tool] : undefined;
  }

  /** The answer kept for `tool` of `persona`, which is no longer kept (undefined: none). */
  take(persona: string, tool: string): string | undefined {
    const text = this.get(persona, tool);
    if (text !== undefined) this.set(persona, tool, "");
    return text;
  }

  /** The tools of `persona` that have an answer kept. */
  tools(persona: string): string[] {
    return Object.keys(this.#read()[persona] ?? {});
  }

  /** Moves the answers kept for persona `old` to `now` (its id was renamed); one kept for `now` gives way. */
  rename(old: string, now: string): void {
    if (old === now) return;
    const kept = this.#read();
    const tools = kept[old];
    if (tools === undefined) return;
    kept[now] = { ...kept[now], ...tools };
    delete kept[old];
    this.#write(kept);
  }

  /** Drops every answer kept for `persona` (another persona replaced it in the page). */
  drop(persona: string): void {
    const kept = this.#read();
    if (!Object.hasOwn(kept, persona)) return;
    delete kept[persona];
    this.#write(kept);
  }

  /** Drops the answers kept for tools `persona` no longer has (`names`: its tools now). */
  prune(persona: string, names: readonly string[]): void {
    const kept = this.#read();
    const tools = kept[persona];
    if (tools === undefined) return;
    for (const tool of Object.keys(tools)) if (!names.includes(tool)) delete tools[tool];
    this.#write(kept);
  }
}
