/**
 * What the GGUF backend's grammar (node-llama-cpp 3.21's JSON-schema grammar) can enforce beyond the generation
 * schema: string lengths, the `date`, `time` and `date-time` formats; in an answer, the `uuid` and `ipv4`
 * formats and numeric bounds its rules can write (`grammar_numbers.ts`), in a tool's arguments only integer
 * ranges short enough to list.
 * One place for the rules, read by the grammar conversion (`src/models/llama_schema.ts`) and by the warnings
 * a `llama` model's schema gets (`model_notes.ts`), so each warning says what that grammar does.
 * @module
 */
import { type JsonObject, ownValue } from "../protocol/json.ts";
import { integerRangeGbnf, numberRangeGbnf } from "./grammar_numbers.ts";
import { NAME_FORMATS } from "./grammar_names.ts";

/**
 * What a grammar is for: a structured answer (node-llama-cpp's grammar text with rules of our own) or a
 * tool's arguments (node-llama-cpp's function calling, which builds its grammar from the schema alone).
 */
export type GrammarTarget = "answer" | "arguments";

/** The `format`s the grammar generates (`2024-05-01`, `13:45:00Z`, `2024-05-01T13:45:00.000+02:00`). */
export const GRAMMAR_FORMATS: readonly string[] = ["date", "time", "date-time"];

/**
 * The `format`s only a structured answer's grammar generates, by rules of our own (`grammar_names.ts`);
 * node-llama-cpp's grammar of a tool's arguments knows none of them (they are validated there).
 */
export const ANSWER_GRAMMAR_FORMATS: readonly string[] = NAME_FORMATS;

/**
 * Whether the grammar of `target` generates `format`.
 *
 * @example
 * ```ts
 * import { grammarFormat } from "./grammar_rules.ts";
 * grammarFormat("uuid", "answer"); // true
 * grammarFormat("uuid", "arguments"); // false
 * grammarFormat("date", "arguments"); // true (any day up to 31, though: validation holds it to the calendar)
 * ```
 */
export function grammarFormat(format: string, target: GrammarTarget): boolean {
  return GRAMMAR_FORMATS.includes(format) || (target === "answer" && ANSWER_GRAMMAR_FORMATS.includes(format));
}

/**
 * The longest `minLength`/`maxLength` the grammar enforces: llama.cpp refuses a grammar whose repetition count
 * times the rules it repeats reaches 2000 (a string character can count as two rules, so 1000 already fails);
 * a longer bound is left to the validation of the answer.
 */
export const MAX_GRAMMAR_LENGTH = 500;

/**
 * In a tool's arguments (node-llama-cpp's own grammar), integer ranges up to this span are generated as the
 * list of their values (`0…100` for a percentage); an answer's grammar has a rule for any range.
 */
export const MAX_ENUMERATED_RANGE = 256;

/** What the grammar enforces of one string schema: a format, or its length bounds. */
export interface GrammarStringLimits {
  /**
   * One of {@link GRAMMAR_FORMATS} or {@link ANSWER_GRAMMAR_FORMATS} (the latter generated in an answer only);
   * when set, no length is enforced (a format has its own length).
   */
  format?: string;
  /** Fewest characters. */
  minLength?: number;
  /** Most characters. */
  maxLength?: number;
}

/** Whether a length bound is one the grammar takes: a whole number from 0 to {@link MAX_GRAMMAR_LENGTH}. */
function grammarLength(value: unknown): value is number {
  return typeof value === "number" && Number.isInteger(value) && value >= 0 && value <= MAX_GRAMMAR_LENGTH;
}

/**
 * The constraints of a string schema (the client's JSON Schema) that the grammar enforces: its `format` when
 * the grammar knows it, else its `minLength`/`maxLength` when each is a whole number up to
 * {@link MAX_GRAMMAR_LENGTH} (and the two leave some length possible). Undefined when it enforces none.
 *
 * @example
 * ```ts
 * import { grammarStringLimits } from "./grammar_rules.ts";
 * grammarStringLimits({ type: "string", format: "date", minLength: 3 }); // { format: "date" }
 * grammarStringLimits({ type: "string", minLength: 3, maxLength: 20 }); // { minLength: 3, maxLength: 20 }
 * grammarStringLimits({ type: "string", format: "email" }); // undefined
 * ```
 */
export function grammarStringLimits(schema: JsonObject): GrammarStringLimits | undefined {
  const format = ownValue(schema, "format");
  if (typeof format === "string" && grammarFormat(format, "answer")) return { format };
  const min = ownValue(schema, "minLength");
  const max = ownValue(schema, "maxLength");
  const limits: GrammarStringLimits = {};
  if (grammarLength(min) && min > 0) limits.minLength = min;
  if (grammarLength(max)) limits.maxLength = max;
  if (
    limits.minLength !== undefined && limits.maxLength !== undefined && limits.minLength > limits.maxLength
  ) {
    return undefined; // no string fits; the answer's validation says so
  }
  return Object.keys(limits).length === 0 ? undefined : limits;
}

/**
 * Whether the grammar enforces a string keyword of `schema` (`minLength`, `maxLength`, `format`).
 *
 * @example
 * ```ts
 * import { grammarEnforces } from "./grammar_rules.ts";
 * grammarEnforces({ type: "string", minLength: 3 }, "minLength"); // true
 * grammarEnforces({ type: "string", maxLength: 5000 }, "maxLength"); // false
 * ```
 */
export function grammarEnforces(schema: JsonObject, key: string): boolean {
  const limits = grammarStringLimits(schema);
  switch (key) {
    case "format":
      return limits?.format !== undefined;
    case "minLength":
      // `minLength: 0` asks for nothing.
      return limits?.minLength !== undefined || ownValue(schema, key) === 0;
    case "maxLength":
      return limits?.maxLength !== undefined;
    default:
      return false;
  }
}

/**
 * Whether node-llama-cpp's own grammar (a tool's arguments) enforces an integer range, as the list of its
 * values: both bounds, at most {@link MAX_ENUMERATED_RANGE} apart.
 *
 * @example
 * ```ts
 * import { enumeratesRange } from "./grammar_rules.ts";
 * enumeratesRange(0, 100); // true
 * enumeratesRange(0, undefined); // false
 * ```
 */
export function enumeratesRange(low: number | undefined, high: number | undefined): boolean {
  return low !== undefined && high !== undefined && high >= low && high - low <= MAX_ENUMERATED_RANGE;
}

/**
 * Whether the grammar enforces the numeric bounds `low`…`high` (either may be missing) of an `integer` or
 * `number`: in an answer, any the grammar's 16 integer digits can write (`grammar_numbers.ts`); in a tool's
 * arguments, only an integer range of up to {@link MAX_ENUMERATED_RANGE} + 1 values.
 *
 * @example
 * ```ts
 * import { grammarEnforcesRange } from "./grammar_rules.ts";
 * grammarEnforcesRange({ type: "number", low: 0, high: 1 }, "answer"); // true
 * grammarEnforcesRange({ type: "number", low: 0, high: 1 }, "arguments"); // false
 * grammarEnforcesRange({ type: "integer", low: 1e300 }, "answer"); // false
 * ```
 */
export function grammarEnforcesRange(
  range: { type: "integer" | "number"; low?: number; high?: number },
  target: GrammarTarget,
): boolean {
  const { type, low, high } = range;
  if (target === "arguments") return type === "integer" && enumeratesRange(low, high);
  return (type === "integer" ? integerRangeGbnf(low, high) : numberRangeGbnf({ low, high })) !== undefined;
}
