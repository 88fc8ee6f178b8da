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
