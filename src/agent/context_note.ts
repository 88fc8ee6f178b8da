/**
 * Where a session's context note (`session/setContextNote`, a compaction summary) reaches the model.
 *
 * A model reuses its prompt cache only up to the first changed token, so the note is not written into the
 * instructions (that would change the very start of every later prompt). It enters late instead: ahead of
 * the user's prompt of the next turn, in the same prompt entry, and only when it differs from what the
 * history the model still sees already carries. When the entry that carried it leaves the visible history
 * (a reset, compaction, the history bound, trimming), the next turn carries it again.
 *
 * @example
 * ```ts
 * import { ContextNoteDelivery } from "./context_note.ts";
 * const notes = new ContextNoteDelivery();
 * notes.block("It is raining.", [], 0); // "Context:\nIt is raining."
 * ```
 * @module
 */
import type { ConversationEntry } from "../protocol/transcript.ts";

/** What the prompt says when a note the model saw was cleared. */
export const NOTE_CLEARED = "Context: (none now; the earlier context no longer applies.)";

/** The prompt text of a turn: the note block (if any), a blank line, then the prompt. */
export function withContextBlock(block: string | null, prompt: string): string {
  if (block === null) return prompt;
  return prompt === "" ? block : `${block}\n\n${prompt}`;
}

/** Tracks which note the model's visible history carries. */
export class ContextNoteDelivery {
  #shown: string | null = null;
  #carrier: ConversationEntry | null = null;
  /** Where the carrier was last found in the history: looked at first, so a turn reads one entry there. */
  #at = -1;

  /**
   * The block to put ahead of the next prompt for `note`, or null when the visible history carries it
   * already. `entries` is the committed history and `hidden` how many of its first entries the model did
   * not see in its latest step.
   */
  block(note: string | null, entries: readonly ConversationEntry[], hidden: number): string | null {
    if (this.#carrier !== null && this.#carrierIndex(entries) < hidden) {
      this.#carrier = null;
      this.#shown = null;
    }
    const current = note === "" ? null : note;
    if (current === this.#shown) return null;
    return current === null ? NOTE_CLEARED : `Context:\n${current}`;
  }

  /** Records that `entry` (a committed prompt entry) carried `note`. */
  delivered(note: string | null, entry: ConversationEntry): void {
    this.#shown = note === "" ? null : note;
    this.#carrier = this.#shown === null ? null : entry;
    this.#at = -1;
  }

  /**
   * The carrier's index in `entries` (-1 when it left): where it was found last time when it is still there,
   * else searched for — from the end right after its delivery (it is the latest prompt), from the start after
   * the history lost entries there. Searching from the start on every turn made each turn cost as much as
   * the history before the carrier.
   */
  #carrierIndex(entries: readonly ConversationEntry[]): number {
    const at = this.#at;
    const carrier = this.#carrier!;
    if (at >= 0 && at < entries.length && entries[at] === carrier) return at;
    return this.#at = at === -1 ? entries.lastIndexOf(carrier) : entries.indexOf(carrier);
  }
}
