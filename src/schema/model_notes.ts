/**
 * Schema warnings whose truth depends on the model that generates the schema. The on-device and scripted
 * models follow the generation schema: a number `enum` comes back as strings, `minLength` is only described.
 * A `llama` (GGUF) model's grammar generates the client's enum and const values themselves, and enforces
 * string lengths and the `date`, `time` and `date-time` formats; in an answer also numeric bounds (exclusive
 * ones too, up to 16 integer digits) and object or array values, in a tool's arguments only a short
 * integer range (`grammar_rules.ts`). A `llama` or `openai` model's backend checks the formats of
 * `schema/formats` in every answer and tool call (a bad one is generated once more). The conversion records
 * these warnings as notes; {@link warningsFor} words them for the model in use: the on-device model's words
 * when the model is not `llama` or `openai` or not known (`schema/validate`), the llama model's own or none
 * when it loses nothing, and for an `openai` model that a checked format is checked and that an enum, a
 * const or an exclusive bound goes to the server as written and is refused by validation when broken.
 * @module
 */
import type { JsonValue } from "../protocol/json.ts";
import { describeValue, safeJson } from "./keyword_values.ts";
import {
  ANSWER_GRAMMAR_FORMATS,
  GRAMMAR_FORMATS,
  grammarEnforcesRange,
  grammarFormat,
  type GrammarTarget,
  MAX_ENUMERATED_RANGE,
  MAX_GRAMMAR_LENGTH,
} from "./grammar_rules.ts";
import { MAX_GRAMMAR_DIGITS } from "./grammar_numbers.ts";
import { CHECKED_FORMATS, isCheckedFormat } from "./formats.ts";

/** A warning whose text depends on the model (see the module). */
export type ModelNote =
  | {
    /** An integer `enum`, generated as its range on the on-device model. */
    kind: "integer-enum";
    path: string;
    min: number;
    max: number;
    /** True when a value was past the safe integers: the range stops at them. */
    clamped?: boolean;
  }
  | {
    /** An `enum` of other values than strings and integers, generated as strings on the on-device model. */
    kind: "stringified-enum";
    path: string;
    values: readonly JsonValue[];
    /**
     * True when all are primitive: node-llama-cpp's grammar generates them (a tool's arguments); an answer's
     * grammar generates objects and arrays too.
     */
    literal: boolean;
  }
  | {
    /** A `const` that is no string, described on the on-device model. */
    kind: "non-string-const";
    path: string;
    value: JsonValue;
    /** True for a primitive or null, which node-llama-cpp's grammar generates (see `stringified-enum`). */
    literal: boolean;
  }
  | {
    /** A keyword described to the on-device model but not enforced (`minLength`, `format`, `uniqueItems`…). */
    kind: "described";
    path: string;
    key: string;
    value: JsonValue;
    /** True when the GGUF grammar enforces it (`grammar_rules.ts`). */
    grammar: boolean;
  }
  | {
    /** A `number`'s exclusive bound, enforced as inclusive by the on-device model (as it is by the GGUF grammar). */
    kind: "exclusive-bounds";
    path: string;
  }
  | {
    /** An `integer` or `number` bound: enforced by the on-device model, by the GGUF grammar as far as it can write it. */
    kind: "range";
    path: string;
    type: "integer" | "number";
    low?: number;
    high?: number;
  };

/** One warning of a conversion: its text, or a note worded for the model ({@link warningsFor}). */
export type SchemaWarning = string | ModelNote;

/**
 * The warnings of a conversion for the model in use (`LanguageModel.kind`; undefined when none is known), in
 * their order, each once; `target` says whether the schema is an answer's or a tool's arguments (a llama
 * model's grammar enforces more in an answer).
 *
 * @example
 * ```ts
 * import { warningsFor } from "./model_notes.ts";
 * const note = { kind: "integer-enum", path: "#/properties/level", min: 1, max: 3 } as const;
 * warningsFor([note], { model: "system" });
 * // ["#/properties/level: integer enum is enforced as a range 1...3; exact values are described"]
 * warningsFor([note], { model: "llama" }); // []: a llama model generates 1, 2 or 3
 * ```
 */
export function warningsFor(
  warnings: readonly SchemaWarning[],
  options: { model?: string; target?: GrammarTarget } = {},
): string[] {
  const { model, target = "answer" } = options;
  const out = new Set<string>();
  for (const warning of warnings) {
    if (typeof warning === "string") {
      out.add(warning);
      continue;
    }
    const text = model === "llama"
      ? llamaText(warning, target)
      : model === "openai"
      ? openaiText(warning, target)
      : onDeviceText(warning);
    if (text !== null) out.add(`${warning.path}: ${text}`);
  }
  return [...out];
}

/** A note's text for the on-device and scripted models (and when the model is not known). */
function onDeviceText(note: ModelNote): string | null {
  switch (note.kind) {
    case "integer-enum":
      return `integer enum is enforced as a range ${note.min}...${note.max}` +
        `${note.clamped ? ", clamped to the safe integers (a value past them cannot be answered)" : ""}; ` +
        "exact values are described";
    case "stringified-enum":
      return stringifiedEnumText(note.values);
    case "non-string-const":
      return `non-string const ${safeJson(note.value)} is described instead of enforced`;
    case "described":
      return `${keywordText(note.key, note.value)} is described to the model but not enforced`;
    case "exclusive-bounds":
      return "exclusive number bounds are enforced as inclusive";
    case "range":
      return null;
  }
}

/**
 * The keywords that are only described to a model but that the llama and openai backends' validation (ajv,
 * `openai_validate.ts`) checks in every answer and tool call, regenerating one that breaks them. ajv does not
 * check `contentEncoding`, `contentMediaType` or (in its draft 7) `dependentRequired`: those stay described.
 */
const VALIDATED_KEYWORDS: ReadonlySet<string> = new Set([
  "minLength",
  "maxLength",
  "pattern",
  "uniqueItems",
  "contains",
  "multipleOf",
  "minProperties",
  "maxProperties",
  "patternProperties",
]);

/**
 * A note's text for an `openai` model: the server gets the client's schema as written, so an enum, const or
 * exclusive bound is the server's to enforce (or not), and the backend's validation refuses what breaks it;
 * for a described keyword, the on-device model's text and what validation refuses and regenerates.
 */
function openaiText(note: ModelNote, target: GrammarTarget): string | null {
  switch (note.kind) {
    case "integer-enum":
      return `integer enum ${SENT_AS_WRITTEN}: ${notMemberText(target)}`;
    case "stringified-enum": {
      const { kind, example } = enumKind(note.values);
      const such = example === undefined ? "" : ` (such as the string "${example}")`;
      return `${kind} enum ${SENT_AS_WRITTEN}: ${notMemberText(target, such)}`;
    }
    case "non-string-const":
      return `non-string const ${safeJson(note.value)} ${SENT_AS_WRITTEN}: ` +
        (target === "arguments"
          ? "arguments with another value fail validation and are generated once more"
          : "an answer with another value fails validation and is generated once more");
    case "exclusive-bounds":
      return "exclusive number bounds are sent to the server as written (not every server enforces them): " +
        (target === "arguments"
          ? "arguments on a bound fail validation and are generated once more"
          : "an answer on a bound fails validation and is generated once more");
  }
  const text = onDeviceText(note);
  if (note.kind !== "described" || text === null) return text;
  if (note.key === "format") {
    return typeof note.value === "string" && isCheckedFormat(note.value)
      ? `'format' ${JSON.stringify(note.value)} is described to the model but not enforced: ` +
        checkedFormatText(note.value, target)
      : text;
  }
  return VALIDATED_KEYWORDS.has(note.key) ? `${text}: ${refusedText(note.key, target)}` : text;
}

/** What an `openai` model's server gets of an enum or const (see {@link openaiText}). */
const SENT_AS_WRITTEN = "is sent to the server as written (not every server enforces it)";

/** What happens to an answer (or tool arguments) holding a value an enum lacks; `such` names one. */
function notMemberText(target: GrammarTarget, such = ""): string {
  return target === "arguments"
    ? `arguments that are not one of its values${such} fail validation and are generated once more`
    : `an answer that is not one of its values${such} fails validation and is generated once more`;
}

/** What happens to an answer (or tool arguments) outside a checked format. */
function checkedFormatText(format: string, target: GrammarTarget): string {
  return target === "arguments"
    ? `arguments that are not a valid ${format} fail validation and are generated once more`
    : `an answer that is not a valid ${format} fails validation and is generated once more`;
}

/** What happens to an answer (or tool arguments) that breaks a keyword validation checks. */
function refusedText(key: string, target: GrammarTarget): string {
  const breaks = key === "pattern" ? "does not match" : "breaks";
  return target === "arguments"
    ? `arguments that ${
      breaks === "breaks" ? "break" : "do not match"
    } it fail validation and are generated once more`
    : `an answer that ${breaks} it fails validation and is generated once more`;
}

/** A note's text for a `llama` model; null where its grammar enforces what the schema asks. */
function llamaText(note: ModelNote, target: GrammarTarget): string | null {
  switch (note.kind) {
    case "integer-enum":
      return null;
    case "stringified-enum":
    case "non-string-const":
      return note.literal || target === "answer" ? null : onDeviceText(note);
    case "described":
      if (note.grammar && !(note.key === "format" && typeof note.value === "string")) return null;
      if (note.grammar && grammarFormat(note.value as string, target)) return argumentsDateText(note, target);
      return describedText(note.key, note.value, target);
    case "exclusive-bounds":
      // Enforced as exclusive where the range is enforced; where it is not, the range's own note says so.
      return null;
    case "range":
      if (grammarEnforcesRange(note, target)) return null;
      if (target === "arguments") {
        return `${note.type} ${rangeText(note.low, note.high)} is not enforced in a llama model's tool ` +
          `arguments (its grammar there enforces only integer ranges of up to ${MAX_ENUMERATED_RANGE + 1} ` +
          "values): arguments outside it fail validation and are generated once more";
      }
      return `${note.type} ${rangeText(note.low, note.high)} is not enforced on a llama model (its grammar ` +
        `writes numbers of up to ${MAX_GRAMMAR_DIGITS} integer digits and no exponent): an answer outside it ` +
        "fails validation and is generated once more";
  }
}

/** `pattern '^a+$'` (the reference's wording), else `'uniqueItems'`. */
function keywordText(key: string, value: JsonValue): string {
  return key === "pattern" && typeof value === "string" ? `pattern '${value}'` : `'${key}'`;
}

/**
 * The llama text of a format its grammar enforces: none in an answer; in tool arguments (node-llama-cpp's own
 * grammar) a date's day is not held to the calendar.
 */
function argumentsDateText(
  note: { key: string; value: JsonValue },
  target: GrammarTarget,
): string | null {
  if (target !== "arguments" || note.key !== "format") return null;
  if (note.value !== "date" && note.value !== "date-time") return null;
  return `'format' ${
    JSON.stringify(note.value)
  } is only shaped by a llama model's grammar in tool arguments ` +
    "(any day up to 31 in any month, such as 2024-02-30): arguments with a day the calendar lacks fail " +
    "validation and are generated once more";
}

/** The llama text of a keyword its grammar does not enforce. */
function describedText(key: string, value: JsonValue, target: GrammarTarget): string {
  const shown = typeof value === "string" ? JSON.stringify(value) : describeValue(value);
  if (key === "format") {
    const formats = [...GRAMMAR_FORMATS, ...(target === "answer" ? ANSWER_GRAMMAR_FORMATS : [])];
    const grammar = target === "answer"
      ? `'format' ${shown} is not enforced on a llama model (its grammar enforces the formats ${
        formats.join(", ")
      }`
      : `'format' ${shown} is not enforced in a llama model's tool arguments (its grammar there enforces the ` +
        `formats ${formats.join(", ")}`;
    if (typeof value === "string" && isCheckedFormat(value)) {
      return `${grammar}): ${checkedFormatText(value, target)}`;
    }
    const checked = Object.keys(CHECKED_FORMATS).filter((f) => !formats.includes(f));
    return `${grammar}, and validation checks ${checked.join(", ")}; other formats are not checked)`;
  }
  if (key === "minLength" || key === "maxLength") {
    return `'${key}' ${shown} is not enforced on a llama model (its grammar enforces lengths up to ` +
      `${MAX_GRAMMAR_LENGTH} characters, and none beside a format): ${refusedText(key, target)}`;
  }
  const text = `${keywordText(key, value)} is not enforced on a llama model`;
  return VALIDATED_KEYWORDS.has(key) ? `${text}: ${refusedText(key, target)}` : text;
}

/** `range 0...1`, `minimum 0`, `maximum 9`. */
function rangeText(low: number | undefined, high: number | undefined): string {
  if (low !== undefined && high !== undefined) return `range ${low}...${high}`;
  return low !== undefined ? `minimum ${low}` : `maximum ${high}`;
}

/**
 * The warning of an enum generated as strings: "mixed-type" (the reference's text) only when its values are
 * of several types; an enum of booleans or of numbers says what the answer then holds.
 */
function stringifiedEnumText(values: readonly JsonValue[]): string {
  const { kind, example } = enumKind(values);
  if (example === undefined) return `${kind} enum is generated as strings`;
  return `${kind} enum is generated as strings: the on-device and scripted models answer the string ` +
    `"${example}", not ${example}`;
}

/**
 * What an enum of other values than strings holds: `boolean` or `number` (with its first value as JSON, the
 * string the on-device model answers instead), or `mixed-type`.
 */
function enumKind(values: readonly JsonValue[]): { kind: string; example?: string } {
  const kinds = new Set(values.map((v) => Array.isArray(v) ? "array" : v === null ? "null" : typeof v));
  if (kinds.size === 1 && (kinds.has("boolean") || kinds.has("number"))) {
    return { kind: [...kinds][0], example: safeJson(values[0]) };
  }
  return { kind: "mixed-type" };
}
