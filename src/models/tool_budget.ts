/**
 * The output a tool call beyond the turn's `maxToolCalls` gets instead of running: the agent gives it
 * (tool_runtime.ts) and marks the history entry it leaves; the scripted model asks that mark to tell such a
 * refused call from one that ran. The mark lives in memory only (transcripts and the wire are unchanged), so
 * a tool whose genuine output reads like the budget message still counts as a tool that ran.
 * @module
 */

/** Output given to calls beyond `maxToolCalls` (the model sees it as `Error: …`); the call never runs. */
export const BUDGET_MESSAGE =
  "The tool budget for this turn is used up. Answer with the information you already have.";

/** History entries of calls refused for the tool budget (the very objects the agent made). */
const refused = new WeakSet<object>();

/**
 * Marks `entry`, the tool-output history entry of a call refused for the tool budget, and returns it.
 *
 * @example
 * ```ts
 * import { isBudgetRefused, markBudgetRefused } from "./tool_budget.ts";
 * const entry = markBudgetRefused({ role: "tool" });
 * isBudgetRefused(entry); // true
 * ```
 */
export function markBudgetRefused<T extends object>(entry: T): T {
  refused.add(entry);
  return entry;
}

/**
 * True when `entry` is the output of a call the agent refused for the tool budget (marked by
 * {@link markBudgetRefused}); an entry with the same text made anywhere else is not.
 *
 * @example
 * ```ts
 * import { isBudgetRefused } from "./tool_budget.ts";
 * isBudgetRefused({ role: "tool", contents: [] }); // false: never marked
 * ```
 */
export function isBudgetRefused(entry: object): boolean {
  return refused.has(entry);
}
