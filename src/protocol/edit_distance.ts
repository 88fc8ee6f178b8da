/**
 * Edit distance for "did you mean" hints: how many insertions, deletions, substitutions or swaps of
 * neighbouring letters turn one short name into another.
 * @module
 */

/**
 * Optimal string alignment distance (Levenshtein with adjacent swaps) of two short names. A pair whose lengths
 * differ by more than 2 is reported as 3 without comparing them: hints never look further than 2 edits.
 *
 * @example
 * ```ts
 * import { editDistance } from "./edit_distance.ts";
 * editDistance("requried", "required"); // 1 (a swap)
 * editDistance("optoins", "options"); // 1
 * ```
 */
export function editDistance(a: string, b: string): number {
  if (Math.abs(a.length - b.length) > 2) return 3;
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i]);
  for (let j = 1; j <= b.length; j++) d[0][j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.length][b.length];
}

/**
 * The one name of `known` that `name` most likely misspells: the same letters in another case, or else the
 * clearly closest name at most one edit away (two for names of six letters or more, a swap of neighbouring
 * letters counting as one); undefined when none is, or when two are equally close. Names shorter than three
 * letters are never guessed at. When no name is that close, a compound name (camelCase, `_` or `-`) is matched
 * by its words: the one known name with the same words but one, that one another form of the same word (the
 * same first three letters: `speechStyle` for `speakingStyle`).
 *
 * @example
 * ```ts
 * import { nearestName } from "./edit_distance.ts";
 * nearestName("scirpt", ["script", "model"]); // "script"
 * nearestName("mood", ["name", "role"]); // undefined
 * nearestName("speechStyle", ["speakingStyle", "backstory"]); // "speakingStyle"
 * ```
 */
export function nearestName(name: string, known: readonly string[]): string | undefined {
  const lower = name.toLowerCase();
  const same = known.filter((k) => k.toLowerCase() === lower);
  if (same.length > 0) return same.length === 1 ? same[0] : undefined;
  let best: string[] = [];
  let bestDistance = Infinity;
  for (const candidate of known) {
    if (candidate.length < 3 || lower.length < 3) continue; // too short to tell a misspelling from a name
    const distance = editDistance(lower, candidate.toLowerCase());
    if (distance > (candidate.length >= 6 ? 2 : 1)) continue;
    if (distance < bestDistance) {
      best = [candidate];
      bestDistance = distance;
    } else if (distance === bestDistance) best.push(candidate);
  }
  if (best.length === 0) best = known.filter((candidate) => sameWordsButAForm(name, candidate));
  return best.length === 1 ? best[0] : undefined;
}

/** The words of a compound name, in lower case: `speakingStyle` and `speaking_style` are `speaking`, `style`. */
function wordsOf(name: string): string[] {
  return name.split(/[_\-]+|(?<=[a-z0-9])(?=[A-Z])/).filter((w) => w !== "").map((w) => w.toLowerCase());
}

/**
 * Whether compound names `a` and `b` have the same words but one, that one another form of the same word in
 * each (at least three letters, the first three the same: `speech` and `speaking`).
 */
function sameWordsButAForm(a: string, b: string): boolean {
  const [wa, wb] = [wordsOf(a), wordsOf(b)];
  if (wa.length < 2 || wa.length !== wb.length) return false;
  const differing = wa.flatMap((w, i) => w === wb[i] ? [] : [[w, wb[i]]]);
  if (differing.length !== 1) return false;
  const [x, y] = differing[0];
  return x.length >= 3 && y.length >= 3 && x.slice(0, 3) === y.slice(0, 3);
}

/** How {@link didYouMean} words its hint. */
export interface DidYouMeanOptions {
  /**
   * Where the hint goes: `"aside"` (the default) in parentheses after a name, before the sentence's period
   * (` (did you mean 'name'?)`); `"clause"` as the sentence's last clause, ending it (`; did you mean 'name'?`);
   * `"sentence"` as a sentence of its own after one (` Did you mean 'name'?`).
   */
  as?: "aside" | "clause" | "sentence";
}

/**
 * The hint that a name `meant` was most likely meant (`""` when none is: pass {@link nearestName}'s answer):
 * ` (did you mean '<meant>'?)` to follow the name in question, or the same question as a clause or a sentence
 * ({@link DidYouMeanOptions}). Every "did you mean" of the project is worded here, the name always in single
 * quotes.
 *
 * @example
 * ```ts
 * import { didYouMean, nearestName } from "./edit_distance.ts";
 * `Unknown key 'nmae'${didYouMean(nearestName("nmae", ["name"]))}.`; // "Unknown key 'nmae' (did you mean 'name'?)."
 * `Unknown command 'chta'${didYouMean("chat", { as: "clause" })}`; // "Unknown command 'chta'; did you mean 'chat'?"
 * didYouMean("name", { as: "sentence" }); // " Did you mean 'name'?"
 * didYouMean(undefined); // ""
 * ```
 */
export function didYouMean(meant: string | undefined, options: DidYouMeanOptions = {}): string {
  if (meant === undefined) return "";
  const question = `did you mean '${meant}'?`;
  switch (options.as ?? "aside") {
    case "aside":
      return ` (${question})`;
    case "clause":
      return `; ${question}`;
    case "sentence":
      return ` D${question.slice(1)}`;
  }
}
