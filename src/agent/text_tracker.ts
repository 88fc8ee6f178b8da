/**
 * Turns cumulative text snapshots into `text` events: `delta` is the new suffix, or the whole text with
 * `isReset: true` when the snapshot does not extend what was shown. A snapshot that ends between the two
 * halves of an emoji is shown without the first half (the next snapshot brings the emoji whole).
 * @module
 */
import { withoutTrailingHalf } from "../util/text.ts";

/** One text event's fields. */
export interface TextUpdate {
  delta: string;
  text: string;
  isReset: boolean;
}

/**
 * Tracks the text shown so far.
 *
 * @example
 * ```ts
 * import { TextTracker } from "./text_tracker.ts";
 * const t = new TextTracker();
 * t.update("The"); // {delta: "The", text: "The", isReset: false}
 * t.update("The gate"); // {delta: " gate", text: "The gate", isReset: false}
 * ```
 */
export class TextTracker {
  #shown = "";
  #forceReset = false;

  /** The text shown so far. */
  get text(): string {
    return this.#shown;
  }

  /** The next non-empty update is sent as a reset (used after a retry). */
  resetNext(): void {
    this.#forceReset = true;
  }

  /** Computes the update for a new snapshot, or null when nothing changed. */
  update(whole: string): TextUpdate | null {
    const snapshot = withoutTrailingHalf(whole);
    if (snapshot === this.#shown && !this.#forceReset) return null;
    if (snapshot === "" && this.#forceReset) return null;
    let update: TextUpdate;
    if (!this.#forceReset && snapshot.startsWith(this.#shown)) {
      update = { delta: snapshot.slice(this.#shown.length), text: snapshot, isReset: false };
    } else {
      update = { delta: snapshot, text: snapshot, isReset: true };
    }
    this.#forceReset = false;
    this.#shown = snapshot;
    return update;
  }
}
