/**
 * `object` schemas in the conversion: every object is a named type (`{"title", "type": "object",
 * "properties", "required", "x-order", "additionalProperties": false}`); properties are generated in
 * `x-order` order then declaration order, each property node carries its description, and a nullable
 * property is left out of `required`.
 * @module
 */
import { isJsonObject, type JsonObject, type JsonValue, ownValue, setOwn } from "../protocol/json.ts";
import { describe, OBJECT_DESCRIBED } from "./description.ts";
import { nonEmptyString } from "./keyword_values.ts";
import { escapePointerSegment } from "./pointer.ts";
import type { Converted, TypedSchema, Walk } from "./walk.ts";

/** Converts an `object` schema into a named type and returns the reference to it. */
export function convertObject(walk: Walk, { schema, pos, nullable, sentences }: TypedSchema): Converted {
  const slot = pos.slot!;
  const def: JsonObject = {};
  const name = walk.claim(slot, def);
  const declared = ownValue(schema, "properties");
  const props: JsonObject = isJsonObject(declared) ? declared : {};
  const keys = Object.keys(props);
  const additional = ownValue(schema, "additionalProperties");
  const misshapen = declared !== undefined && !isJsonObject(declared);
  if (misshapen) walk.warn(pos.path, propertiesProblem(declared));
  if (keys.length === 0 && additional !== false && !misshapen) {
    walk.noteFreeForm({ path: pos.path, additional: additional !== undefined, open: isOpenObject(schema) });
  }
  const description = describe(walk, { schema, path: pos.path, described: OBJECT_DESCRIBED, sentences });
  slot.description = description;

  const order = propertyOrder(schema, props);
  const requiredList = ownValue(schema, "required");
  if (requiredList !== undefined && !Array.isArray(requiredList)) {
    const example = typeof requiredList === "string" ? JSON.stringify([requiredList]) : '["name", …]';
    walk.warn(
      pos.path,
      `'required' must be a list of property names (${example}); ${compact(requiredList)} is ignored`,
    );
  }
  const required = new Set(
    Array.isArray(requiredList) ? requiredList.filter((k): k is string => typeof k === "string") : [],
  );

  const properties: JsonObject = {};
  const requiredOut: string[] = [];
  for (const key of order) {
    const sub = props[key];
    const result = walk.convert(sub, {
      path: `${pos.path}/properties/${escapePointerSegment(key)}`,
      name: `${name}_${key}`,
      depth: pos.depth + 1,
    });
    const text = result.description ?? (isJsonObject(sub) ? nonEmptyString(sub, "description") : undefined);
    if (text !== undefined) setOwn(result.node, "description", text);
    setOwn(properties, key, result.node);
    if (required.has(key) && !result.nullable) requiredOut.push(key);
    if (result.nullable) walk.noteNullable(result.node);
  }

  setOwn(def, "title", name);
  if (description !== undefined) setOwn(def, "description", description);
  setOwn(def, "type", "object");
  setOwn(def, "properties", properties);
  setOwn(def, "required", requiredOut);
  setOwn(def, "x-order", order);
  setOwn(def, "additionalProperties", false);
  if (isOpenObject(schema)) walk.noteOpenObject(name);
  return { node: walk.refNode(slot), description, nullable };
}

/** Compact JSON of a keyword's value, cut at 60 characters. */
function compact(value: JsonValue): string {
  const text = JSON.stringify(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

/** The warning of `properties` that is not an object of schemas (a list of them, say). */
function propertiesProblem(declared: JsonValue): string {
  const merged = Array.isArray(declared) && declared.every(isJsonObject)
    ? Object.assign({}, ...declared)
    : { name: { type: "string" } };
  const example = compact(merged).replaceAll('":', '": ').replaceAll(',"', ', "');
  const what = Array.isArray(declared) ? "not a list" : `not ${compact(declared)}`;
  return `'properties' must be an object of property schemas (${example}), ${what}; it is ignored, so the ` +
    "object is generated as {}";
}

/** Keywords an object may have and still take any members: its type, annotations, no properties. */
const OPEN_OBJECT_KEYWORDS = new Set([
  "type",
  "properties",
  "required",
  "additionalProperties",
  "title",
  "description",
  "$schema",
  "$id",
  "$comment",
  "examples",
  "default",
  "deprecated",
  "readOnly",
  "writeOnly",
  "x-order",
]);

/**
 * Whether an object schema takes any members: no properties, no required ones, `additionalProperties`
 * absent or `true`, and nothing else that constrains its members (`minProperties`, `patternProperties`, …).
 */
function isOpenObject(schema: JsonObject): boolean {
  if (!Object.keys(schema).every((key) => OPEN_OBJECT_KEYWORDS.has(key))) return false;
  const properties = ownValue(schema, "properties");
  if (properties !== undefined && !(isJsonObject(properties) && Object.keys(properties).length === 0)) {
    return false;
  }
  const required = ownValue(schema, "required");
  if (required !== undefined && !(Array.isArray(required) && required.length === 0)) return false;
  const additional = ownValue(schema, "additionalProperties");
  return additional === undefined || additional === true;
}

/** The declared properties in generation order: those named in `x-order` first, then the rest. */
function propertyOrder(schema: JsonObject, props: JsonObject): string[] {
  const order: string[] = [];
  const placed = new Set<string>();
  const xOrder = ownValue(schema, "x-order");
  if (Array.isArray(xOrder)) {
    for (const key of xOrder) {
      if (typeof key === "string" && Object.hasOwn(props, key) && !placed.has(key)) {
        placed.add(key);
        order.push(key);
      }
    }
  }
  for (const key of Object.keys(props)) {
    if (!placed.has(key)) {
      placed.add(key);
      order.push(key);
    }
  }
  return order;
}
