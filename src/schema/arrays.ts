/**
 * `array` schemas in the conversion: the item schema (`items`, or the first tuple item of `prefixItems` or
 * draft 4's `items` array, with a warning) is converted under the array's type name, its description is
 * lifted into the array's as "Each item: …", and `minItems`/`maxItems` become a whole, non-empty range.
 * @module
 */
import { isJsonObject, type JsonObject, type JsonValue, ownValue } from "../protocol/json.ts";
import { ARRAY_DESCRIBED, describe } from "./description.ts";
import { clampInteger, isFiniteNumber } from "./keyword_values.ts";
import { notASchema } from "./schema_error.ts";
import type { Converted, TypedSchema, Walk } from "./walk.ts";

const TUPLE_WARNING = "tuple arrays (prefixItems) are generated as arrays of the first item type";

/** Converts an `array` schema. */
export function convertArray(walk: Walk, { schema, pos, nullable, sentences }: TypedSchema): Converted {
  const items = ownValue(schema, "items");
  const prefixItems = ownValue(schema, "prefixItems");
  let itemSchema: JsonValue | undefined;
  let itemPath = `${pos.path}/items`;
  if (isJsonObject(items) || items === true) {
    itemSchema = items;
  } else if (Array.isArray(prefixItems) && prefixItems.length > 0) {
    walk.warn(pos.path, TUPLE_WARNING);
    itemSchema = prefixItems[0];
    itemPath = `${pos.path}/prefixItems/0`;
  } else if (Array.isArray(items) && items.length > 0) {
    // Draft 4–2019 tuple form.
    walk.warn(pos.path, TUPLE_WARNING);
    itemSchema = items[0];
    itemPath = `${pos.path}/items/0`;
  } else if (items !== undefined && items !== false && !Array.isArray(items)) {
    throw notASchema(items, itemPath);
  } else {
    walk.warn(pos.path, "array without 'items' is generated as an array of strings");
  }
  let item: Converted = { node: { type: "string" }, nullable: false };
  if (itemSchema !== undefined) {
    // Items take the array's type name (`Root_cats` for the elements of property `cats`).
    const name = pos.slot?.isRoot ? `${pos.name}_item` : pos.name;
    item = walk.convert(itemSchema, { path: itemPath, name, depth: pos.depth + 1 });
    if (item.nullable) walk.noteNullable(item.node);
  }
  const extra = [...sentences];
  if (item.description !== undefined) extra.push(`Each item: ${item.description}`);
  const description = describe(walk, {
    schema,
    path: pos.path,
    described: ARRAY_DESCRIBED,
    sentences: extra,
  });
  const node: JsonObject = { type: "array", items: item.node };
  const minItems = ownValue(schema, "minItems");
  const maxItems = ownValue(schema, "maxItems");
  let low = isFiniteNumber(minItems) ? clampInteger(Math.max(0, Math.ceil(minItems))) : undefined;
  let high = isFiniteNumber(maxItems) ? clampInteger(Math.max(0, Math.floor(maxItems))) : undefined;
  if (low !== undefined && high !== undefined && low > high) {
    walk.warn(pos.path, "empty item count range is ignored");
    low = high = undefined;
  }
  if (low !== undefined) node.minItems = low;
  if (high !== undefined) node.maxItems = high;
  return { node, description, nullable };
}
