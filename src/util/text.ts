/**
 * Small text helpers for messages.
 * @module
 */

/**
 * `text` as the end of a sentence: a period is added unless it already ends with one (or with `!`, `?`), so a
 * quoted answer such as "Only two left." does not end a message with "left..".
 *
 * @example
 * ```ts
 * import { endSentence } from "./text.ts";
 * endSentence("not valid JSON: Only two left."); // "not valid JSON: Only two left."
 * endSentence("must be an object"); // "must be an object."
 * ```
 */
export function endSentence(text: string): string {
  return /[.!?]$/.test(text) ? text : `${text}.`;
}
