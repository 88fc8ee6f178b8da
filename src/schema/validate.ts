/**
 * JSON Schema validation of structured values (tool arguments, structured output) with ajv, for backends
 * that do not constrain decoding. Compiled validators are cached per schema object.
 * @module
 */
// The named export: under Deno the default import of this CommonJS package is typed as the module namespace.
import { Ajv, type ErrorObject } from "ajv";
import { compactJson, type JsonObject, type JsonValue } from "../protocol/json.ts";

/** A compiled validator: `null` when the value is valid, else a short message. */
export type Validator = (value: JsonValue) => string | null;

const cache = new WeakMap<JsonObject, Validator>();
const acceptAll: Validator = () => null;
let shared: Ajv | undefined;

function ajv(): Ajv {
  shared ??= new Ajv({
    strict: false,
    allErrors: false,
    logger: false,
    validateFormats: false,
    validateSchema: false,
    // Never keep compiled schemas (or their `$id`s) in the shared instance: each schema is independent.
    addUsedSchema: false,
  });
  return shared;
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
export function compileValidator(schema: JsonObject): Validator {
  const cached = cache.get(schema);
  if (cached !== undefined) return cached;
  let validator = acceptAll;
  // `$schema` would make ajv look up a meta-schema it may not have; the dialect is not ours to enforce.
  let prepared: JsonObject = schema;
  if (Object.hasOwn(schema, "$schema")) {
    prepared = { ...schema };
    delete prepared.$schema;
  }
  const instance = ajv();
  try {
    const compiled = instance.compile(prepared);
    validator = (value) => {
      try {
        if (compiled(value)) return null;
        const error = compiled.errors?.[0];
        return error === undefined ? "#: is invalid" : formatError(error);
      } catch (error) {
        return `#: the value could not be validated (${
          error instanceof Error ? error.message : String(error)
        })`;
      }
    };
  } catch {
    validator = acceptAll;
  } finally {
    try {
      instance.removeSchema(prepared);
    } catch {
      // Nothing was cached.
    }
  }
  cache.set(schema, validator);
  return validator;
}

/** `"<schema location>: <message>"`, plus the value location when it is not obvious from the schema path. */
function formatError(error: ErrorObject): string {
  const cut = error.schemaPath.lastIndexOf("/");
  const location = cut > 0 ? error.schemaPath.slice(0, cut) : "#";
  let message = error.message ?? "is invalid";
  const params = error.params as Record<string, unknown>;
  if (error.keyword === "additionalProperties" && typeof params.additionalProperty === "string") {
    message += ` '${params.additionalProperty}'`;
  } else if (error.keyword === "enum" && Array.isArray(params.allowedValues)) {
    message += `: ${params.allowedValues.map((v) => compactJson(v)).join(", ")}`;
  }
  const mirror = "#" + error.instancePath.split("/").slice(1).map((s) => `/properties/${s}`).join("");
  if (error.instancePath === "" || location === mirror) return `${location}: ${message}`;
  return `${location}: ${message} (at ${error.instancePath})`;
}
