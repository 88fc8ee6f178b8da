/**
 * The check shown by a persona editor field: the review's, plus a hint when the file has an unknown key meant
 * for the field (so the value the designer meant for it is ignored).
 * @module
 */
import type { Review } from "./document.ts";
import type { Check } from "./fields.ts";

/**
 * The check shown by the field at `path` (`persona.name`): the review's, plus a hint when the file has an
 * unknown key meant for this field (the value the designer meant for it is ignored): the field's key in
 * another section (`name` at the top level), or a misspelling of it (`persona.nmae`).
 *
 * @example
 * ```ts
 * import { reviewDocument } from "./document.ts";
 * const review = reviewDocument({ persona: { nmae: "Gorm" } });
 * fieldCheck(review, "persona.name");
 * // { error: "Name is required. The file has 'nmae' (ignored): did you mean this field, 'name'?" }
 * ```
 */
export function fieldCheck(review: Review, path: string): Check | undefined {
  const check = review.fields.get(path);
  const [section, key] = path.split(".");
  /** An unknown key's section ("file" at the top level; null in a tool) and key. */
  const split = (unknown: string): [string | null, string] => {
    const dot = unknown.indexOf(".");
    if (dot === -1) return ["file", unknown];
    return unknown.startsWith("tools[") ? [null, ""] : [unknown.slice(0, dot), unknown.slice(dot + 1)];
  };
  let hint: string | null = null;
  for (const [unknown, home] of review.moves) {
    const [from, name] = split(unknown);
    if (home !== section || name !== key) continue;
    const where = from === "file" ? "at the top level" : `in '${from}'`;
    hint = `The file has '${key}' ${where} (ignored): move it into '${section}'.`;
  }
  for (const [unknown, meant] of review.hints) {
    const [from, name] = split(unknown);
    if (from !== section || meant !== key) continue;
    hint = `The file has '${name}' (ignored): did you mean this field, '${key}'?`;
  }
  if (hint === null) return check;
  if (check?.error) return { error: `${check.error} ${hint}` };
  return { warning: check?.warning ? `${check.warning} ${hint}` : hint };
}
