/**
 * Re-orders the keys of a JSON value to follow a JSON Schema's property order (local `$ref`s into
 * `$defs`/`definitions`, `allOf`, `anyOf`/`oneOf`, `items`/`prefixItems`). Keys the schema does not name
 * keep their relative order after the named ones. Used until the shared `src/schema/order.ts` exists.
 * @module
 */
import { isJsonObject, type JsonObject, type JsonValue, ownValue, setOwn } from "../protocol/json.ts";

const MAX_DEPTH = 64;

function resolve(schema: JsonValue | undefined, root: JsonObject): JsonObject | null {
  let node = schema;
  for (let hops = 0; hops < 16 && isJsonObject(node); hops++) {
    const ref = ownValue(node, "$ref");
    if (typeof ref !== "string" || !ref.startsWith("#")) return node;
    node = pointer(root, ref.slice(1));
  }
  return isJsonObject(node) ? node : null;
}

function pointer(root: JsonObject, path: string): JsonValue | undefined {
  if (path === "") return root;
  if (!path.startsWith("/")) return undefined;
  let node: JsonValue | undefined = root;
  for (const raw of path.slice(1).split("/")) {
    const key = decodeURIComponent(raw).replace(/~1/g, "/").replace(/~0/g, "~");
    if (Array.isArray(node)) node = node[Number(key)];
    else if (isJsonObject(node)) node = ownValue(node, key);
    else return undefined;
  }
  return node;
}

/** The property subschemas an object value would be checked against, in document order. */
function propertyOrder(
  value: JsonObject,
  schema: JsonObject,
  root: JsonObject,
  depth: number,
): Map<string, JsonValue> {
  const order = new Map<string, JsonValue>();
  const visit = (node: JsonValue | undefined, level: number) => {
    const s = resolve(node, root);
    if (s === null || level > MAX_DEPTH) return;
    const props = ownValue(s, "properties");
    if (isJsonObject(props)) {
      for (const key of Object.keys(props)) if (!order.has(key)) order.set(key, props[key]);
    }
    const allOf = ownValue(s, "allOf");
    if (Array.isArray(allOf)) { for (const branch of allOf) visit(branch, level + 1); }
    for (const keyword of ["anyOf", "oneOf"]) {
      const branches = ownValue(s, keyword);
      if (Array.isArray(branches)) {
        const chosen = chooseObjectBranch(value, branches, root);
        if (chosen !== undefined) visit(chosen, level + 1);
      }
    }
  };
  visit(schema, depth);
  return order;
}

/** The first object branch whose required keys are all present (else the first object branch). */
function chooseObjectBranch(
  value: JsonObject,
  branches: JsonValue[],
  root: JsonObject,
): JsonValue | undefined {
  let fallback: JsonValue | undefined;
  for (const branch of branches) {
    const s = resolve(branch, root);
    if (s === null) continue;
    const props = ownValue(s, "properties");
    if (!isJsonObject(props)) continue;
    fallback ??= branch;
    const required = ownValue(s, "required");
    const keys = Object.keys(value);
    const fits = (!Array.isArray(required) || required.every((k) =>
      typeof k === "string" && Object.hasOwn(value, k)
    )) &&
      keys.every((k) => Object.hasOwn(props, k));
    if (fits) return branch;
  }
  return fallback;
}

function order(value: JsonValue, schema: JsonValue | undefined, root: JsonObject, depth: number): JsonValue {
  if (depth > MAX_DEPTH) return value;
  const s = resolve(schema, root);
  if (Array.isArray(value)) {
    if (s === null) return value;
    const prefix = ownValue(s, "prefixItems");
    const items = ownValue(s, "items");
    return value.map((item, i) => {
      if (Array.isArray(prefix) && i < prefix.length) return order(item, prefix[i], root, depth + 1);
      if (Array.isArray(items)) return order(item, items[i], root, depth + 1);
      return order(item, items, root, depth + 1);
    });
  }
  if (!isJsonObject(value)) return value;
  const named = s === null ? new Map<string, JsonValue>() : propertyOrder(value, s, root, depth);
  const additional = s === null ? undefined : ownValue(s, "additionalProperties");
  const out: JsonObject = {};
  for (const [key, sub] of named) {
    if (Object.hasOwn(value, key)) setOwn(out, key, order(value[key], sub, root, depth + 1));
  }
  for (const key of Object.keys(value)) {
    if (!named.has(key)) {
      setOwn(out, key, order(value[key], isJsonObject(additional) ? additional : undefined, root, depth + 1));
    }
  }
  return out;
}

/**
 * Returns a copy of `value` whose object keys follow `schema`'s property order.
 *
 * @example
 * ```ts
 * import { orderBySchema } from "./openai_order.ts";
 * orderBySchema({ choice: "a", reasoning: "r" }, { type: "object", properties: { reasoning: {}, choice: {} } });
 * // → { reasoning: "r", choice: "a" }
 * ```
 */
export function orderBySchema(value: JsonValue, schema: JsonObject): JsonValue {
  return order(value, schema, schema, 0);
}
