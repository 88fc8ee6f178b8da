/**
 * RFC 7386 JSON merge patch that is safe for client-controlled keys: every key (including `__proto__`,
 * `constructor` and `prototype`) is read with `Object.hasOwn` and written as an own data property, so a
 * patch can never reach `Object.prototype`.
 * @module
 */
import { cloneJson, isJsonObject, type JsonObject, type JsonValue, setOwn } from "../../protocol/json.ts";

/**
 * Applies `patch` to `target` and returns the result; neither input is modified. An object patch merges
 * member by member (`null` deletes a member); any other patch replaces the target.
 *
 * @example
 * ```ts
 * mergePatch({ a: 1, b: { c: 2 } }, { b: { c: null, d: 3 } }); // { a: 1, b: { d: 3 } }
 * ```
 */
export function mergePatch(target: JsonValue | undefined, patch: JsonValue): JsonValue {
  if (!isJsonObject(patch)) return cloneJson(patch);
  const out: JsonObject = isJsonObject(target) ? cloneJson(target) : {};
  for (const key of Object.keys(patch)) {
    const value = patch[key];
    if (value === null) {
      if (Object.hasOwn(out, key)) delete out[key];
      continue;
    }
    const current = Object.hasOwn(out, key) ? out[key] : undefined;
    setOwn(out, key, mergePatch(current, value));
  }
  return out;
}
