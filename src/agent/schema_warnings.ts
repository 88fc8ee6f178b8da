/**
 * The schema's warnings on a failed structured turn: a request that fails has no `warnings` to show them, and
 * they are often what explains the answer the model was held to.
 * @module
 */
import { BridgeError } from "../protocol/errors.ts";

/**
 * An invalid answer's error (`generation_failed` with `data.problem`) with the schema's conversion warnings
 * added to its message: they explain the schema the answer was held to (a property without a type is a string,
 * `not` is ignored, an object without properties is `{}`). Other errors, and any error when there are no
 * warnings, are returned as they are.
 *
 * @example
 * ```ts
 * import { BridgeError } from "../protocol/errors.ts";
 * import { withSchemaWarnings } from "./schema_warnings.ts";
 * const invalid = BridgeError.of("generation_failed", "The model gave an invalid answer.", { problem: "…" });
 * (withSchemaWarnings(invalid, ["#/properties/a: schema without a type is generated as a string"]) as Error)
 *   .message;
 * // "The model gave an invalid answer. The schema's warnings: #/properties/a: schema without a type is generated as a string."
 * ```
 */
export function withSchemaWarnings(error: unknown, schemaWarnings: readonly string[]): unknown {
  if (
    schemaWarnings.length === 0 || !(error instanceof BridgeError) ||
    error.dataCode !== "generation_failed" ||
    typeof error.data.problem !== "string"
  ) {
    return error;
  }
  const message = `${error.message} The schema's warnings: ${schemaWarnings.join("; ")}.`;
  return new BridgeError(error.code, error.dataCode, message, error.data).withCause(error);
}
