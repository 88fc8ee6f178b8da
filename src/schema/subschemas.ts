/**
 * Where a JSON Schema holds other schemas: the keywords whose value is one subschema, a list of them, or a map
 * of names to them. Everything else (`const`, `enum`, `default`, `examples`, unknown keywords) is a value,
 * never a schema, even when it looks like one.
 * @module
 */
import { isJsonObject, type JsonObject, type JsonValue } from "../protocol/json.ts";

/** Keywords whose value is one schema. */
export const ONE_SCHEMA: ReadonlySet<string> = new Set([
  "items",
  "additionalItems",
  "additionalProperties",
  "unevaluatedItems",
  "unevaluatedProperties",
  "contains",
  "propertyNames",
  "not",
  "if",
  "then",
  "else",
]);
/** Keywords whose value is a list of schemas (`items` in its draft-4 tuple form too). */
export const SCHEMA_LIST: ReadonlySet<string> = new Set(["allOf", "anyOf", "oneOf", "prefixItems", "items"]);
/** Keywords whose value maps names to schemas. */
export const SCHEMA_MAP: ReadonlySet<string> = new Set([
  "properties",
  "patternProperties",
  "dependentSchemas",
  "$defs",
  "definitions",
]);

/**
 * Calls `visit` with each direct subschema of `schema` that is an object (own keywords only).
 *
 * @example
 * ```ts
 * import { forEachSubschema } from "./subschemas.ts";
 * const seen: unknown[] = [];
 * forEachSubschema({ properties: { a: { type: "string" } }, const: { type: "x" } }, (s) => seen.push(s));
 * // seen: [{ type: "string" }] (a const is a value, not a schema)
 * ```
 */
export function forEachSubschema(schema: JsonObject, visit: (subschema: JsonObject) => void): void {
  const each = (value: JsonValue) => {
    if (isJsonObject(value)) visit(value);
  };
  for (const key of Object.keys(schema)) {
    const value = schema[key];
    if (Array.isArray(value)) {
      if (SCHEMA_LIST.has(key)) value.forEach(each);
    } else if (ONE_SCHEMA.has(key)) each(value);
    else if (SCHEMA_MAP.has(key) && isJsonObject(value)) Object.values(value).forEach(each);
  }
}
