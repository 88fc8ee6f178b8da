/**
 * Text measures of conversation entries: their text, its length, and a rough token estimate. Trimming,
 * the history bound and usage estimates share them.
 * @module
 */
import { type ConversationEntry, isToolCallsEntry, segmentsText } from "../protocol/transcript.ts";
import { utf8Length } from "../util/text.ts";

/** Length of an entry's text. */
export function entryLength(entry: ConversationEntry): number {
  return entryText(entry).length;
}

/**
 * Length of an entry's text in UTF-8 bytes: what context estimates divide by 3 (about a token for every 3
 * characters of English, a token a character of Japanese or Chinese).
 */
export function entryBytes(entry: ConversationEntry): number {
  return utf8Length(entryText(entry));
}

/**
 * Total text length of a history. The agent keeps its committed history's length up to date itself (see
 * `Agent`); this measures any other array (a step's history with the turn in progress, a trimmed history).
 */
export function historyLength(entries: ConversationEntry[]): number {
  let sum = 0;
  for (const entry of entries) sum += entryLength(entry);
  return sum;
}

/** Rough token estimate used when a backend reports no usage (about 4 characters per token). */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/** Text of an entry for estimates and summaries. */
export function entryText(entry: ConversationEntry): string {
  if (isToolCallsEntry(entry)) return entry.toolCalls.map((c) => `${c.name} ${c.arguments}`).join("\n");
  return segmentsText(entry.contents);
}
