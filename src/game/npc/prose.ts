/**
 * Small text helpers for NPC prompts: sentence termination and inline lists.
 * @module
 */

/** `text` trimmed, with a final "." unless it already ends with `.`, `!`, `?`, `"` or `'`. */
export function sentence(text: string): string {
  const t = text.trim();
  if (t === "" || /[.!?"']$/.test(t)) return t;
  return `${t}.`;
}

/**
 * Items as one sentence: each trimmed and stripped of trailing periods, empty ones dropped, joined with
 * "; " and terminated. `""` when nothing is left.
 *
 * @example
 * ```ts
 * listSentence(["Sell swords.", " Find the ring "]); // "Sell swords; Find the ring."
 * ```
 */
export function listSentence(items: readonly string[]): string {
  const parts = items.map((i) => i.trim().replace(/\.+$/, "").trim()).filter((i) => i !== "");
  return parts.length === 0 ? "" : sentence(parts.join("; "));
}
