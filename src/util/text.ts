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

/** Made on first use: creating a segmenter loads ICU's break rules. */
let segmenter: Intl.Segmenter | undefined;

/**
 * The characters of `text` as a reader sees them (grapheme clusters): an emoji with its skin tone or its
 * ZWJ sequence, a letter with its combining accents, a flag, is one character.
 *
 * @example
 * ```ts
 * import { characters } from "./text.ts";
 * characters("ñ👍🏽"); // ["ñ", "👍🏽"]
 * ```
 */
export function characters(text: string): string[] {
  segmenter ??= new Intl.Segmenter(undefined, { granularity: "grapheme" });
  return Array.from(segmenter.segment(text), (s) => s.segment);
}

/**
 * The first `max` characters (grapheme clusters) of `text`, or null when `text` has at most `max`, so nothing
 * is cut. A cut never splits a character (an emoji, a surrogate pair, a letter and its accent).
 *
 * @example
 * ```ts
 * import { headCharacters } from "./text.ts";
 * headCharacters("a👨‍👩‍👧b", 2); // "a👨‍👩‍👧"
 * headCharacters("abc", 3); // null
 * ```
 */
export function headCharacters(text: string, max: number): string | null {
  if (text.length <= max) return null; // a character has at least one code unit
  segmenter ??= new Intl.Segmenter(undefined, { granularity: "grapheme" });
  let n = 0;
  for (const { index } of segmenter.segment(text)) {
    if (n++ === max) return text.slice(0, index);
  }
  return null;
}
