/**
 * Keywords a schema object holds that the conversion would otherwise drop in silence: a misspelt keyword
 * (`requried`, `maxium`, `item`), a keyword the conversion does not support at all (`not`, `if`), a
 * `required` name that is no property, an empty `enum` and OpenAPI's `nullable: true`. Each is a warning; the
 * schema still converts.
 * @module
 */
import { isJsonObject, type JsonObject, ownValue } from "../protocol/json.ts";
import type { Walk } from "./walk.ts";
import { didYouMean, nearestName } from "../protocol/edit_distance.ts";

/** Every keyword of JSON Schema (drafts 4 to 2020-12) and the annotations the conversion reads. */
const KNOWN = new Set([
  "$schema",
  "$id",
  "id",
  "$ref",
  "$defs",
  "definitions",
  "$comment",
  "$anchor",
  "$dynamicRef",
  "$dynamicAnchor",
  "$recursiveRef",
  "$recursiveAnchor",
  "$vocabulary",
  "title",
  "description",
  "default",
  "examples",
  "deprecated",
  "readOnly",
  "writeOnly",
  "type",
  "enum",
  "const",
  "properties",
  "required",
  "additionalProperties",
  "patternProperties",
  "propertyNames",
  "minProperties",
  "maxProperties",
  "dependentRequired",
  "dependentSchemas",
  "dependencies",
  "items",
  "prefixItems",
  "additionalItems",
  "unevaluatedItems",
  "unevaluatedProperties",
  "contains",
  "minContains",
  "maxContains",
  "minItems",
  "maxItems",
  "uniqueItems",
  "minimum",
  "maximum",
  "exclusiveMinimum",
  "exclusiveMaximum",
  "multipleOf",
  "minLength",
  "maxLength",
  "pattern",
  "format",
  "contentEncoding",
  "contentMediaType",
  "contentSchema",
  "allOf",
  "anyOf",
  "oneOf",
  "not",
  "if",
  "then",
  "else",
  "nullable",
]);

/** Keywords the conversion neither enforces nor describes to the model. */
const IGNORED = ["not", "if", "then", "else", "dependentSchemas", "propertyNames"];

/**
 * Warns at `path` for what `schema` holds that the conversion would drop without a word.
 *
 * @example
 * ```ts ignore
 * checkKeywords(walk, { schema: { type: "object", requried: ["a"] }, path: "#" });
 * // warning "#: unknown keyword 'requried' is ignored (did you mean 'required'?)"
 * ```
 */
export function checkKeywords(walk: Walk, at: { schema: JsonObject; path: string }): void {
  const { schema, path } = at;
  for (const key of Object.keys(schema)) {
    if (KNOWN.has(key) || key.startsWith("x-")) continue;
    const near = nearestName(key, GUESSED);
    if (near !== undefined) walk.warn(path, `unknown keyword '${key}' is ignored${didYouMean(near)}`);
  }
  for (const key of IGNORED) {
    if (Object.hasOwn(schema, key)) {
      walk.warn(
        path,
        `'${key}' is not supported and is ignored (neither enforced nor described to the model)`,
      );
    }
  }
  if (ownValue(schema, "nullable") === true) walk.warn(path, nullableWarning(ownValue(schema, "type")));
  const required = ownValue(schema, "required");
  const properties = ownValue(schema, "properties");
  if (Array.isArray(required) && isJsonObject(properties) && !Object.hasOwn(schema, "allOf")) {
    const names = Object.keys(properties);
    for (const name of required) {
      if (typeof name === "string" && !Object.hasOwn(properties, name)) {
        const list = names.length > 12 ? `${names.slice(0, 12).join(", ")}, …` : names.join(", ");
        walk.warn(path, `'required' names '${name}', which is not one of the properties (${list})`);
      }
    }
  }
  const values = ownValue(schema, "enum");
  if (Array.isArray(values) && values.length === 0) {
    walk.warn(path, "'enum' is empty, so no value could match; it is ignored");
  }
}

/**
 * The warning of OpenAPI's `nullable: true`, which JSON Schema (and so the conversion) does not read: the
 * value stays of its type, never null, on the models that follow the generation schema.
 */
function nullableWarning(type: unknown): string {
  const how = typeof type === "string" && type !== "null"
    ? `write "type": ["${type}", "null"]`
    : `give it a "null" type`;
  return `'nullable' is OpenAPI's keyword, not JSON Schema's: the on-device, scripted and llama models never ` +
    `give null here; ${how} for a value that may be null`;
}

/** The keywords long enough to guess at: `if`, `id`, `not` are too short to tell a misspelling from a name. */
const GUESSED: readonly string[] = [...KNOWN].filter((known) => known.length >= 4);
