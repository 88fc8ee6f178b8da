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

/**
 * The first `max` UTF-16 code units of `text`, one fewer when the last would be the first half of a surrogate
 * pair (an emoji, a rare kanji), so the cut never leaves half a character. Text that fits is returned whole.
 *
 * @example
 * ```ts
 * import { headUnits } from "./text.ts";
 * headUnits("ab😀", 3); // "ab"
 * headUnits("ab😀", 4); // "ab😀"
 * ```
 */
export function headUnits(text: string, max: number): string {
  if (text.length <= max) return text;
  let end = Math.max(0, max);
  const code = text.charCodeAt(end - 1);
  if (end > 0 && code >= 0xd800 && code <= 0xdbff) end -= 1;
  return text.slice(0, end);
}

/**
 * `text` cut to at most `max` UTF-16 units for a preview: the first `max - 3` units (never half a surrogate
 * pair, see {@link headUnits}) plus `"..."`. Text that fits is returned unchanged.
 *
 * @example
 * ```ts
 * import { truncateText } from "./text.ts";
 * truncateText("abcdef", 5); // "ab..."
 * truncateText("abcd", 5); // "abcd"
 * ```
 */
export function truncateText(text: string, max: number): string {
  return text.length <= max ? text : headUnits(text, max - 3) + "...";
}

/**
 * The length of `text` in UTF-8 bytes, counted without encoding it: 1 for ASCII, 2 for Latin accents, Greek,
 * Cyrillic, Hebrew and Arabic, 3 for kana, CJK and most other BMP characters, 4 for a surrogate pair (emoji).
 * Token estimates divide it, so text in Japanese or Chinese (about a token a character) is not counted as
 * if it were English (about a token for every 3–4 characters).
 *
 * @example
 * ```ts
 * import { utf8Length } from "./text.ts";
 * utf8Length("abc"); // 3
 * utf8Length("鍛冶屋"); // 9
 * utf8Length("😀"); // 4
 * ```
 */
export function utf8Length(text: string): number {
  let n = text.length;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) continue;
    if (c < 0x800 || (c >= 0xd800 && c <= 0xdfff)) n += 1; // each half of a pair: 2 of its 4 bytes
    else n += 2;
  }
  return n;
}

/**
 * `text` without a first half of a surrogate pair at its end: a streamed snapshot that stops between the two
 * halves of an emoji shows the text before it, and the emoji whole with the next snapshot.
 *
 * @example
 * ```ts
 * import { withoutTrailingHalf } from "./text.ts";
 * withoutTrailingHalf("ab\ud83d"); // "ab"
 * withoutTrailingHalf("ab😀"); // "ab😀"
 * ```
 */
export function withoutTrailingHalf(text: string): string {
  const last = text.charCodeAt(text.length - 1);
  return last >= 0xd800 && last <= 0xdbff ? text.slice(0, -1) : text;
}
