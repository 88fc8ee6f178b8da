/**
 * GBNF expressions for what node-llama-cpp's JSON-schema grammar cannot express: an integer or a number
 * between bounds (either one may be missing), and a JSON value written literally (an object or array
 * `const`/`enum` member). Pure text, no model: the GGUF backend puts them in place of placeholders in the
 * grammar node-llama-cpp builds (`src/models/llama_grammar.ts`).
 *
 * Numbers are written as JSON without an exponent and with at most {@link MAX_GRAMMAR_DIGITS} integer digits,
 * as node-llama-cpp's own number rule does; every repetition count is small (llama.cpp refuses large ones).
 * A bound the grammar cannot honour (a minimum above {@link MAX_GRAMMAR_MAGNITUDE}, a bound with more than
 * {@link MAX_GRAMMAR_FRACTION} fraction digits) makes the expression undefined: the answer is then left to
 * its validation.
 * @module
 */

/** The integer digits a number rule writes at most (node-llama-cpp's number rule writes 16). */
export const MAX_GRAMMAR_DIGITS = 16;

/** Numbers of this size or more are beyond {@link MAX_GRAMMAR_DIGITS} digits. */
export const MAX_GRAMMAR_MAGNITUDE = 10 ** MAX_GRAMMAR_DIGITS;

/** The fraction digits a bound may have (`0.30000000000000004` has 17) for the grammar to honour it. */
export const MAX_GRAMMAR_FRACTION = 40;

/** Fraction digits written after the ones a bound fixes. */
const FREE_FRACTION = 15;

const LARGEST = 10n ** BigInt(MAX_GRAMMAR_DIGITS) - 1n;

/** A non-negative decimal: its integer part and its fraction digits (no trailing zero; "" for none). */
interface Decimal {
  int: bigint;
  frac: string;
}

function literal(text: string): string {
  return `"${text}"`;
}

function digitClass(low: number, high: number): string {
  return low === high ? literal(String(low)) : `[${low}-${high}]`;
}

function anyDigits(count: number): string {
  if (count === 0) return "";
  return count === 1 ? "[0-9]" : `[0-9]{${count}}`;
}

function seq(...parts: string[]): string {
  return parts.filter((p) => p !== "").join(" ");
}

function alt(parts: readonly string[]): string {
  return parts.length === 1 ? parts[0] : `( ${parts.join(" | ")} )`;
}

/** The digit strings of the same length `low`…`high` (`low` ≤ `high`). */
function sameLength(low: string, high: string): string {
  if (low === high) return literal(low);
  const first = Number(low[0]);
  const last = Number(high[0]);
  if (low.length === 1) return digitClass(first, last);
  const restLow = low.slice(1);
  const restHigh = high.slice(1);
  if (first === last) return seq(literal(low[0]), sameLength(restLow, restHigh));
  const width = low.length - 1;
  const parts: string[] = [];
  let from = first;
  let to = last;
  if (!/^0*$/.test(restLow)) {
    parts.push(seq(literal(low[0]), sameLength(restLow, "9".repeat(width))));
    from++;
  }
  let top: string | undefined;
  if (!/^9*$/.test(restHigh)) {
    top = seq(literal(high[0]), sameLength("0".repeat(width), restHigh));
    to--;
  }
  if (from <= to) parts.push(seq(digitClass(from, to), anyDigits(width)));
  if (top !== undefined) parts.push(top);
  return alt(parts);
}

/** The JSON digits of the integers `low`…`high` (0 ≤ `low` ≤ `high`). */
function naturals(low: bigint, high: bigint): string {
  const parts: string[] = [];
  const lowText = String(low);
  const highText = String(high);
  for (let width = lowText.length; width <= highText.length; width++) {
    const from = width === lowText.length ? lowText : `1${"0".repeat(width - 1)}`;
    const to = width === highText.length ? highText : "9".repeat(width);
    parts.push(sameLength(from, to));
  }
  return alt(parts);
}

/**
 * A GBNF expression for the JSON integers from `low` to `high` (a missing bound: as many digits as
 * node-llama-cpp's number rule writes); undefined when no integer fits or a bound is beyond those digits on
 * the side that would exclude every integer the grammar can write.
 *
 * @example
 * ```ts
 * import { integerRangeGbnf } from "./grammar_numbers.ts";
 * integerRangeGbnf(1, 1000); // '( [1-9] | [1-9] [0-9] | [1-9] [0-9]{2} | "1000" )'
 * integerRangeGbnf(0, undefined); // every non-negative integer of up to 16 digits
 * ```
 */
export function integerRangeGbnf(low: number | undefined, high: number | undefined): string | undefined {
  const from = integerBound(low, "low");
  const to = integerBound(high, "high");
  if (from === null || to === null || from > to) return undefined;
  const parts: string[] = [];
  if (to >= 0n) parts.push(naturals(from > 0n ? from : 0n, to));
  if (from < 0n) parts.push(seq(literal("-"), naturals(to < -1n ? -to : 1n, -from)));
  return alt(parts);
}

/** An integer bound as a bigint (rounded inward), clamped to the grammar's digits; null when past them. */
function integerBound(value: number | undefined, side: "low" | "high"): bigint | null {
  if (value === undefined || !Number.isFinite(value)) {
    if (value !== undefined && (side === "low" ? value > 0 : value < 0)) return null;
    return side === "low" ? -LARGEST : LARGEST;
  }
  const rounded = side === "low" ? Math.ceil(value) : Math.floor(value);
  if (Math.abs(rounded) >= MAX_GRAMMAR_MAGNITUDE) {
    // Past the digits: no bound on the side it leaves open, nothing on the side it closes.
    if (side === "low") return rounded > 0 ? null : -LARGEST;
    return rounded < 0 ? null : LARGEST;
  }
  return BigInt(rounded);
}

/** `|value|` as an exact decimal (a double's shortest form, exponent expanded); null when too long. */
function decimal(value: number): Decimal | null {
  const text = String(Math.abs(value));
  const match = /^(\d+)(?:\.(\d+))?(?:e([+-]\d+))?$/.exec(text);
  if (match === null) return null;
  let digits = match[1] + (match[2] ?? "");
  let point = match[1].length + Number(match[3] ?? 0);
  if (point <= 0) {
    digits = "0".repeat(1 - point) + digits;
    point = 1;
  }
  if (point > digits.length) digits += "0".repeat(point - digits.length);
  const frac = digits.slice(point).replace(/0+$/, "");
  if (point > MAX_GRAMMAR_DIGITS || frac.length > MAX_GRAMMAR_FRACTION) return null;
  return { int: BigInt(digits.slice(0, point)), frac };
}

/** Fraction digits that may follow freely (none included). */
const FREE = `[0-9]{0,${FREE_FRACTION}}`;

/**
 * A bound on the fraction digits still to write: the digits of `0.digits` ("" for 0), and whether the bound
 * is exclusive. A missing lower bound (null) is met already; a missing upper bound is below 1.
 */
interface FractionBound {
  digits: string;
  strict: boolean;
}

/** What fraction digits a state admits: an expression for one or more digits, and whether none will do. */
interface Fraction {
  expr?: string;
  empty: boolean;
}

/**
 * The fraction digits whose value `0.F` is above `low` and below `high` (see {@link FractionBound}); built one
 * digit at a time, the digits with the same bounds after them in one class.
 */
function fraction(low: FractionBound | null, high: FractionBound | null): Fraction {
  if (low !== null && low.digits === "" && !low.strict) low = null; // ≥ 0 always holds
  if (low === null && high === null) return { expr: `[0-9]{1,${FREE_FRACTION + 1}}`, empty: true };
  if (high !== null && high.digits === "") {
    // At most 0: zeros, when neither bound is strict.
    const zeros = low === null && !high.strict;
    return zeros ? { expr: `"0"{1,${FREE_FRACTION}}`, empty: true } : { empty: false };
  }
  if (low !== null && low.digits === "" && high === null) {
    // Above 0: a digit other than 0 somewhere.
    return { expr: `"0"{0,${FREE_FRACTION - 1}} [1-9] ${FREE}`, empty: false };
  }
  const empty = low === null && (high === null || high.digits !== "" || !high.strict);
  const groups = new Map<
    string,
    { from: number; to: number; low: FractionBound | null; high: FractionBound | null }
  >();
  for (let d = 0; d <= 9; d++) {
    let nextLow: FractionBound | null;
    if (low === null) nextLow = null;
    else if (low.digits === "") nextLow = d > 0 ? null : low; // strictly above 0 (the other case is above)
    else {
      const a = Number(low.digits[0]);
      if (d < a) continue;
      nextLow = d > a ? null : { digits: low.digits.slice(1), strict: low.strict };
    }
    let nextHigh: FractionBound | null;
    if (high === null) nextHigh = null;
    else {
      const b = Number(high.digits[0]);
      if (d > b) continue;
      nextHigh = d < b ? null : { digits: high.digits.slice(1), strict: high.strict };
    }
    const key = JSON.stringify([nextLow, nextHigh]);
    const group = groups.get(key);
    if (group === undefined) groups.set(key, { from: d, to: d, low: nextLow, high: nextHigh });
    else group.to = d;
  }
  const parts: string[] = [];
  for (const group of groups.values()) {
    const rest = group.low === null && group.high === null
      ? { expr: FREE, empty: false }
      : fraction(group.low, group.high);
    if (rest.expr === undefined) {
      if (rest.empty) parts.push(digitClass(group.from, group.to));
      continue;
    }
    parts.push(seq(digitClass(group.from, group.to), rest.empty ? `( ${rest.expr} )?` : rest.expr));
  }
  return { expr: parts.length === 0 ? undefined : alt(parts), empty };
}

/** One whole number `int` followed by the fraction digits `fraction` admits; undefined when none. */
function withFraction(int: string, digits: Fraction): string | undefined {
  if (digits.expr === undefined) return digits.empty ? int : undefined;
  return digits.empty ? seq(int, `( "." ${digits.expr} )?`) : seq(int, literal("."), digits.expr);
}

/**
 * The JSON digits (no sign) of the numbers from `low` to `high` (missing: up to the grammar's digits), each
 * bound inclusive unless marked strict; undefined when none.
 */
function magnitudes(
  low: Decimal,
  lowStrict: boolean,
  high: Decimal | undefined,
  highStrict: boolean,
): string | undefined {
  const int = (value: bigint) => literal(String(value));
  const lowBound: FractionBound = { digits: low.frac, strict: lowStrict };
  const highBound: FractionBound | null = high === undefined
    ? null
    : { digits: high.frac, strict: highStrict };
  if (high !== undefined && low.int === high.int) {
    return withFraction(int(low.int), fraction(lowBound, highBound));
  }
  const parts: (string | undefined)[] = [];
  const lowOpen = low.frac === "" && !lowStrict; // every fraction of the lowest whole number will do
  if (!lowOpen) parts.push(withFraction(int(low.int), fraction(lowBound, null)));
  const from = lowOpen ? low.int : low.int + 1n;
  const to = high === undefined ? LARGEST : high.int - 1n;
  if (from <= to) parts.push(withFraction(naturals(from, to), fraction(null, null)));
  if (high !== undefined) parts.push(withFraction(int(high.int), fraction(null, highBound)));
  const found = parts.filter((p): p is string => p !== undefined);
  return found.length === 0 ? undefined : alt(found);
}

/** Whether the bounds of {@link numberRangeGbnf} are exclusive. */
export interface ExclusiveBounds {
  /** `low` itself is not in the range. */
  low?: boolean;
  /** `high` itself is not in the range. */
  high?: boolean;
}

/** The bounds of a number range: either may be missing; each is inclusive unless `exclusive` says so. */
export interface NumberRange {
  /** The lowest number. */
  low?: number;
  /** The highest number. */
  high?: number;
  /** Which bounds are themselves outside the range. */
  exclusive?: ExclusiveBounds;
}

/**
 * A GBNF expression for the JSON numbers from `low` to `high` (each inclusive unless `exclusive` says so),
 * fraction allowed, no exponent (a missing bound: as many integer digits as node-llama-cpp's number rule
 * writes); undefined when none fits or a bound is one the grammar cannot honour (see the module).
 *
 * @example
 * ```ts
 * import { numberRangeGbnf } from "./grammar_numbers.ts";
 * numberRangeGbnf({ low: 0, high: 1 }); // '( "0" ( "." [0-9]{1,16} )? | "1" ( "." "0"{1,15} )? )'
 * numberRangeGbnf({ low: 0, high: 1, exclusive: { high: true } }); // below 1: '"0" ( "." [0-9]{1,16} )?'
 * numberRangeGbnf({ low: 1e300 }); // undefined: no number of 16 digits is that large
 * ```
 */
export function numberRangeGbnf(range: NumberRange): string | undefined {
  const { low, high, exclusive = {} } = range;
  const lowStrict = exclusive.low === true;
  const highStrict = exclusive.high === true;
  if (
    low !== undefined && high !== undefined && (low > high || (low === high && (lowStrict || highStrict)))
  ) {
    return undefined;
  }
  const open = (value: number | undefined, side: "low" | "high"): boolean =>
    value === undefined ||
    (side === "low" ? value <= -MAX_GRAMMAR_MAGNITUDE : value >= MAX_GRAMMAR_MAGNITUDE);
  const from = open(low, "low") ? undefined : low!;
  const to = open(high, "high") ? undefined : high!;
  if (
    (from !== undefined && from >= MAX_GRAMMAR_MAGNITUDE) ||
    (to !== undefined && to <= -MAX_GRAMMAR_MAGNITUDE)
  ) {
    return undefined;
  }
  const zero: Decimal = { int: 0n, frac: "" };
  const parts: (string | undefined)[] = [];
  if (to === undefined || to >= 0) {
    // 0 and above: from the lower bound when it is not negative.
    const bottom = from === undefined || from < 0 ? zero : decimal(from);
    const top = to === undefined ? undefined : decimal(to);
    if (bottom === null || top === null) return undefined;
    parts.push(magnitudes(bottom, from !== undefined && from >= 0 && lowStrict, top, highStrict));
  }
  if (from === undefined || from < 0) {
    // Below 0: the magnitudes from the upper bound's (0 when it is not negative) to the lower bound's.
    const bottom = to === undefined || to > 0 ? zero : decimal(to);
    const top = from === undefined ? undefined : decimal(from);
    if (bottom === null || top === null) return undefined;
    const magnitude = magnitudes(bottom, to !== undefined && to <= 0 && highStrict, top, lowStrict);
    parts.push(magnitude === undefined ? undefined : seq(literal("-"), magnitude));
  }
  const found = parts.filter((p): p is string => p !== undefined);
  return found.length === 0 ? undefined : alt(found);
}

/** A GBNF string literal for `text` (any characters). */
export function gbnfLiteral(text: string): string {
  return `"${
    text.replaceAll("\\", "\\\\").replaceAll('"', '\\"').replaceAll("\n", "\\n").replaceAll("\r", "\\r")
      .replaceAll("\t", "\\t")
  }"`;
}
