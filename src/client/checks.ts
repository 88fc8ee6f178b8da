/**
 * Checks of what a script passes to the typed client that the bridge never sees (callbacks, handles,
 * signals): a wrong value is a TypeError that names it, before anything is sent, instead of a failure deep
 * inside the client or a silent no-op.
 * @module
 */

/** Longest rendering of a value in a message before it is cut. */
const SHOWN = 60;

/**
 * A short rendering of any value for a TypeError: `undefined`, `42`, `"ale"`, `{"gold":20}`, `a function`.
 *
 * @example
 * ```ts
 * import { shown } from "./checks.ts";
 * shown(undefined); // "undefined"
 * shown({ player: { gold: 20 } }); // '{"player":{"gold":20}}'
 * ```
 */
export function shown(value: unknown): string {
  if (typeof value === "function") return "a function";
  if (typeof value === "bigint") return `${value}n`;
  if (typeof value === "symbol" || value === undefined) return String(value);
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = Object.prototype.toString.call(value); // a cycle
  }
  return text.length > SHOWN ? `${text.slice(0, SHOWN - 3)}...` : text;
}

/**
 * Throws a TypeError naming `what` unless `value` is a function.
 *
 * @example
 * ```ts
 * import { requireFunction } from "./checks.ts";
 * requireFunction(() => {}, "the callback"); // fine
 * try {
 *   requireFunction(undefined, "The handler of tool 'ring_bell'");
 * } catch (error) {
 *   (error as Error).message; // "The handler of tool 'ring_bell' must be a function; got undefined."
 * }
 * ```
 */
export function requireFunction(value: unknown, what: string): void {
  if (typeof value !== "function") throw new TypeError(`${what} must be a function; got ${shown(value)}.`);
}

/**
 * A TypeError for the first of `names` in `options` that is given but is not a function (a turn's callbacks),
 * or null.
 *
 * @example
 * ```ts
 * import { callbackProblem } from "./checks.ts";
 * callbackProblem({ onLine: () => {} }, { names: ["onLine"], where: "npc.talk" }); // null
 * callbackProblem({ onLine: "typewriter" }, { names: ["onLine"], where: "npc.talk" })?.message;
 * // "npc.talk: 'onLine' must be a function; got \"typewriter\"."
 * ```
 */
export function callbackProblem(
  options: object,
  { names, where }: { names: readonly string[]; where: string },
): TypeError | null {
  for (const name of names) {
    const value = (options as Record<string, unknown>)[name];
    if (value !== undefined && typeof value !== "function") {
      return new TypeError(`${where}: '${name}' must be a function; got ${shown(value)}.`);
    }
  }
  return null;
}

/**
 * A TypeError when `value` is or holds what JSON would silently change, or null: a number JSON cannot carry
 * (`NaN`, `Infinity`, `-Infinity`: JSON writes them as `null`, so the bridge would store `null` without a
 * word), or a `Map` or a `Set` (JSON writes each as `{}`, its entries lost). `where` names the call
 * (`world.set("player.gold")`) and `what` the argument (`value`, `patch`, `state`).
 *
 * @example
 * ```ts
 * import { lossyJsonProblem } from "./checks.ts";
 * lossyJsonProblem({ gold: 20 }, { where: "world.merge()", what: "patch" }); // null
 * lossyJsonProblem({ gold: NaN }, { where: "world.merge()", what: "patch" })?.message;
 * // "world.merge(): the patch's 'gold' is NaN, which JSON sends as null; pass a finite number (or null)."
 * lossyJsonProblem({ bag: new Map([["ale", 2]]) }, { where: "world.merge()", what: "patch" })?.message;
 * // "world.merge(): the patch's 'bag' is a Map, which JSON sends as {}; pass an object (Object.fromEntries(map))."
 * ```
 */
export function lossyJsonProblem(
  value: unknown,
  { where, what }: { where: string; what: string },
): TypeError | null {
  const found = findLossy(value, [], new Set());
  if (found === null) return null;
  const subject = found.path.length === 0 ? `the ${what}` : `the ${what}'s '${found.path.join(".")}'`;
  return new TypeError(`${where}: ${subject} is ${found.problem}.`);
}

/** What JSON would change in a value: a non-finite number, or a Map or Set. */
function lossOf(value: unknown): string | null {
  if (typeof value === "number") {
    return Number.isFinite(value)
      ? null
      : `${value}, which JSON sends as null; pass a finite number (or null)`;
  }
  if (value instanceof Map) return "a Map, which JSON sends as {}; pass an object (Object.fromEntries(map))";
  if (value instanceof Set) return "a Set, which JSON sends as {}; pass an array ([...set])";
  return null;
}

/**
 * The first value JSON would change (see {@link lossOf}) in plain arrays and objects (depth first), with its
 * path; cycles and objects with a `toJSON` (a `Date`) are skipped.
 */
function findLossy(
  value: unknown,
  path: string[],
  seen: Set<object>,
): { path: string[]; problem: string } | null {
  const problem = lossOf(value);
  if (problem !== null) return { path, problem };
  if (typeof value !== "object" || value === null || seen.has(value)) return null;
  if (!Array.isArray(value) && typeof (value as { toJSON?: unknown }).toJSON === "function") return null;
  seen.add(value);
  const entries: [string, unknown][] = Array.isArray(value)
    ? value.map((item, i) => [String(i), item])
    : Object.entries(value);
  for (const [key, item] of entries) {
    const found = findLossy(item, [...path, key], seen);
    if (found !== null) return found;
  }
  return null;
}
