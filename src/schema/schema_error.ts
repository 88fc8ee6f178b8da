/**
 * The error of a JSON Schema the converter cannot use, shared by every module of the conversion.
 * @module
 */

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
