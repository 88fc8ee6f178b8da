/**
 * JSON Schema validation of structured values (tool arguments, structured output) with ajv, for backends
 * that do not constrain decoding, and for scripted answers. Compiled validators are cached per schema object
 * and per schema text.
 * @module
 */
// ajv bundled into one ES module (scripts/build_ajv.ts): its CommonJS files took a third of a process's start.
import { Ajv, type ErrorObject, type ValidateFunction } from "./ajv.generated.js";
import { compactJson, isJsonObject, type JsonObject, type JsonValue, ownValue } from "../protocol/json.ts";
import { escapePointerSegment, unescapePointerSegment } from "./pointer.ts";
import { ONE_SCHEMA, SCHEMA_LIST, SCHEMA_MAP } from "./subschemas.ts";

/** A compiled validator: `null` when the value is valid, else a short message. */
export type Validator = (value: JsonValue) => string | null;

/**
 * How a validator's messages name the place a value failed.
 *
 * @example
 * ```ts
 * import { compileValidator, type ValidatorOptions } from "./validate.ts";
 * const options: ValidatorOptions = { locateByValue: true };
 * compileValidator({ type: "object", properties: { x: { type: "integer" } } }, options);
 * ```
 */
export interface ValidatorOptions {
  /**
   * Name it by the value's path laid over the schema's properties and items
   * (`#/properties/reward/properties/amount`) instead of by a path through the schema's `$defs`
   * (`#/$defs/reward/properties/amount (at /reward/amount)`): for a schema the bridge made (a generation
   * schema), whose `$defs` the designer never wrote. Default false.
   */
  locateByValue?: boolean;
}

/** Compiled validators of one kind of message. */
interface Caches {
  /** By schema object. */
  bySchema: WeakMap<JsonObject, Validator>;
  /**
   * By schema text, so equal schemas built anew per request (a decision's, a turn's) compile once. Bounded:
   * cleared when it reaches {@link MAX_BY_TEXT} entries.
   */
  byText: Map<string, Validator>;
}
const SCHEMA_LOCATED: Caches = { bySchema: new WeakMap(), byText: new Map() };
const VALUE_LOCATED: Caches = { bySchema: new WeakMap(), byText: new Map() };
const MAX_BY_TEXT = 256;
const acceptAll: Validator = () => null;

const OPTIONS = {
  strict: false,
  allErrors: false,
  logger: false,
  validateFormats: false,
  validateSchema: false,
} as const;

/**
 * Compiles with an instance of its own. An instance keeps every schema it compiled (in the scope of its
 * generated code, which each of its validators refers to), so a shared one grew with every new schema of a
 * long game; a new instance costs less than a compile. A reference to the whole schema (`"$ref": "#"`)
 * resolves only against a schema the instance keeps, so a schema whose reference is missing gets an
 * instance that keeps it.
 */
function compile(schema: JsonObject): ValidateFunction {
  try {
    return new Ajv({ ...OPTIONS, addUsedSchema: false }).compile(schema);
  } catch (error) {
    if ((error as { missingRef?: unknown }).missingRef === undefined) throw error;
    return new Ajv({ ...OPTIONS, addUsedSchema: true }).compile(schema);
  }
}

/**
 * Compiles `schema` into a validator. Schemas ajv cannot compile (unknown drafts, bad patterns, remote
 * `$ref`s, …) yield a validator that accepts everything; this function never throws.
 *
 * @example
 * ```ts
 * const validate = compileValidator({ type: "object", properties: { x: { type: "integer" } } });
 * validate({ x: 1 }); // null
 * validate({ x: 1.5 }); // "#/properties/x: must be integer"
 * ```
 */
export function compileValidator(schema: JsonObject, options: ValidatorOptions = {}): Validator {
  const locateByValue = options.locateByValue === true;
  const { bySchema: cache, byText } = locateByValue ? VALUE_LOCATED : SCHEMA_LOCATED;
  const cached = cache.get(schema);
  if (cached !== undefined) return cached;
  // Annotations do not change what is valid: schemas that differ only in them (every NPC's reply schema
  // names the NPC in its descriptions) share one compiled validator.
  const core = withoutAnnotations(schema) as JsonObject;
  const text = compactJson(core);
  const same = byText.get(text);
  if (same !== undefined) {
    cache.set(schema, same);
    return same;
  }
  let validator = acceptAll;
  // ajv counts an own `__proto__` property as additional even where the schema names it: such keys are
  // renamed on both sides (the schema once, each value before it is checked).
  const renames = text.includes(`"${PROTO}"`);
  // `$schema` would make ajv look up a meta-schema it may not have; the dialect is not ours to enforce.
  let prepared: JsonObject = renames ? renameProtoKeys(core, true) as JsonObject : core;
  if (Object.hasOwn(prepared, "$schema")) {
    prepared = { ...prepared };
    delete prepared.$schema;
  }
  try {
    const compiled = compile(prepared);
    validator = (value) => {
      try {
        if (compiled(renames ? renameProtoKeys(value, false) : value)) return null;
        const error = compiled.errors?.[0];
        if (error === undefined) return "#: is invalid";
        return (locateByValue ? valueLocatedError(prepared, error) : null) ?? formatError(error);
      } catch (error) {
        return `#: the value could not be validated (${
          error instanceof Error ? error.message : String(error)
        })`;
      }
    };
  } catch {
    validator = acceptAll;
  }
  cache.set(schema, validator);
  if (byText.size >= MAX_BY_TEXT) byText.clear();
  byText.set(text, validator);
  return validator;
}

/** Keywords that only annotate a schema: validation never reads them. */
const ANNOTATIONS = new Set(["description", "title", "examples", "$comment"]);
/** Depth below which annotations are left in place (deeper schemas are rare, and recursion is bounded). */
const MAX_STRIP_DEPTH = 64;

/**
 * `schema` without its annotation keywords (`description`, `title`, `examples`, `$comment`), removed only
 * where they are keywords: a property named `description` stays, and so do `enum`/`const` values and unknown
 * keywords, copied as they are. Below {@link MAX_STRIP_DEPTH} levels the rest is kept as it is. The input is
 * not changed (unchanged parts are shared).
 */
function withoutAnnotations(schema: JsonValue, depth = 0): JsonValue {
  if (schema === null || typeof schema !== "object" || Array.isArray(schema)) return schema;
  if (depth >= MAX_STRIP_DEPTH) return schema;
  const inner = (sub: JsonValue) => withoutAnnotations(sub, depth + 1);
  let out: JsonObject | null = null;
  for (const key of Object.keys(schema)) {
    const value = schema[key];
    let next: JsonValue | undefined = value;
    if (ANNOTATIONS.has(key)) next = undefined;
    else if (Array.isArray(value) && SCHEMA_LIST.has(key)) {
      const items = value.map(inner);
      next = items.some((v, i) => v !== value[i]) ? items : value;
    } else if (ONE_SCHEMA.has(key)) next = inner(value);
    else if (SCHEMA_MAP.has(key) && value !== null && typeof value === "object" && !Array.isArray(value)) {
      let map: JsonObject | null = null;
      for (const name of Object.keys(value)) {
        const sub = inner(value[name]);
        if (sub !== value[name]) {
          map ??= copyOwn(value);
          map[name] = sub;
        }
      }
      next = map ?? value;
    }
    if (next !== value) {
      out ??= copyOwn(schema);
      if (next === undefined) delete out[key];
      else out[key] = next;
    }
  }
  return out ?? schema;
}

/** A shallow copy with own properties defined as data (a `__proto__` key stays an own key). */
function copyOwn(value: JsonObject): JsonObject {
  const out: JsonObject = {};
  for (const key of Object.keys(value)) {
    Object.defineProperty(out, key, {
      value: value[key],
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return out;
}

const PROTO = "__proto__";
/** What `__proto__` keys are renamed to for ajv (messages show it back as `__proto__`). */
const PROTO_STAND_IN = "__proto__\u0000";

/**
 * A copy of `value` with every own `__proto__` key renamed to {@link PROTO_STAND_IN}; in a schema also the
 * `__proto__` names listed in `required`.
 */
function renameProtoKeys(value: JsonValue, schema: boolean): JsonValue {
  if (Array.isArray(value)) return value.map((v) => renameProtoKeys(v, schema));
  if (value === null || typeof value !== "object") return value;
  const out: JsonObject = {};
  for (const [key, v] of Object.entries(value)) {
    const renamed = key === PROTO ? PROTO_STAND_IN : key;
    const inner = schema && key === "required" && Array.isArray(v)
      ? v.map((name) => name === PROTO ? PROTO_STAND_IN : name)
      : renameProtoKeys(v, schema);
    Object.defineProperty(out, renamed, {
      value: inner,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return out;
}

/**
 * `"<the value's place>: <message>"` for an error whose schema path goes through `$defs` (not through a union,
 * whose branch the place would not name), the place being the value's path laid over the schema's properties
 * and items; null when the error has no such path or the value's path does not lead through the schema.
 */
function valueLocatedError(root: JsonObject, error: ErrorObject): string | null {
  if (!error.schemaPath.startsWith("#/$defs/") || /\/(anyOf|oneOf)\//.test(error.schemaPath)) return null;
  let node: JsonValue | undefined = root;
  let place = "#";
  for (const segment of error.instancePath.split("/").slice(1).map(unescapePointerSegment)) {
    node = followRefs(root, node);
    if (!isJsonObject(node)) return null;
    const properties = ownValue(node, "properties");
    const items = ownValue(node, "items");
    if (isJsonObject(properties) && Object.hasOwn(properties, segment)) {
      node = properties[segment];
      place += `/properties/${escapePointerSegment(segment)}`;
    } else if (isJsonObject(items) && /^\d+$/.test(segment)) {
      node = items;
      place += "/items";
    } else return null;
  }
  return `${place}: ${ajvMessage(error)}`.replaceAll(encodeURIComponent(PROTO_STAND_IN), PROTO)
    .replaceAll(PROTO_STAND_IN, PROTO);
}

/** `node` with its local `$ref`s (`#`, `#/$defs/<name>`) followed, as a generation schema uses them. */
function followRefs(root: JsonObject, node: JsonValue | undefined): JsonValue | undefined {
  for (let hops = 0; hops < 32 && isJsonObject(node); hops++) {
    const ref = ownValue(node, "$ref");
    if (typeof ref !== "string") return node;
    if (ref === "#") {
      node = root;
      continue;
    }
    if (!ref.startsWith("#/$defs/")) return node;
    const defs = ownValue(root, "$defs");
    node = isJsonObject(defs)
      ? ownValue(defs, unescapePointerSegment(ref.slice("#/$defs/".length)))
      : undefined;
  }
  return node;
}

/** ajv's message with the detail it leaves in `params` (the extra property's name, the allowed values). */
function ajvMessage(error: ErrorObject): string {
  const message = error.message ?? "is invalid";
  const params = error.params as Record<string, unknown>;
  if (error.keyword === "additionalProperties" && typeof params.additionalProperty === "string") {
    return `${message} '${params.additionalProperty}'`;
  }
  if (error.keyword === "enum" && Array.isArray(params.allowedValues)) {
    return `${message}: ${params.allowedValues.map((v) => compactJson(v)).join(", ")}`;
  }
  return message;
}

/** `"<schema location>: <message>"`, plus the value location when it is not obvious from the schema path. */
function formatError(error: ErrorObject): string {
  // Schema paths carry the stand-in URI-encoded, value paths as it is.
  const back = (path: string) =>
    path.replaceAll(encodeURIComponent(PROTO_STAND_IN), PROTO).replaceAll(PROTO_STAND_IN, PROTO);
  const named = { ...error, schemaPath: back(error.schemaPath), instancePath: back(error.instancePath) };
  return formatAjvError(named).replaceAll(PROTO_STAND_IN, PROTO);
}

function formatAjvError(error: ErrorObject): string {
  const cut = error.schemaPath.lastIndexOf("/");
  const location = cut > 0 ? error.schemaPath.slice(0, cut) : "#";
  const message = ajvMessage(error);
  const mirror = "#" + error.instancePath.split("/").slice(1).map((s) => `/properties/${s}`).join("");
  if (error.instancePath === "" || location === mirror) return `${location}: ${message}`;
  return `${location}: ${message} (at ${error.instancePath})`;
}
