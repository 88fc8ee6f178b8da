/**
 * `$ref` in the conversion: resolving local references against the input document, and converting a
 * referencing schema into its target's named type (named by the target's `title` or its pointer key).
 * @module
 */
import { isJsonObject, type JsonObject, type JsonValue } from "../protocol/json.ts";
import { nonEmptyString, safeJson } from "./keyword_values.ts";
import { resolveLocalRef, unescapePointerSegment } from "./pointer.ts";
import { SchemaError } from "./schema_error.ts";
import type { Converted, SchemaAt, Slot, Walk } from "./walk.ts";

/** The target of a local `$ref` value; throws a `SchemaError` (at `at.path`) for any other. */
export function resolveRef(walk: Walk, at: { ref: JsonValue; path: string }): JsonValue {
  const { ref, path } = at;
  if (typeof ref !== "string") {
    throw new SchemaError(`only local $ref values are supported, got '${safeJson(ref)}'`, path);
  }
  const resolution = resolveLocalRef(walk.root, ref);
  if (resolution.ok) return resolution.target;
  throw new SchemaError(
    resolution.reason === "nonlocal"
      ? `only local $ref values are supported, got '${ref}'`
      : `unresolvable $ref '${ref}'`,
    path,
  );
}

/** Converts a schema with `$ref` (its siblings other than `description` are ignored). */
export function convertRef(walk: Walk, { schema, pos }: SchemaAt): Converted {
  const ref = schema.$ref;
  const target = resolveRef(walk, { ref, path: pos.path });
  const refPath = ref as string;
  let slot: Slot | undefined;
  if (isJsonObject(target) && !walk.hasSlot(target)) {
    // The root's own `$ref` names the root type; any other target is named by its title or pointer key.
    slot = pos.slot?.isRoot && !pos.slot.used ? pos.slot : walk.newSlot(refTypeName(target, refPath));
  }
  const result = walk.convert(target, {
    path: refPath,
    name: slot?.base ?? pos.name,
    depth: pos.depth + 1,
    slot,
  });
  if (slot !== undefined && slot !== pos.slot) walk.checkPending(slot);
  const sibling = nonEmptyString(schema, "description");
  return { ...result, description: sibling ?? result.description };
}

function refTypeName(target: JsonObject, ref: string): string {
  const title = nonEmptyString(target, "title");
  if (title !== undefined) return title;
  const segments = ref.split("/");
  return unescapePointerSegment(segments[segments.length - 1]);
}
