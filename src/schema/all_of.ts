/**
 * `allOf` in the conversion: the parts (following `$ref` parts and nested `allOf`) are merged into one
 * schema object, which is then converted like any other. Properties and `required` are united; for every
 * other keyword the first part that has it wins.
 * @module
 */
import { isJsonObject, type JsonObject, type JsonValue, ownValue, setOwn } from "../protocol/json.ts";
import { unique } from "./keyword_values.ts";
import { resolveRef } from "./refs.ts";
import { notASchema, SchemaError } from "./schema_error.ts";
import { DEPTH_MESSAGE, MAX_DEPTH, type SchemaAt, type Walk } from "./walk.ts";

/** Merges `allOf` parts (resolving `$ref` parts and nested `allOf`) into one schema object. */
export function mergeAllOf(walk: Walk, { schema, pos }: SchemaAt): JsonObject {
  const merged: JsonObject = {};
  const properties: JsonObject = {};
  let hasProperties = false;
  const required: string[] = [];
  const visited = new Set<JsonObject>();

  const absorb = (part: JsonObject): void => {
    for (const key of Object.keys(part)) {
      const value = part[key];
      if (key === "allOf" || key === "$ref") continue;
      if (key === "properties") {
        if (!isJsonObject(value)) continue;
        hasProperties = true;
        for (const name of Object.keys(value)) {
          if (!Object.hasOwn(properties, name)) setOwn(properties, name, value[name]);
        }
      } else if (key === "required") {
        if (Array.isArray(value)) {
          for (const name of value) if (typeof name === "string") required.push(name);
        }
      } else if (!Object.hasOwn(merged, key)) {
        setOwn(merged, key, value);
      }
    }
  };

  const visit = (part: JsonValue, path: string, depth: number): void => {
    if (depth > MAX_DEPTH) throw new SchemaError(DEPTH_MESSAGE, path);
    walk.countNode(path);
    if (part === true) return;
    if (!isJsonObject(part)) throw notASchema(part, path);
    // Each schema object is merged once: `A and A` is `A`, and it keeps cycles and diamonds finite.
    if (visited.has(part)) return;
    visited.add(part);
    absorb(part);
    if (Object.hasOwn(part, "$ref")) {
      const ref = part.$ref;
      visit(resolveRef(walk, { ref, path }), ref as string, depth + 1);
    }
    const parts = ownValue(part, "allOf");
    if (Array.isArray(parts)) {
      parts.forEach((sub, index) => visit(sub, `${path}/allOf/${index}`, depth + 1));
    }
  };

  visit(schema, pos.path, pos.depth);
  if (hasProperties) setOwn(merged, "properties", properties);
  if (required.length > 0) setOwn(merged, "required", unique(required));
  return merged;
}
