/**
 * Checks what an OpenAI-compatible server returned, never trusting it: tool calls must name a tool offered
 * in the step and carry a JSON object valid against the tool's JSON Schema; structured answers must be JSON
 * valid against the response schema, string `format`s included (`schema/formats`). Problems are returned as
 * text (the backend retries, then fails).
 * @module
 */
import { Ajv, type ValidateFunction } from "../schema/ajv.generated.js";
import { BridgeError } from "../protocol/errors.ts";
import { cloneJson, isJsonObject, type JsonObject, type JsonValue } from "../protocol/json.ts";
import type { StepTool, StepToolCall } from "./language_model.ts";
import type { RawToolCall } from "./openai_completion.ts";
import { numericExclusiveBounds } from "../schema/draft4_bounds.ts";
import { orderBySchema } from "../schema/order.ts";
import { CHECKED_FORMATS } from "../schema/formats.ts";
import { headCharacters } from "../util/text.ts";

// An instance per schema: an instance keeps every schema it compiled (its cache and the scope of its
// generated code), so a shared one grew with every schema of a long game. Schemas are checked against the
// meta-schema by one shared instance (made on first use), which compiles only the meta-schema: compiling it
// anew per schema would cost ten times the compile. `addUsedSchema: false` lets schemas with equal `$id`s
// coexist. Without `formats` ajv ignores every format: the checked ones are given (others stay ignored).
const newAjv = (validateSchema: boolean) =>
  new Ajv({
    strict: false,
    allErrors: false,
    logger: false,
    addUsedSchema: false,
    validateFormats: true,
    formats: { ...CHECKED_FORMATS },
    validateSchema,
  });
let metaChecker: Ajv | undefined;
const compiled = new WeakMap<JsonObject, ValidateFunction>();

/** A compiled validator for a client schema (cached per schema object). */
export function validatorFor(schema: JsonObject, what: string): ValidateFunction {
  const cached = compiled.get(schema);
  if (cached !== undefined) return cached;
  const copy = cloneJson(schema);
  // Ajv's default dialect is draft-07; a `$schema` naming another draft would make compile fail.
  if (Object.hasOwn(copy, "$schema")) delete copy.$schema;
  // Draft-4 `exclusiveMinimum: true` (which the conversion reads) is invalid in draft 7: give the bound instead.
  numericExclusiveBounds(copy);
  let validate: ValidateFunction;
  try {
    (metaChecker ??= newAjv(true)).validateSchema(copy, true);
    validate = newAjv(false).compile(copy);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw BridgeError.of("invalid_schema", `The JSON Schema of ${what} cannot be used: ${message}`);
  }
  compiled.set(schema, validate);
  return validate;
}

/** Ajv's errors as one short sentence, e.g. `/city must be string`. */
export function describeErrors(validate: ValidateFunction): string {
  const errors = validate.errors ?? [];
  if (errors.length === 0) return "invalid";
  return errors.slice(0, 3).map((e) =>
    `${e.instancePath === "" ? "(root)" : e.instancePath} ${e.message ?? "is invalid"}`
  )
    .join("; ");
}

/** Result of a check: a value or a problem description. */
export type Checked<T> = { ok: true; value: T } | { ok: false; problem: string };

/**
 * Checks a batch of tool calls against the tools of the step. Empty argument text counts as `{}`.
 */
export function checkToolCalls(calls: RawToolCall[], tools: StepTool[]): Checked<StepToolCall[]> {
  const byName = new Map(tools.map((tool) => [tool.name, tool]));
  const seenIds = new Set<string>();
  const out: StepToolCall[] = [];
  for (const call of calls) {
    const tool = byName.get(call.name);
    if (tool === undefined) {
      const offered = tools.length === 0
        ? "no tools were offered"
        : `offered: ${[...byName.keys()].join(", ")}`;
      return { ok: false, problem: `the model called an unknown tool '${call.name}' (${offered})` };
    }
    const text = call.arguments.trim() === "" ? "{}" : call.arguments;
    let args: JsonValue;
    try {
      args = JSON.parse(text) as JsonValue;
    } catch {
      return {
        ok: false,
        problem: `the arguments of '${call.name}' are not valid JSON: ${shorten(call.arguments)}`,
      };
    }
    if (!isJsonObject(args)) {
      return {
        ok: false,
        problem: `the arguments of '${call.name}' are not a JSON object: ${shorten(call.arguments)}`,
      };
    }
    const validate = validatorFor(tool.jsonSchema, `tool '${tool.name}'`);
    if (!validate(args)) {
      return {
        ok: false,
        problem: `the arguments of '${call.name}' do not match its schema: ${describeErrors(validate)}`,
      };
    }
    const ordered = orderBySchema(args, tool.jsonSchema) as JsonObject;
    const result: StepToolCall = { name: call.name, arguments: ordered };
    if (call.id !== undefined && !seenIds.has(call.id)) {
      seenIds.add(call.id);
      result.nativeId = call.id;
    }
    out.push(result);
  }
  return { ok: true, value: out };
}

/** Removes one surrounding Markdown code fence, if the whole answer is fenced. */
export function stripFence(text: string): string {
  const match = /^\s*```[A-Za-z0-9_-]*\s*\n?([\s\S]*?)\n?\s*```\s*$/.exec(text);
  return match === null ? text.trim() : match[1].trim();
}

/** Parses and validates a structured answer; the value comes back in the schema's property order. */
export function checkStructured(content: string, schema: JsonObject): Checked<JsonValue> {
  const text = stripFence(content);
  let value: JsonValue;
  try {
    value = JSON.parse(text) as JsonValue;
  } catch {
    return { ok: false, problem: `the answer is not valid JSON: ${shorten(content)}` };
  }
  const validate = validatorFor(schema, "the response schema");
  if (!validate(value)) {
    return {
      ok: false,
      problem: `the answer does not match the response schema: ${describeErrors(validate)}`,
    };
  }
  return { ok: true, value: orderBySchema(value, schema) };
}

function shorten(text: string): string {
  if (text === "") return "(empty)";
  // Characters as seen: an emoji (with its skin tone) or an accented letter is never cut in two.
  return headCharacters(text, 120) === null ? text : `${headCharacters(text, 117)}...`;
}
