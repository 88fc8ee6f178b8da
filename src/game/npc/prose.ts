/**
 * Small text helpers for NPC prompts: sentence termination and inline lists.
 * @module
 */

/** A final sentence mark in any script (`.` `!` `?` `。` `！` `？` `؟` `।` …), a quote or a closing 」』. */
const ENDED = /(?:\p{Sentence_Terminal}|["'\p{Pi}\p{Pf}」』])$/u;
/** Japanese or Chinese at the end: the sentence ends with 。. */
const CJK_END = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}ー]$/u;
/** Periods that end a list item: removed before the items are joined. */
const ITEM_PERIODS = /[.。]+$/;

/**
 * `text` trimmed, with a final period unless it already ends with a sentence mark (`.`, `!`, `?`, `。`, `？`,
 * `؟`, …) or a quote (`"`, `'`, `“`, `»`, `」`, …): `。` after Japanese or Chinese, else `.`.
 *
 * @example
 * ```ts
 * import { sentence } from "./prose.ts";
 * sentence("A stubborn smith"); // "A stubborn smith."
 * sentence("頑固だが優しい"); // "頑固だが優しい。"
 * sentence("كريم جدا؟"); // "كريم جدا؟"
 * ```
 */
export function sentence(text: string): string {
  const t = text.trim();
  if (t === "" || ENDED.test(t)) return t;
  return `${t}${CJK_END.test(t) ? "。" : "."}`;
}

/**
 * Items as one sentence: each trimmed and stripped of trailing periods (`.` or `。`), empty ones dropped,
 * joined with "; " and terminated as {@link sentence} does. `""` when nothing is left.
 *
 * @example
 * ```ts
 * listSentence(["Sell swords.", " Find the ring "]); // "Sell swords; Find the ring."
 * ```
 */
export function listSentence(items: readonly string[]): string {
  const parts = items.map((i) => i.trim().replace(ITEM_PERIODS, "").trim()).filter((i) => i !== "");
  return parts.length === 0 ? "" : sentence(parts.join("; "));
}
