/**
 * Reorders structured output by its JSON Schema (reference §2.8 "Output ordering"): object keys follow the
 * schema's `x-order`, else its property order, recursively; unknown keys are appended in their original
 * order. Local `$ref`s and `allOf` parts are followed; for `anyOf`/`oneOf` the branch whose properties best
 * overlap the value's keys is used. Keys are read with own-property checks only and written as own data
 * properties, so `__proto__` and friends stay plain data.
 * @module
 */
import { isJsonObject, type JsonObject, type JsonValue, ownValue, setOwn } from "../protocol/json.ts";
import { resolveLocalRef } from "./pointer.ts";

/** Values nested deeper than this are returned unchanged (the model cannot produce them anyway). */
const MAX_VALUE_DEPTH = 256;
/** Bound on the schema objects merged into one view (`$ref` chains, `allOf` parts). */
const MAX_VIEW_PARTS = 256;

/** What matters about a schema node for ordering, after following `$ref` and `allOf`. */
interface SchemaView {
  properties: Map<string, JsonValue>;
  order: string[];
  items?: JsonValue;
  prefixItems?: JsonValue[];
  branches?: JsonValue[];
}

/**
 * Returns `value` with object keys in schema order (a new value; the input is not modified).
 *
 * @param value structured output
 * @param schema the original JSON Schema it was generated from (its root resolves local `$ref`s)
 *
 * @example
 * ```ts
 * orderBySchema({ b: 1, a: 2, z: 3 }, { type: "object", properties: { a: {}, b: {} } });
 * // { a: 2, b: 1, z: 3 }
 * ```
 */
export function orderBySchema(value: JsonValue, schema: JsonObject): JsonValue {
  return orderValue(value, schema, schema, 0);
}

function orderValue(
  value: JsonValue,
  schema: JsonValue | undefined,
  root: JsonObject,
  depth: number,
): JsonValue {
  if (depth > MAX_VALUE_DEPTH || schema === undefined) return value;
  if (Array.isArray(value)) {
    const view = viewOf(schema, root);
    if (view.items === undefined && view.prefixItems === undefined && view.branches !== undefined) {
      const branch = view.branches.find((b) => {
        const v = viewOf(b, root);
        return v.items !== undefined || v.prefixItems !== undefined || v.branches !== undefined;
      });
      return orderValue(value, branch, root, depth + 1);
    }
    return value.map((item, index) =>
      orderValue(item, view.prefixItems?.[index] ?? view.items, root, depth + 1)
    );
  }
  if (!isJsonObject(value)) return value;
  const view = viewOf(schema, root);
  if (view.properties.size === 0) {
    if (view.branches === undefined) return value;
    return orderValue(value, bestBranch(value, view.branches, root), root, depth + 1);
  }
  const out: JsonObject = {};
  for (const key of view.order) {
    if (Object.hasOwn(value, key)) {
      setOwn(out, key, orderValue(value[key], view.properties.get(key), root, depth + 1));
    }
  }
  for (const key of Object.keys(value)) {
    if (!view.properties.has(key)) setOwn(out, key, value[key]);
  }
  return out;
}

/** How {@link orderBySchema} orders the members of a schema node (after `$ref` and `allOf`). */
export interface SchemaOrder {
  /** Property names in output order (`x-order`, then the properties' order); other keys follow. */
  order: string[];
  /** The subschema of each property. */
  properties: Map<string, JsonValue>;
  /** Array items (`items`, or the tuple's `prefixItems`). */
  items?: JsonValue;
  prefixItems?: JsonValue[];
  /** `anyOf`/`oneOf` branches: the order then depends on which branch a value matches best. */
  branches?: JsonValue[];
}

/**
 * The ordering view of `schema` inside the document `root` (its root resolves local `$ref`s).
 *
 * @example
 * ```ts
 * schemaOrder({ type: "object", properties: { b: {}, a: {} }, "x-order": ["a", "b"] }, {}).order; // ["a", "b"]
 * ```
 */
export function schemaOrder(schema: JsonValue, root: JsonObject): SchemaOrder {
  return viewOf(schema, root);
}

/** The branch whose properties contain most of the value's keys (first wins ties). */
function bestBranch(value: JsonObject, branches: JsonValue[], root: JsonObject): JsonValue | undefined {
  const keys = Object.keys(value);
  let best: JsonValue | undefined;
  let bestScore = -1;
  for (const branch of branches) {
    const view = viewOf(branch, root);
    if (view.properties.size === 0 && view.branches === undefined) continue;
    const score = keys.filter((key) => view.properties.has(key)).length;
    if (score > bestScore) {
      best = branch;
      bestScore = score;
    }
  }
  return best;
}

/** Collects properties, order, items and branches of a schema node across `$ref` and `allOf`. */
function viewOf(schema: JsonValue, root: JsonObject): SchemaView {
  const view: SchemaView = { properties: new Map(), order: [] };
  let xOrder: JsonValue[] | undefined;
  const propertyOrder: string[] = [];
  const visited = new Set<JsonObject>();
  const stack: JsonValue[] = [schema];
  while (stack.length > 0 && visited.size < MAX_VIEW_PARTS) {
    const node = stack.pop()!;
    if (!isJsonObject(node) || visited.has(node)) continue;
    visited.add(node);
    const properties = ownValue(node, "properties");
    if (isJsonObject(properties)) {
      for (const key of Object.keys(properties)) {
        if (!view.properties.has(key)) {
          view.properties.set(key, properties[key]);
          propertyOrder.push(key);
        }
      }
    }
    const order = ownValue(node, "x-order");
    if (xOrder === undefined && Array.isArray(order)) xOrder = order;
    const items = ownValue(node, "items");
    if (view.items === undefined && (isJsonObject(items) || typeof items === "boolean")) view.items = items;
    const prefixItems = ownValue(node, "prefixItems") ?? (Array.isArray(items) ? items : undefined);
    if (view.prefixItems === undefined && Array.isArray(prefixItems)) view.prefixItems = prefixItems;
    const branches = ownValue(node, "anyOf") ?? ownValue(node, "oneOf");
    if (view.branches === undefined && Array.isArray(branches)) view.branches = branches;
    // Push in reverse so the outer node, then `$ref`, then `allOf` parts are visited in document order.
    const parts = ownValue(node, "allOf");
    if (Array.isArray(parts)) { for (let i = parts.length - 1; i >= 0; i--) stack.push(parts[i]); }
    const ref = ownValue(node, "$ref");
    if (typeof ref === "string") {
      const resolution = resolveLocalRef(root, ref);
      if (resolution.ok) stack.push(resolution.target);
    }
  }
  const placed = new Set<string>();
  for (const key of xOrder ?? []) {
    if (typeof key === "string" && view.properties.has(key) && !placed.has(key)) {
      placed.add(key);
      view.order.push(key);
    }
  }
  for (const key of propertyOrder) {
    if (!placed.has(key)) {
      placed.add(key);
      view.order.push(key);
    }
  }
  return view;
}
