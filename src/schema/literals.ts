/**
 * `enum` and `const` in the conversion: string values become a string `enum`; an integer `enum` is enforced
 * as its range with the exact values described; any other value is described instead of enforced (with a
 * warning), and any other `enum` is generated as strings (with a warning that says what the answer holds).
 * The node of a non-string `enum` or `const` is noted with its values ({@link Walk.noteLiterals}): the GGUF
 * grammar of an answer generates the values themselves (objects and arrays as their JSON text; a tool's
 * arguments only primitive ones), so the warnings are notes worded for the model in use (`model_notes.ts`).
 * @module
 */
import type { JsonValue } from "../protocol/json.ts";
import { describe } from "./description.ts";
import { clampInteger, describeValue, safeJson, unique, unsafeIntegerWarning } from "./keyword_values.ts";
import { convertTyped } from "./typed.ts";
import type { Converted, SchemaAt, Walk } from "./walk.ts";

/** Converts a schema with a non-empty `enum` (its `null` member makes the value nullable). */
export function convertEnum(
  walk: Walk,
  { schema, pos, values }: SchemaAt & { values: JsonValue[] },
): Converted {
  const present = values.filter((v) => v !== null);
  const nullable = present.length < values.length;
  if (present.length === 0) return { ...convertTyped(walk, { schema, pos }), nullable: true };
  if (present.every((v) => typeof v === "string")) {
    const description = describe(walk, { schema, path: pos.path });
    return { node: { type: "string", enum: unique(present as string[]) }, description, nullable };
  }
  if (present.every((v) => typeof v === "number" && Number.isInteger(v))) {
    const numbers = present as number[];
    // A loop, not Math.min(...spread): enums may be longer than the engine's argument limit.
    let min = Infinity;
    let max = -Infinity;
    for (const n of numbers) {
      if (n < min) min = n;
      if (n > max) max = n;
    }
    const distinct = unique(numbers);
    // A value past the safe integers is told to every model, as a bound past them is (`numbers.ts`); the
    // on-device model's range is clamped to them, so it cannot answer that value.
    for (const n of distinct) {
      const unsafe = unsafeIntegerWarning("enum value", n);
      if (unsafe !== null) walk.warn(pos.path, unsafe);
    }
    const clamped = clampInteger(min) !== min || clampInteger(max) !== max;
    min = clampInteger(min);
    max = clampInteger(max);
    walk.note({ kind: "integer-enum", path: pos.path, min, max, ...(clamped ? { clamped } : {}) });
    const sentence = `One of: ${numbers.map(String).join(", ")}.`;
    const description = describe(walk, { schema, path: pos.path, sentences: [sentence] });
    const node = { type: "integer", minimum: min, maximum: max };
    walk.noteLiterals(node, distinct);
    return { node, description, nullable };
  }
  const literal = present.every(isPrimitive);
  walk.note({ kind: "stringified-enum", path: pos.path, values: present, literal });
  const description = describe(walk, { schema, path: pos.path });
  const node = { type: "string", enum: unique(present.map(describeValue)) };
  walk.noteLiterals(node, unique(present));
  return { node, description, nullable };
}

/** A string, number or boolean (what a grammar's `enum` takes besides `null`). */
function isPrimitive(value: JsonValue): boolean {
  return typeof value === "string" || typeof value === "number" || typeof value === "boolean";
}

/** Converts a schema with `const`. */
export function convertConst(walk: Walk, { schema, pos, value }: SchemaAt & { value: JsonValue }): Converted {
  if (typeof value === "string") {
    const description = describe(walk, { schema, path: pos.path });
    return { node: { type: "string", enum: [value] }, description, nullable: false };
  }
  const text = safeJson(value);
  const unsafe = typeof value === "number" && Number.isInteger(value)
    ? unsafeIntegerWarning("const", value)
    : null;
  if (unsafe !== null) walk.warn(pos.path, unsafe);
  const literal = value === null || isPrimitive(value);
  walk.note({ kind: "non-string-const", path: pos.path, value, literal });
  let fallbackType = "string";
  if (typeof value === "boolean") fallbackType = "boolean";
  else if (typeof value === "number") fallbackType = Number.isInteger(value) ? "integer" : "number";
  const converted = convertTyped(walk, {
    schema,
    pos,
    fallbackType,
    sentences: [`Must be exactly ${text}.`],
  });
  walk.noteLiterals(converted.node, [value]);
  return converted;
}
