/**
 * JSON value types used across the bridge. Objects that come from clients may carry any key, including
 * `__proto__`; code that indexes by client keys must use `Object.hasOwn` or a `Map`.
 * @module
 */

/**
 * Any JSON value.
 *
 * @example
 * ```ts
 * import { type JsonValue } from "@open-apple-models/bridge";
 * const loot: JsonValue = { name: "Ruby", gold: 12, tags: ["gem"], cursed: false, owner: null };
 * ```
 */
export type JsonValue = null | boolean | number | string | JsonValue[] | JsonObject;

/**
 * A JSON object.
 *
 * @example
 * ```ts
 * import { type JsonObject } from "@open-apple-models/bridge";
 * const state: JsonObject = { player: { gold: 60 } };
 * ```
 */
export interface JsonObject {
  /** Any member. */
  [key: string]: JsonValue;
}

/** True when `value` is a plain JSON object (not an array, not null). */
export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Compact JSON text of a value (`JSON.stringify` without spaces; `undefined` becomes `null`). */
export function compactJson(value: unknown): string {
  return JSON.stringify(value) ?? "null";
}

/** Own-property lookup that never walks the prototype chain (safe for client-controlled keys). */
export function ownValue(object: JsonObject, key: string): JsonValue | undefined {
  return Object.hasOwn(object, key) ? object[key] : undefined;
}

/** {@link ownValue} with `null` counting as absent (the bridge's rule for optional members). */
export function presentValue(object: JsonObject, key: string): JsonValue | undefined {
  const value = ownValue(object, key);
  return value === null ? undefined : value;
}

/** Deep copy of a JSON value that defines every key as an own data property (safe for `__proto__`). */
export function cloneJson<T extends JsonValue>(value: T): T {
  if (Array.isArray(value)) return value.map((v) => cloneJson(v)) as T;
  if (isJsonObject(value)) {
    const out: JsonObject = {};
    for (const key of Object.keys(value)) {
      Object.defineProperty(out, key, {
        value: cloneJson(value[key]),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return out as T;
  }
  return value;
}

/** Sets `object[key] = value` as an own data property, even for `__proto__`. */
export function setOwn(object: JsonObject, key: string, value: JsonValue): void {
  if (key === "__proto__") {
    Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true });
  } else {
    object[key] = value;
  }
}

/** Structural equality of two JSON values (key order ignored). */
export function jsonEqual(a: JsonValue | undefined, b: JsonValue | undefined): boolean {
  if (a === b) return true;
  if (a === undefined || b === undefined || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    return a.every((v, i) => jsonEqual(v, b[i]));
  }
  if (isJsonObject(a)) {
    if (!isJsonObject(b)) return false;
    const ka = Object.keys(a);
    if (ka.length !== Object.keys(b).length) return false;
    return ka.every((k) => Object.hasOwn(b, k) && jsonEqual(a[k], b[k]));
  }
  return false;
}
