/**
 * Reading schema keyword values safely (own properties only) and the small value helpers the keyword
 * converters share.
 * @module
 */
import { compactJson, type JsonObject, type JsonValue, ownValue } from "../protocol/json.ts";

/** Integer bounds are clamped to what every consumer (JS numbers, Swift `Int`) represents exactly. */
const MAX_INTEGER = Number.MAX_SAFE_INTEGER;

/** The own string value of `key`, or undefined. */
export function stringValue(object: JsonObject, key: string): string | undefined {
  const value = ownValue(object, key);
  return typeof value === "string" ? value : undefined;
}

/** The own non-empty string value of `key`, or undefined. */
export function nonEmptyString(object: JsonObject, key: string): string | undefined {
  const value = stringValue(object, key);
  return value === undefined || value === "" ? undefined : value;
}

/** The values without duplicates, in first-seen order. */
export function unique<T>(values: readonly T[]): T[] {
  return [...new Set(values)];
}

/** An integer clamped to the safe integer range. */
export function clampInteger(value: number): number {
  return Math.min(MAX_INTEGER, Math.max(-MAX_INTEGER, value));
}

/** The end of the safe integer range on the side of `value`, in words: "the largest safe integer (2^53-1)". */
export function safeIntegerEnd(value: number): string {
  return value > 0 ? "the largest safe integer (2^53-1)" : "the smallest safe integer (-(2^53-1))";
}

/**
 * The warning of an integer `enum` value or `const` past the safe integers (`what`: "enum value" or "const"),
 * or null for a safe one: JSON integers past them lose precision, so the value read may not be the one
 * written, and neither may an answer's.
 *
 * @example
 * ```ts
 * import { unsafeIntegerWarning } from "./keyword_values.ts";
 * unsafeIntegerWarning("const", 3); // null
 * unsafeIntegerWarning("const", 1e300); // "integer const 1e+300 is past the largest safe integer (2^53-1), …"
 * ```
 */
export function unsafeIntegerWarning(what: "enum value" | "const", value: number): string | null {
  if (Math.abs(value) <= MAX_INTEGER) return null;
  return `integer ${what} ${value} is past ${safeIntegerEnd(value)}, where JSON integers lose precision ` +
    `(9007199254740993 reads as 9007199254740992): an answer may not hold the value written; a string ` +
    `${what === "const" ? "const" : "enum"} keeps it exact`;
}

/** True for a finite number. */
export function isFiniteNumber(value: JsonValue | undefined): value is number {
  return typeof value === "number" && Number.isFinite(value);
}

/** Text of a value inside a description: strings as-is, everything else compact JSON. */
export function describeValue(value: JsonValue): string {
  if (typeof value === "string") return value;
  return safeJson(value);
}

/** Compact JSON of a value, or `…` when it cannot be serialised. */
export function safeJson(value: JsonValue): string {
  try {
    return compactJson(value);
  } catch {
    return "…";
  }
}
