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
  const { lengthOf } = bound;
  const cut = historyCut(entries, { ...bound, lengthAt: (i) => lengthOf(entries[i]) });
  return cut === null ? null : { entries: entries.slice(cut.start), chars: cut.chars };
}

/**
 * Where {@link boundHistory} cuts, from the entries' text lengths by index (`lengthAt(i)` is the length of
 * `entries[i]`): the index of the first kept entry and the text length of the kept entries, or null when
 * the history fits. It reads the roles of the last entries and of a few at the cut, and the lengths before
 * the cut, but no dropped entry itself: a long conversation's oldest entries are long out of the CPU's
 * caches, and reading each of them on every cut cost a turn as much as the rest of its work.
 */
export function historyCut(
  entries: ConversationEntry[],
  bound: Omit<HistoryBound, "lengthOf"> & { lengthAt: (index: number) => number },
): { start: number; chars: number } | null {
  const { total, lengthAt, maxEntries, maxChars } = bound;
  const n = entries.length;
  if (n <= maxEntries && total <= maxChars) return null;
  // The newest turn always stays: cuts are at turn starts from 1 to the last one.
  let lastStart = -1;
  for (let i = n - 1; i > 0; i--) {
    if (entries[i].role === "user") {
      lastStart = i;
      break;
    }
  }
  if (lastStart <= 0) return null;
  const targetEntries = Math.floor(maxEntries * 0.75);
  const targetChars = Math.floor(maxChars * 0.75);
  // Both targets only get easier further in: the first index where both hold (from the lengths alone) …
  const from = Math.max(1, n - targetEntries);
  let start = 0;
  let dropped = 0;
  while (start < lastStart && (start < from || total - dropped > targetChars)) dropped += lengthAt(start++);
  // … then the first turn start from there (the last turn start when none fits both).
  while (start < lastStart && entries[start].role !== "user") dropped += lengthAt(start++);
  return { start, chars: total - dropped };
}
