/**
 * The bound on a conversation's committed history (issue #7: a game runs for hours). When a committed turn
 * takes the history past {@link MAX_HISTORY_ENTRIES} entries or {@link MAX_HISTORY_CHARS} characters of
 * text, the oldest whole turns are dropped (down to three quarters of the bound, so dropping is rare), and
 * the newest turn is always kept. The on-device model never sees that much history anyway (`trimHistory`
 * hides old turns from it); compact with `session/compact` to keep their gist.
 * @module
 */
import type { ConversationEntry } from "../protocol/transcript.ts";

/** Default maximum committed entries per conversation (session or NPC). */
export const MAX_HISTORY_ENTRIES = 4096;
/** Default maximum characters of text in a committed conversation (about 2 MiB of text). */
export const MAX_HISTORY_CHARS = 2 * 1024 * 1024;

/** The bound a history is held to, and how to measure it. */
export interface HistoryBound {
  /** The text length of all of the entries. */
  total: number;
  /** The text length of one entry. */
  lengthOf: (entry: ConversationEntry) => number;
  /** Most entries. */
  maxEntries: number;
  /** Most characters of text. */
  maxChars: number;
}

/**
 * The history without its oldest whole turns (a turn starts at a user prompt), so that it fits
 * `bound.maxEntries` and `bound.maxChars` with room to spare; `null` when it already fits.
 * {@link boundHistoryWithLength} also returns the text length of what is kept.
 */
export function boundHistory(entries: ConversationEntry[], bound: HistoryBound): ConversationEntry[] | null {
  return boundHistoryWithLength(entries, bound)?.entries ?? null;
}

/** {@link boundHistory}, with the text length of the kept entries (`chars`). */
export function boundHistoryWithLength(
  entries: ConversationEntry[],
  bound: HistoryBound,
): { entries: ConversationEntry[]; chars: number } | null {
  const { total, lengthOf, maxEntries, maxChars } = bound;
  if (entries.length <= maxEntries && total <= maxChars) return null;
  const targetEntries = Math.floor(maxEntries * 0.75);
  const targetChars = Math.floor(maxChars * 0.75);
  let lastStart = -1;
  for (let i = entries.length - 1; i > 0; i--) {
    if (entries[i].role === "user") {
      lastStart = i;
      break;
    }
  }
  if (lastStart <= 0) return null;
  let chars = total;
  let cut = 0;
  let kept = total;
  for (let i = 0; i < lastStart; i++) {
    chars -= lengthOf(entries[i]);
    const next = i + 1;
    if (entries[next].role !== "user") continue;
    cut = next;
    kept = chars;
    if (entries.length - cut <= targetEntries && chars <= targetChars) break;
  }
  return cut === 0 ? null : { entries: entries.slice(cut), chars: kept };
}
