/**
 * Value helpers of the world domain: validated deep copies into prototype-free storage, read-only value
 * types, type phrases used in messages, and text truncation.
 * @module
 */

import { type JsonObject, type JsonValue, setOwn } from "../../protocol/json.ts";
import { WorldError } from "./world_error.ts";

/**
 * Deepest allowed nesting of containers in a world, the root object included: a value written at a path of
 * `k` segments may itself nest at most `64 - k` containers (`{}` and `[]` count one level each; scalars none).
 */
export const MAX_WORLD_DEPTH = 64;

/**
 * A JSON value that must not be modified (what {@link WorldState.peek} hands out).
 *
 * @example
 * ```ts
 * import { type ReadonlyJsonValue, WorldState } from "@open-apple-models/bridge/engine";
 * const world = new WorldState({ player: { gold: 60 } });
 * const gold: ReadonlyJsonValue | undefined = world.peek("player.gold"); // 60, no copy made
 * ```
 */
export type ReadonlyJsonValue =
  | null
  | boolean
  | number
  | string
  | readonly ReadonlyJsonValue[]
  | ReadonlyJsonObject;

/**
 * A JSON object that must not be modified.
 *
 * @example
 * ```ts
 * import type { ReadonlyJsonObject } from "@open-apple-models/bridge/engine";
 * const total = (purse: ReadonlyJsonObject) =>
 *   Object.values(purse).reduce<number>((sum, coins) => sum + Number(coins), 0);
 * total({ gold: 3, silver: 4 }); // 7
 * ```
 */
export interface ReadonlyJsonObject {
  /** A member. */
  readonly [key: string]: ReadonlyJsonValue;
}

/** True for a JSON object (not an array, not null). Works for null-prototype objects too. */
export function isObjectValue(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Own-key lookup that never reaches a prototype (`undefined` when the key is absent). */
export function ownChild(object: ReadonlyJsonObject, key: string): ReadonlyJsonValue | undefined {
  return Object.hasOwn(object, key) ? object[key] : undefined;
}

/** A new object without a prototype (storage for world objects). */
export function emptyStore(): JsonObject {
  return Object.create(null) as JsonObject;
}

/** The phrase used for a scalar's type in messages: "a number", "a string", "a boolean" or "null". */
export function scalarTypePhrase(value: ReadonlyJsonValue): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "a list";
  switch (typeof value) {
    case "number":
      return "a number";
    case "string":
      return "a string";
    case "boolean":
      return "a boolean";
    default:
      return "an object";
  }
}

/** `count` and the noun, singular for 1: `counted(1, "item")` is `"1 item"`, `counted(2, "item")` `"2 items"`. */
export function counted(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? "" : "s"}`;
}

/**
 * Validates `value` as JSON nested at most `limits.levels` containers deep and returns a deep copy whose objects
 * have no prototype. Recursion stops at the limit, so hostile depth cannot exhaust the stack.
 *
 * `limits.path` is the canonical path used in error messages.
 * @throws {WorldError} when the value is not JSON (undefined, functions, non-finite numbers, class
 *   instances, sparse arrays) or nests too deeply.
 */
export function importValue(value: unknown, limits: { levels: number; path: string }): JsonValue {
  return copyIn(value, limits.levels, limits.path);
}

/** {@link importValue}'s recursion (positional: it runs once per stored node). */
function copyIn(value: unknown, levels: number, path: string): JsonValue {
  if (levels < 0) throw tooDeep(path);
  if (value === null || typeof value === "string" || typeof value === "boolean") return value;
  if (typeof value === "number") {
    if (!Number.isFinite(value)) throw notJson(path);
    return value;
  }
  if (typeof value !== "object") throw notJson(path);
  if (levels < 1) throw tooDeep(path);
  if (Array.isArray(value)) {
    const out: JsonValue[] = [];
    for (let i = 0; i < value.length; i++) {
      if (!(i in value)) throw notJson(path);
      out.push(copyIn(value[i], levels - 1, path));
    }
    return out;
  }
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) throw notJson(path);
  const out = emptyStore();
  const source = value as Record<string, unknown>;
  for (const key of Object.keys(source)) {
    setOwn(out, key, copyIn(source[key], levels - 1, path));
  }
  return out;
}

/** Deep copy of a stored value as plain JSON (plain objects; every key an own data property). */
export function exportValue(value: ReadonlyJsonValue): JsonValue {
  if (Array.isArray(value)) return value.map((item: ReadonlyJsonValue) => exportValue(item));
  if (isObjectValue(value)) {
    const out: JsonObject = {};
    for (const key of Object.keys(value)) setOwn(out, key, exportValue(value[key]));
    return out;
  }
  return value as JsonValue;
}

/** Copy of a stored merge-patch object with every `null` member removed (RFC 7386 applied to `{}`). */
export function stripNulls(patch: ReadonlyJsonObject): JsonObject {
  const out = emptyStore();
  for (const key of Object.keys(patch)) {
    const value = patch[key];
    if (value === null) continue;
    setOwn(out, key, isObjectValue(value) ? stripNulls(value) : (value as JsonValue));
  }
  return out;
}

function tooDeep(path: string): WorldError {
  return new WorldError(
    `The value for '${path}' is nested too deeply (a world nests at most ${MAX_WORLD_DEPTH} levels).`,
    path,
  );
}

function notJson(path: string): WorldError {
  return new WorldError(`The value for '${path}' is not valid JSON.`, path);
}
