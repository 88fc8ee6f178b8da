/**
 * Objects of a `content/generate` schema that can only come back empty: `{"type": "object"}` with no
 * properties is generated as `{}` (the conversion gives every object exactly its properties), which a
 * designer who meant "any object" does not expect.
 * @module
 */
import { isJsonObject, type JsonValue, ownValue } from "../../protocol/json.ts";
import { escapePointerSegment } from "../../schema/pointer.ts";

/** How deep the search goes (the conversion refuses deeper schemas before this runs). */
const MAX_DEPTH = 64;

/**
 * A warning for each object of `schema` (the root, properties, array items, union branches) that has no
 * properties and says nothing of other members, in schema order. An object that allows other members has the
 * conversion's own warning; one with `additionalProperties: false` asks for `{}`.
 *
 * @example
 * ```ts
 * import { emptyObjectWarnings } from "./empty_objects.ts";
 * emptyObjectWarnings({ type: "object" });
 * // ["#: object without 'properties' is generated as {}; list the properties it should have"]
 * ```
 */
export function emptyObjectWarnings(schema: JsonValue): string[] {
  const warnings: string[] = [];
  visit(schema, "#", 0, warnings);
  return warnings;
}

function visit(schema: JsonValue | undefined, path: string, depth: number, warnings: string[]): void {
  if (!isJsonObject(schema) || depth > MAX_DEPTH) return;
  const properties = ownValue(schema, "properties");
  const props = isJsonObject(properties) ? properties : {};
  if (
    ownValue(schema, "type") === "object" && Object.keys(props).length === 0 &&
    ownValue(schema, "additionalProperties") === undefined
  ) {
    warnings.push(
      `${path}: object without 'properties' is generated as {}; list the properties it should have`,
    );
  }
  for (const key of Object.keys(props)) {
    visit(props[key], `${path}/properties/${escapePointerSegment(key)}`, depth + 1, warnings);
  }
  visit(ownValue(schema, "items"), `${path}/items`, depth + 1, warnings);
  for (const union of ["anyOf", "oneOf"]) {
    const branches = ownValue(schema, union);
    if (Array.isArray(branches)) {
      branches.forEach((branch, i) => visit(branch, `${path}/${union}/${i}`, depth + 1, warnings));
    }
  }
}
