/**
 * `integer` and `number` schemas in the conversion: the tightest of `minimum`/`maximum` and the exclusive
 * bounds (draft 4's boolean form included) becomes an inclusive range; integer bounds are rounded inward and
 * clamped to the safe range (with a warning), exclusive number bounds are enforced as inclusive (with a
 * warning), and an empty range is dropped (with a warning).
 * @module
 */
import { type JsonObject, type JsonValue, ownValue } from "../protocol/json.ts";
import { describe, NUMBER_DESCRIBED } from "./description.ts";
import { clampInteger, isFiniteNumber, safeIntegerEnd } from "./keyword_values.ts";
import type { Converted, TypedSchema, Walk } from "./walk.ts";

/** Converts an `integer` schema. */
export function convertInteger(walk: Walk, typed: TypedSchema): Converted {
  const lows: number[] = [];
  const highs: number[] = [];
  const { minimum, maximum, exclusiveMinimum, exclusiveMaximum } = numericBounds(typed.schema);
  if (isFiniteNumber(minimum)) {
    // Draft 4: `exclusiveMinimum: true` makes `minimum` exclusive.
    lows.push(exclusiveMinimum === true ? Math.floor(minimum) + 1 : Math.ceil(minimum));
  }
  if (isFiniteNumber(maximum)) {
    highs.push(exclusiveMaximum === true ? Math.ceil(maximum) - 1 : Math.floor(maximum));
  }
  if (isFiniteNumber(exclusiveMinimum)) lows.push(Math.floor(exclusiveMinimum) + 1);
  if (isFiniteNumber(exclusiveMaximum)) highs.push(Math.ceil(exclusiveMaximum) - 1);
  return ranged(walk, { ...typed, type: "integer", lows, highs });
}

/** Converts a `number` schema. */
export function convertNumber(walk: Walk, typed: TypedSchema): Converted {
  const lows: number[] = [];
  const highs: number[] = [];
  /** The exclusive ones among them (draft 4's `exclusiveMinimum: true` makes `minimum` one). */
  const strictLows: number[] = [];
  const strictHighs: number[] = [];
  const { minimum, maximum, exclusiveMinimum, exclusiveMaximum } = numericBounds(typed.schema);
  if (isFiniteNumber(minimum)) (exclusiveMinimum === true ? strictLows : lows).push(minimum);
  if (isFiniteNumber(maximum)) (exclusiveMaximum === true ? strictHighs : highs).push(maximum);
  if (isFiniteNumber(exclusiveMinimum)) strictLows.push(exclusiveMinimum);
  if (isFiniteNumber(exclusiveMaximum)) strictHighs.push(exclusiveMaximum);
  const exclusive = strictLows.length > 0 || strictHighs.length > 0;
  const converted = ranged(walk, {
    ...typed,
    type: "number",
    lows: [...lows, ...strictLows],
    highs: [...highs, ...strictHighs],
    exclusive,
  });
  // The bound the node holds is exclusive when an exclusive one is the tightest.
  const low = lows.length > 0 ? Math.max(...lows) : -Infinity;
  const high = highs.length > 0 ? Math.min(...highs) : Infinity;
  const strictLow = strictLows.length > 0 && Math.max(...strictLows) >= low;
  const strictHigh = strictHighs.length > 0 && Math.min(...strictHighs) <= high;
  const node = converted.node;
  const exclusiveLow = strictLow && Object.hasOwn(node, "minimum");
  const exclusiveHigh = strictHigh && Object.hasOwn(node, "maximum");
  if (exclusiveLow || exclusiveHigh) walk.noteExclusive(node, { low: exclusiveLow, high: exclusiveHigh });
  return converted;
}

/** The own `minimum`, `maximum`, `exclusiveMinimum` and `exclusiveMaximum` of a numeric schema. */
function numericBounds(schema: JsonObject): {
  minimum: JsonValue | undefined;
  maximum: JsonValue | undefined;
  exclusiveMinimum: JsonValue | undefined;
  exclusiveMaximum: JsonValue | undefined;
} {
  return {
    minimum: ownValue(schema, "minimum"),
    maximum: ownValue(schema, "maximum"),
    exclusiveMinimum: ownValue(schema, "exclusiveMinimum"),
    exclusiveMaximum: ownValue(schema, "exclusiveMaximum"),
  };
}

/**
 * A numeric node with the tightest of the collected lower and upper bounds (integer bounds clamped to the
 * safe range); a range that is empty is dropped with a warning.
 */
function ranged(
  walk: Walk,
  range: TypedSchema & { type: "integer" | "number"; lows: number[]; highs: number[]; exclusive?: boolean },
): Converted {
  const { type, lows, highs, schema, pos, nullable, sentences } = range;
  const fit = type === "integer" ? clampInteger : (value: number) => value;
  // The tightest bounds as asked (the notes say these), and as the generation schema holds them (clamped).
  let asked: [number | undefined, number | undefined] = [
    lows.length > 0 ? Math.max(...lows) : undefined,
    highs.length > 0 ? Math.min(...highs) : undefined,
  ];
  let low = asked[0] === undefined ? undefined : fit(asked[0]);
  let high = asked[1] === undefined ? undefined : fit(asked[1]);
  // A clamped bound is one the schema never wrote: an answer's "must be <= 9007199254740991" needs the reason.
  if (low !== asked[0]) walk.warn(pos.path, clampedText("lower", asked[0]!, low!));
  if (high !== asked[1]) walk.warn(pos.path, clampedText("upper", asked[1]!, high!));
  if (low !== undefined && high !== undefined && low > high) {
    walk.warn(pos.path, `empty ${type} range is ignored`);
    low = high = undefined;
    asked = [undefined, undefined];
  }
  const node: JsonObject = { type };
  if (low !== undefined) node.minimum = low;
  if (high !== undefined) node.maximum = high;
  const [askedLow, askedHigh] = asked;
  if (range.exclusive === true) {
    walk.note({ kind: "exclusive-bounds", path: pos.path });
  }
  // Enforced by the on-device model; by the GGUF grammar as far as its rules can write them (`model_notes.ts`).
  if (low !== undefined || high !== undefined) {
    walk.note({ kind: "range", path: pos.path, type, low: askedLow, high: askedHigh });
  }
  const description = describe(walk, { schema, path: pos.path, described: NUMBER_DESCRIBED, sentences });
  return { node, description, nullable };
}

/** The warning of an integer bound clamped to the safe range ("integer upper bound 1e+300 is clamped to …"). */
function clampedText(which: "lower" | "upper", asked: number, clamped: number): string {
  return `integer ${which} bound ${asked} is clamped to ${clamped}, ${safeIntegerEnd(clamped)}`;
}
