/**
 * OpenAI `stop` sequences over streamed text: text that could still be the start of a stop sequence is held
 * back until it is decided, so a stop sequence never reaches the client, even split across snapshots.
 * @module
 */

/**
 * Releases text snapshots up to the first stop sequence.
 *
 * @example
 * ```ts
 * import { StopFilter } from "./stop_filter.ts";
 * const filter = new StopFilter(["END"]);
 * filter.update("Hello E"); // "Hello " (the "E" is held back)
 * filter.update("Hello END more"); // "" and filter.stopped === true
 * filter.released; // "Hello "
 * ```
 */
export class StopFilter {
  readonly #stops: string[];
  #released = "";
  #stopped = false;

  /** A filter for `stops` (empty ones are ignored). */
  constructor(stops: string[]) {
    this.#stops = stops.filter((s) => s !== "");
  }

  /** Text released so far. */
  get released(): string {
    return this.#released;
  }

  /** True once a stop sequence was found: nothing more is released. */
  get stopped(): boolean {
    return this.#stopped;
  }

  /**
   * Takes the full text generated so far and returns the newly releasable part, or null when the text no
   * longer extends what was released (the model rewrote its answer).
   */
  update(text: string): string | null {
    if (this.#stopped) return "";
    const stop = this.#earliestStop(text);
    if (stop !== -1) {
      this.#stopped = true;
      return this.#release(text.slice(0, stop));
    }
    return this.#release(text.slice(0, text.length - this.#heldBack(text)));
  }

  /** Releases everything left at the end of generation (up to a stop sequence). */
  finish(text: string): string | null {
    if (this.#stopped) return "";
    const stop = this.#earliestStop(text);
    if (stop !== -1) {
      this.#stopped = true;
      return this.#release(text.slice(0, stop));
    }
    return this.#release(text);
  }

  #release(releasable: string): string | null {
    if (!releasable.startsWith(this.#released)) return null;
    const delta = releasable.slice(this.#released.length);
    this.#released = releasable;
    return delta;
  }

  #earliestStop(text: string): number {
    let best = -1;
    for (const stop of this.#stops) {
      const at = text.indexOf(stop);
      if (at !== -1 && (best === -1 || at < best)) best = at;
    }
    return best;
  }

  /** Length of the longest suffix of `text` that is a proper prefix of a stop sequence. */
  #heldBack(text: string): number {
    let best = 0;
    for (const stop of this.#stops) {
      for (let length = Math.min(stop.length - 1, text.length); length > best; length--) {
        if (text.endsWith(stop.slice(0, length))) {
          best = length;
          break;
        }
      }
    }
    return best;
  }
}
