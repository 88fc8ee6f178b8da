/**
 * The error of a JSON Schema the converter cannot use, shared by every module of the conversion.
 * @module
 */
import type { JsonValue } from "../protocol/json.ts";

/**
 * A JSON Schema the converter cannot use (`-32007 invalid_schema` on the wire).
 *
 * @example
 * ```ts
 * import { convertSchema, SchemaError } from "@open-apple-models/bridge/engine";
 * try {
 *   convertSchema({ type: "object", properties: { a: { $ref: "#/nope" } } }, "Response");
 * } catch (error) {
 *   error instanceof SchemaError; // true
 *   (error as SchemaError).schemaPath; // "#/properties/a"
 * }
 * ```
 */
export class SchemaError extends Error {
  /** Where in the schema the problem is, e.g. `#/properties/a/items` or a `$ref` string. */
  readonly schemaPath: string;

  /** Creates an error with the reference's message text and the schema location. */
  constructor(message: string, schemaPath: string) {
    super(message);
    this.name = "SchemaError";
    this.schemaPath = schemaPath;
  }
}

/** The JSON Schema types, in the order messages list them. */
export const SCHEMA_TYPES: readonly string[] = [
  "object",
  "array",
  "string",
  "integer",
  "number",
  "boolean",
  "null",
];

/**
 * The error of a value where a schema object belongs, saying what it got: a property written as its type
 * (`"gold": "integer"`) is told how to write it.
 *
 * @example
 * ```ts
 * import { notASchema } from "./schema_error.ts";
 * notASchema("integer", "#/properties/gold").message;
 * // 'expected a schema object, got "integer" (write {"type": "integer"})'
 * ```
 */
export function notASchema(value: JsonValue | undefined, path: string): SchemaError {
  let got = "";
  if (value !== undefined) {
    const text = JSON.stringify(value);
    got = `, got ${text.length > 60 ? `${text.slice(0, 57)}...` : text}`;
  }
  const fix = typeof value === "string" && SCHEMA_TYPES.includes(value)
    ? ` (write {"type": "${value}"})`
    : "";
  return new SchemaError(`expected a schema object${got}${fix}`, path);
}
