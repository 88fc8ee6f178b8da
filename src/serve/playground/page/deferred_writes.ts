/**
 * Edits written into the persona document after a pause in typing when the document is long: each write
 * re-parses the whole text and re-syncs every view, which a long backstory made slow enough to lag behind
 * the keys. Short documents are written (and checked) on every key, as before.
 * @module
 */

/**
 * Above this many characters of persona text, an edit (a form field, the JSONC text, the World tab's box,
 * a tool's card) is written into the document after a pause in typing ({@link SYNC_PAUSE_MS}) rather than
 * on every key.
 */
export const DEFER_SYNC_ABOVE = 8000;

/** The pause in typing after which a deferred edit is written into a long document. */
export const SYNC_PAUSE_MS = 300;

/**
 * Edits waiting to be written, each under a key (an edit under a key already waiting replaces it), run in
 * the order they were first made: after a pause in typing, or at once by {@link DeferredWrites.flush} (when
 * the document is read, a field is left, the page is hidden).
 *
 * @example
 * ```ts
 * const seen: string[] = [];
 * const writes = new DeferredWrites((pending) => seen.push(pending ? "checking soon" : "checked"));
 * writes.edit("jsonc", () => seen.push("written"), true); // long document: after the pause
 * writes.flush(); // seen: ["checking soon", "written", "checked"]
 * ```
 */
export class DeferredWrites {
  readonly #pending = new Map<unknown, () => void>();
  #timer: ReturnType<typeof setTimeout> | undefined;
  readonly #onPending: (pending: boolean) => void;
  readonly #pauseMs: number;
  /** Whether `onPending(true)` was told (and `onPending(false)` not yet). */
  #told = false;
  /** Whether a flush is writing now. */
  #writing = false;

  /** `onPending` is told when edits start waiting (true) and once they are all written (false). */
  constructor(onPending: (pending: boolean) => void = () => {}, pauseMs = SYNC_PAUSE_MS) {
    this.#onPending = onPending;
    this.#pauseMs = pauseMs;
  }

  /** Whether an edit is waiting to be written. */
  get pending(): boolean {
    return this.#pending.size > 0;
  }

  /**
   * An edit under `key`: `write` runs after a pause in typing when `defer` (a long document), else at once
   * (with the edits waiting before it, first).
   */
  edit(key: unknown, write: () => void, defer: boolean): void {
    this.#pending.set(key, write);
    clearTimeout(this.#timer);
    if (!defer) {
      this.flush();
      return;
    }
    this.#timer = setTimeout(() => this.flush(), this.#pauseMs);
    if (!this.#told) {
      this.#told = true;
      this.#onPending(true);
    }
  }

  /**
   * Writes every edit waiting now, in order (and those a write makes meanwhile); a flush while writing (a
   * write that reads the document) returns at once: the edits after it are written next.
   */
  flush(): void {
    clearTimeout(this.#timer);
    if (this.#writing) return;
    this.#writing = true;
    try {
      while (this.#pending.size > 0) {
        const writes = [...this.#pending.values()];
        this.#pending.clear();
        for (const write of writes) write();
      }
    } finally {
      this.#writing = false;
    }
    if (this.#told) {
      this.#told = false;
      this.#onPending(false);
    }
  }
}
