/**
 * Draft-4 exclusive bounds in the numeric form later drafts use. In draft 4 (and OpenAPI 3.0),
 * `exclusiveMinimum: true` makes `minimum` exclusive; from draft 6 on `exclusiveMinimum` is the exclusive
 * bound itself and a boolean there makes the schema invalid. The conversion reads both forms; a validator
 * that checks schemas against the draft-7 meta-schema (the llama and OpenAI-compatible backends') needs the
 * numeric one.
 * @module
 */
import { isJsonObject, type JsonObject, type JsonValue } from "../protocol/json.ts";

/** Keywords whose value is one subschema, or (`items`) an array of them. */
const ONE_SCHEMA = [
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
];
/** Keywords whose value is an array of subschemas. */
const SCHEMA_LISTS = ["anyOf", "oneOf", "allOf", "prefixItems"];
/** Keywords whose value maps names to subschemas. */
const SCHEMA_MAPS = ["properties", "patternProperties", "$defs", "definitions", "dependentSchemas"];

/**
 * Rewrites `schema` and its subschemas in place: `minimum: m, exclusiveMinimum: true` becomes
 * `exclusiveMinimum: m` (likewise for the maximum); `exclusiveMinimum: false` is dropped. Values (`const`,
 * `enum`, `default`, `examples`) are left as they are. Give it a copy of a client's schema.
 *
 * @example
 * ```ts
 * import { numericExclusiveBounds } from "./draft4_bounds.ts";
 * const schema = { type: "number", minimum: 0, exclusiveMinimum: true, maximum: 1 };
 * numericExclusiveBounds(schema); // schema is now { type: "number", maximum: 1, exclusiveMinimum: 0 }
 * ```
 */
export function numericExclusiveBounds(schema: JsonObject, depth = 0): void {
  // Deeper than any schema the conversion accepts (it refuses them with its own error).
  if (depth > 64) return;
  rewriteBound(schema, "minimum", "exclusiveMinimum");
  rewriteBound(schema, "maximum", "exclusiveMaximum");
  for (const key of ONE_SCHEMA) {
    const value = own(schema, key);
    if (Array.isArray(value)) value.forEach((item) => visit(item, depth));
    else visit(value, depth);
  }
  for (const key of SCHEMA_LISTS) {
    const value = own(schema, key);
    if (Array.isArray(value)) value.forEach((item) => visit(item, depth));
  }
  for (const key of SCHEMA_MAPS) {
    const value = own(schema, key);
    if (isJsonObject(value)) Object.values(value).forEach((item) => visit(item, depth));
  }
}

function visit(value: JsonValue | undefined, depth: number): void {
  if (isJsonObject(value)) numericExclusiveBounds(value, depth + 1);
}

function own(schema: JsonObject, key: string): JsonValue | undefined {
  return Object.hasOwn(schema, key) ? schema[key] : undefined;
}

function rewriteBound(schema: JsonObject, bound: string, exclusive: string): void {
  const flag = own(schema, exclusive);
  if (typeof flag !== "boolean") return;
  delete schema[exclusive];
  const value = own(schema, bound);
  if (flag && typeof value === "number") {
    delete schema[bound];
    schema[exclusive] = value;
  }
}
