/**
 * Checks of what a script passes to the typed client that the bridge never sees (callbacks, handles,
 * signals): a wrong value is a TypeError that names it, before anything is sent, instead of a failure deep
 * inside the client or a silent no-op.
 * @module
 */
import { truncateText } from "../util/text.ts";

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
  return truncateText(text, SHOWN);
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
 * word), a `Map` or a `Set` (JSON writes each as `{}`, its entries lost), or a BigInt (which JSON cannot write:
 * the encoder's own error names neither the call nor the path). `where` names the call
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
  const found = lossyJsonAt(value);
  if (found === null) return null;
  const owner = what.endsWith("s") ? `the ${what}'` : `the ${what}'s`;
  const subject = found.path.length === 0 ? `the ${what}` : `${owner} '${found.path.join(".")}'`;
  return new TypeError(`${where}: ${subject} is ${lossOf(found.lossy)}.`);
}

/**
 * {@link lossyJsonProblem} for each member of a call's params, each named by its key: `npc.talk(): the
 * context's 'player.hp' is NaN, …`, `bridge.decide(): the temperature is Infinity, …`. Strings, booleans and
 * finite numbers cost one `typeof`: only objects are walked.
 *
 * @example
 * ```ts
 * import { paramsLossProblem } from "./checks.ts";
 * paramsLossProblem({ npc: "gorm", line: "Hi.", context: { hp: 3 } }, "npc.talk()"); // null
 * paramsLossProblem({ npc: "gorm", context: { hp: NaN } }, "npc.talk()")?.message;
 * // "npc.talk(): the context's 'hp' is NaN, which JSON sends as null; pass a finite number (or null)."
 * ```
 */
export function paramsLossProblem(params: object, where: string): TypeError | null {
  const members = params as Record<string, unknown>;
  for (const key of Object.keys(members)) {
    const value = members[key];
    if (
      typeof value === "object"
        ? value === null
        : typeof value !== "bigint" && (typeof value !== "number" || Number.isFinite(value))
    ) {
      continue;
    }
    const problem = lossyJsonProblem(value, { where, what: key });
    if (problem !== null) return problem;
  }
  return null;
}

/**
 * Throws the TypeError of {@link paramsLossProblem}, if any: what JSON would change in a call's params.
 *
 * @example
 * ```ts
 * import { throwIfLossy } from "./checks.ts";
 * throwIfLossy({ npc: "gorm", situation: "Rain." }, "npc.bark()"); // fine
 * try {
 *   throwIfLossy({ npc: "gorm", memory: { relationship: Infinity } }, "npc.update()");
 * } catch (error) {
 *   (error as Error).message; // "npc.update(): the memory's 'relationship' is Infinity, which JSON sends as null; …"
 * }
 * ```
 */
export function throwIfLossy(params: object, where: string): void {
  const problem = paramsLossProblem(params, where);
  if (problem !== null) throw problem;
}

/**
 * Where JSON would first change `value` (depth first, as `JSON.stringify` walks it), or null: the path
 * (array indexes as numbers) and the value there, a non-finite number, a BigInt, a `Map` or a `Set`. Plain arrays
 * and objects are walked; cycles and objects with a `toJSON` (a `Date`) are skipped. Nothing is allocated
 * for a value without a problem but the set of objects seen.
 *
 * @example
 * ```ts
 * import { lossyJsonAt } from "./checks.ts";
 * lossyJsonAt({ party: [{ hp: 3 }] }); // null
 * lossyJsonAt({ party: [{ hp: 3 }, { tags: new Set() }] })?.path; // ["party", 1, "tags"]
 * ```
 */
export function lossyJsonAt(
  value: unknown,
): { path: (string | number)[]; lossy: Lossy } | null {
  if (typeof value === "number") return Number.isFinite(value) ? null : { path: [], lossy: value };
  if (typeof value === "bigint") return { path: [], lossy: value };
  if (typeof value !== "object" || value === null) return null;
  const path: (string | number)[] = [];
  const lossy = walk(value, path, new Set());
  return lossy === null ? null : { path, lossy };
}

/** What JSON would change or refuse: a non-finite number, a BigInt, a Map or a Set. */
type Lossy = number | bigint | Map<unknown, unknown> | Set<unknown>;

/** What JSON would change in `value` (a non-finite number, a Map or a Set) or refuse (a BigInt), for a TypeError. */
function lossOf(value: Lossy): string {
  if (typeof value === "bigint") {
    const digits = String(value);
    const shownDigits = digits.length > 40 ? `${digits.slice(0, 37)}...` : digits;
    return `a BigInt (${shownDigits}n), which JSON cannot send; pass a number (Number(n)) or a string (String(n))`;
  }
  if (value instanceof Map) return "a Map, which JSON sends as {}; pass an object (Object.fromEntries(map))";
  if (value instanceof Set) return "a Set, which JSON sends as {}; pass an array ([...set])";
  return `${value}, which JSON sends as null; pass a finite number (or null)`;
}

/**
 * The first lossy value in `value` (see {@link lossyJsonAt}), or null; `path` ends up holding its path (keys
 * are pushed on the way down and popped on the way back, so a clean value leaves it empty).
 */
function walk(
  value: unknown,
  path: (string | number)[],
  seen: Set<object>,
): Lossy | null {
  if (typeof value === "number") return Number.isFinite(value) ? null : value;
  if (typeof value === "bigint") return value;
  if (typeof value !== "object" || value === null) return null;
  if (value instanceof Map || value instanceof Set) return value;
  if (seen.has(value)) return null;
  if (Array.isArray(value)) {
    seen.add(value);
    for (let i = 0; i < value.length; i++) {
      const found = walkMember(value[i], i, path, seen);
      if (found !== null) return found;
    }
    return null;
  }
  if (typeof (value as { toJSON?: unknown }).toJSON === "function") return null; // JSON writes what it returns
  seen.add(value);
  const members = value as Record<string, unknown>;
  for (const key of Object.keys(members)) {
    const found = walkMember(members[key], key, path, seen);
    if (found !== null) return found;
  }
  return null;
}

/** {@link walk} of one member `key` of an array or object: only numbers and objects can be lossy. */
function walkMember(
  item: unknown,
  key: string | number,
  path: (string | number)[],
  seen: Set<object>,
): Lossy | null {
  if (typeof item !== "object" && typeof item !== "number" && typeof item !== "bigint") return null;
  path.push(key);
  const found = walk(item, path, seen);
  if (found === null) path.pop();
  return found;
}

/**
 * A TypeError when `value`, given where an id goes (`bridge.npc(id)`), is not a string, saying what it got
 * and what to pass: a handle (use it itself), a persona (ids are not names: create the NPC), anything else.
 *
 * @example
 * ```ts
 * import { idProblem } from "./checks.ts";
 * const npc = { where: "bridge.npc()", noun: "NPC", example: "bram" };
 * idProblem("bram", npc); // null
 * idProblem({ name: "Bram" }, npc)?.message;
 * // "bridge.npc() takes an NPC's id (a string such as \"bram\"); got a persona ({\"name\":\"Bram\"}): …"
 * ```
 */
export function idProblem(
  value: unknown,
  { where, noun, example }: { where: string; noun: string; example: string },
): TypeError | null {
  if (typeof value === "string") return null;
  const article = /^[aeiouAEIOU]|^NPC/.test(noun) ? "an" : "a";
  const takes = `${where} takes ${article} ${noun}'s id (a string such as "${example}"); got`;
  const object = typeof value === "object" && value !== null ? value as Record<string, unknown> : null;
  if (object !== null && typeof object.id === "string" && object.constructor !== Object) {
    return new TypeError(`${takes} the handle of ${noun} '${object.id}': use the handle itself.`);
  }
  if (object !== null && noun === "NPC" && typeof object.name === "string") {
    return new TypeError(
      `${takes} a persona (${
        shown(value)
      }): create the NPC with bridge.createNpc(persona) and use the handle ` +
        "it returns.",
    );
  }
  return new TypeError(`${takes} ${shown(value)}.`);
}
