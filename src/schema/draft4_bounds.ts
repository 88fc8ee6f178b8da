/**
 * Draft-4 exclusive bounds in the numeric form later drafts use. In draft 4 (and OpenAPI 3.0),
 * `exclusiveMinimum: true` makes `minimum` exclusive; from draft 6 on `exclusiveMinimum` is the exclusive
 * bound itself and a boolean there makes the schema invalid. The conversion reads both forms; a validator
 * that checks schemas against the draft-7 meta-schema (the llama and OpenAI-compatible backends') needs the
 * numeric one.
 * @module
 */
import { type JsonObject, ownValue } from "../protocol/json.ts";
import { forEachSubschema } from "./subschemas.ts";

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
  forEachSubschema(schema, (subschema) => numericExclusiveBounds(subschema, depth + 1));
}

function rewriteBound(schema: JsonObject, bound: string, exclusive: string): void {
  const flag = ownValue(schema, exclusive);
  if (typeof flag !== "boolean") return;
  delete schema[exclusive];
  const value = ownValue(schema, bound);
  if (flag && typeof value === "number") {
    delete schema[bound];
    schema[exclusive] = value;
  }
}
