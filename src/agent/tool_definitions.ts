/**
 * Parsing of client tool definitions (§9) and of `toolChoice` values, shared by sessions and game methods.
 * @module
 */
import { BridgeError } from "../protocol/errors.ts";
import { isJsonObject, type JsonObject, type JsonValue } from "../protocol/json.ts";
import { Params, showValue } from "../protocol/params.ts";
import { convertSchemaWithOpenObjects, SchemaError, toolArgumentsTypeName } from "../schema/convert.ts";
import { type FreeFormObject, freeFormWarnings } from "../schema/free_form.ts";
import { type SchemaWarning, warningsFor } from "../schema/model_notes.ts";
import { RESPOND_DIRECTLY } from "./step_policy.ts";
import type { AgentTool, ToolChoice } from "./types.ts";

const TOOL_NAME = /^[A-Za-z0-9_.-]{1,64}$/;

/**
 * Parsed tools and the warnings they raised.
 *
 * @example
 * ```ts
 * import { type ParsedTools, parseToolDefinitions } from "@open-apple-models/bridge/engine";
 * const parsed: ParsedTools = parseToolDefinitions([{ name: "open_gate", description: "" }], {
 *   path: "tools",
 *   defaultTimeoutMs: 120_000,
 * });
 * parsed.warnings; // ["open_gate: no description; the model may not know when to call it."]
 * ```
 */
export interface ParsedTools {
  /** The tools, in the order given. */
  tools: AgentTool[];
  /**
   * Description and schema warnings, prefixed with the tool name; an object without properties and what only
   * some models enforce are worded for no model known (what the on-device and scripted models make of it).
   */
  warnings: string[];
  /**
   * {@link ParsedTools.warnings} worded for the model (`LanguageModel.kind`) that will call the tools, once it
   * is known: the same warnings in the same order, except that an object the model fills is not warned about
   * (see `freeFormWarnings`), and a `llama` model's are worded for what its grammar enforces (`model_notes.ts`). For a method that reads the tools before its model, as `session/create` does.
   */
  warningsFor(model: string): string[];
}

/**
 * One tool's warnings: its description's, then its schema's (some worded per model: `model_notes.ts`), then its
 * objects without properties (worded per model).
 */
interface ToolWarnings {
  name: string;
  fixed: string[];
  notes: readonly SchemaWarning[];
  freeForm: FreeFormObject[];
}

/** The warnings of `tools` in order, the objects without properties worded for `model` (undefined: none known). */
function renderWarnings(tools: readonly ToolWarnings[], model: string | undefined): string[] {
  const out: string[] = [];
  for (const { name, fixed, notes, freeForm } of tools) {
    out.push(...fixed);
    for (const w of warningsFor(notes, { model, target: "arguments" })) out.push(`${name}: ${w}`);
    // A tool's `{"type": "object"}` is a tool without arguments (plainObjects false).
    for (const w of freeFormWarnings(freeForm, { model, plainObjects: false })) out.push(`${name}: ${w}`);
  }
  return out;
}

/**
 * Pushes `parsed`'s warnings onto `warnings`, worded for no model known, and returns what words them for the
 * model once it is known, in their place: for a method that reads its tools before its model (the order of
 * its checks is the wire contract's). Call it before anything is inserted ahead of them.
 *
 * @example
 * ```ts
 * import { parseToolDefinitions, placeToolWarnings } from "./tool_definitions.ts";
 * const stats = { type: "object", properties: { stats: { type: "object", additionalProperties: true } } };
 * const parsed = parseToolDefinitions([{ name: "set", description: "Sets.", parameters: stats }], {
 *   path: "tools",
 *   defaultTimeoutMs: null,
 * });
 * const warnings: string[] = [];
 * const forModel = placeToolWarnings(warnings, parsed); // "…: the on-device and scripted models generate it as {}; …"
 * forModel("scripted"); // warnings: ["set: #/properties/stats: free-form object (…) is generated as {}; …"]
 * ```
 */
export function placeToolWarnings(
  warnings: string[],
  parsed: Pick<ParsedTools, "warnings" | "warningsFor">,
): (model: string) => void {
  const at = warnings.length;
  const count = parsed.warnings.length;
  warnings.push(...parsed.warnings);
  return (model) => {
    if (count > 0) warnings.splice(at, count, ...parsed.warningsFor(model));
  };
}

/** The parsed tools with nothing to warn about. */
function noWarnings(tools: AgentTool[]): ParsedTools {
  return { tools, warnings: [], warningsFor: () => [] };
}

/**
 * Converts a schema for a param path (`where.path`, its root named `where.rootName`); a conversion error
 * becomes -32007 with `data.path`/`data.schemaPath`. The warnings about objects without properties are not in
 * `warnings`: they depend on the model, so the caller adds `freeFormWarnings(freeForm, …)` for the one it uses.
 * `warnings` are worded for no model in particular; `warningsFor(warningNotes, model)` words them for one
 * (a `llama` model enforces more of the schema than the on-device one).
 */
export function convertForParam(
  schema: JsonValue,
  where: { rootName: string; path: string },
): {
  generationSchema: JsonObject;
  warnings: string[];
  freeForm: FreeFormObject[];
  warningNotes: readonly SchemaWarning[];
} {
  const { rootName, path } = where;
  try {
    const { generationSchema, warnings, freeForm, warningNotes } = convertSchemaWithOpenObjects(
      schema,
      rootName,
    );
    return { generationSchema, warnings, freeForm, warningNotes };
  } catch (error) {
    if (error instanceof SchemaError) {
      throw BridgeError.of("invalid_schema", `${path}: ${error.message} (at ${error.schemaPath})`, {
        path,
        schemaPath: error.schemaPath,
      }).withCause(error);
    }
    if (error instanceof RangeError) {
      throw BridgeError.of("invalid_schema", `${path}: the schema nests too deeply (at #)`, {
        path,
        schemaPath: "#",
      });
    }
    throw error;
  }
}

/**
 * Where {@link parseToolDefinitions} reads from, and the timeout of tools that name none.
 *
 * @example
 * ```ts
 * import { parseToolDefinitions, type ToolDefinitionsParam } from "@open-apple-models/bridge/engine";
 * // Tools that name no `timeoutSeconds` wait forever (null).
 * const param: ToolDefinitionsParam = { path: "requests[2].tools", defaultTimeoutMs: null };
 * parseToolDefinitions([{ name: "look", description: "Look around." }], param).tools[0].timeoutMs; // null
 * ```
 */
export interface ToolDefinitionsParam {
  /** The parameter's name in error messages (`tools`, `requests[2].tools`, …). */
  path: string;
  /** The timeout of tools without `timeoutSeconds`, in ms (null = wait forever). */
  defaultTimeoutMs: number | null;
  /**
   * When given, a definition that fails its own checks (its name, `execution`, `parameters`, timeout) is left
   * out and passed here with its index, instead of failing the whole array. A repeated name still fails: the
   * set is checked as one. Only the checks' errors are passed; anything else thrown (a bug) is not caught.
   */
  skipInvalid?: (error: BridgeError, index: number) => void;
}

/** A definition's name (`raw` at `at`), checked: 1–64 allowed characters, not the reserved one. */
function toolName(raw: JsonValue, at: string): string {
  if (!isJsonObject(raw)) throw BridgeError.invalidParams(`'${at}' must be an object.`);
  const def = isJsonObject(raw.function) ? raw.function : raw;
  const name = def.name;
  if (typeof name !== "string" || !TOOL_NAME.test(name)) {
    throw BridgeError.invalidParams(
      `'${at}.name' must be 1-64 ASCII letters, digits, '_', '-' or '.' (write other languages in its ` +
        `description); got '${typeof name === "string" ? name : showValue(name ?? null)}'.`,
    );
  }
  if (name === RESPOND_DIRECTLY) {
    throw BridgeError.invalidParams(`'${RESPOND_DIRECTLY}' is reserved for ToolChoice.explicit.`);
  }
  return name;
}

/** The tool a definition with a checked name describes, and its warnings. */
function toolOf(
  raw: JsonObject,
  place: { name: string; at: string; defaultTimeoutMs: number | null },
): { tool: AgentTool; warnings: ToolWarnings } {
  const { name, at, defaultTimeoutMs } = place;
  const def = isJsonObject(raw.function) ? raw.function : raw;
  const execution = raw.execution ?? def.execution;
  if (execution !== undefined && execution !== null && execution !== "client") {
    throw BridgeError.invalidParams(
      `'${at}.execution' must be "client" (the engine executes the tool via tool/call); got '${
        typeof execution === "string" ? execution : showValue(execution)
      }'.`,
    );
  }
  let parameters: JsonValue = def.parameters ?? { type: "object", properties: {} };
  if (typeof parameters === "string") {
    try {
      parameters = JSON.parse(parameters);
    } catch {
      throw BridgeError.invalidParams(`'${at}.parameters' must be a JSON Schema object.`);
    }
  }
  if (!isJsonObject(parameters)) {
    throw BridgeError.invalidParams(`'${at}.parameters' must be a JSON Schema object.`);
  }
  const description = typeof def.description === "string" ? def.description : "";
  const defParams = new Params(def, `${at}.`);
  const rawParams = new Params(raw, `${at}.`);
  const timeout = defParams.optionalSeconds("timeoutSeconds") ??
    rawParams.optionalSeconds("timeoutSeconds");
  const conversion = convertForParam(parameters, {
    rootName: toolArgumentsTypeName(name),
    path: `${at}.parameters`,
  });
  const fixed: string[] = [];
  if (description.trim() === "") {
    fixed.push(`${name}: no description; the model may not know when to call it.`);
  }
  const tool: AgentTool = {
    name,
    description,
    jsonSchema: parameters,
    generationSchema: conversion.generationSchema,
    execution: "client",
    timeoutMs: timeout === undefined ? defaultTimeoutMs : timeout,
    definition: raw,
  };
  return { tool, warnings: { name, fixed, notes: conversion.warningNotes, freeForm: conversion.freeForm } };
}

/**
 * Parses an array of tool definitions (bare or OpenAI `{"type": "function", "function": {…}}` form).
 *
 * @example
 * ```ts
 * import { parseToolDefinitions } from "@open-apple-models/bridge/engine";
 * const parsed = parseToolDefinitions([{ name: "open_gate", description: "Opens a gate." }], {
 *   path: "tools",
 *   defaultTimeoutMs: 120_000,
 * });
 * parsed.tools[0].name; // "open_gate"
 * ```
 */
export function parseToolDefinitions(value: JsonValue | undefined, param: ToolDefinitionsParam): ParsedTools {
  const { path, defaultTimeoutMs, skipInvalid } = param;
  if (value === undefined || value === null) return noWarnings([]);
  if (!Array.isArray(value)) {
    throw BridgeError.invalidParams(`'${path}' must be an array of tool definitions.`);
  }
  const tools: AgentTool[] = [];
  const warnings: ToolWarnings[] = [];
  /** The index of each name seen so far. */
  const seen = new Map<string, number>();
  value.forEach((raw, i) => {
    const at = `${path}[${i}]`;
    /** Runs a check; with `skipInvalid`, a failing definition is left out (returns null). */
    const checked = <T>(check: () => T): T | null => {
      if (skipInvalid === undefined) return check();
      try {
        return check();
      } catch (error) {
        if (!(error instanceof BridgeError)) throw error;
        skipInvalid(error, i);
        return null;
      }
    };
    const name = checked(() => toolName(raw, at));
    if (name === null) return;
    const first = seen.get(name);
    if (first !== undefined) {
      throw BridgeError.invalidParams(
        `'${at}.name' must be unique: '${name}' is also the name of '${path}[${first}]'.`,
      );
    }
    seen.set(name, i);
    const parsed = checked(() => toolOf(raw as JsonObject, { name, at, defaultTimeoutMs }));
    if (parsed === null) return;
    const w = parsed.warnings;
    if (w.fixed.length > 0 || w.notes.length > 0 || w.freeForm.length > 0) {
      warnings.push(parsed.warnings);
    }
    tools.push(parsed.tool);
  });
  if (warnings.length === 0) return noWarnings(tools);
  return {
    tools,
    warnings: renderWarnings(warnings, undefined),
    warningsFor: (m) => renderWarnings(warnings, m),
  };
}

/** A configured default tool timeout in seconds as milliseconds; 0 (or less) means none (null). */
export function toolTimeoutMsOf(seconds: number): number | null {
  return seconds > 0 ? Math.round(seconds * 1000) : null;
}

/** Warning when more than 5 tools are offered. */
export function toolCountWarning(count: number): string | null {
  return count > 5
    ? `${count} tools: Apple recommends at most 3-5 tools per request on-device; narrow them per turn with 'enabledTools'.`
    : null;
}

/**
 * Parses a `toolChoice` value at `path` (`auto`, `none`, `required`, `explicit`, `{"tool": n}`, OpenAI form).
 *
 * @example
 * ```ts
 * import { parseToolChoice } from "@open-apple-models/bridge/engine";
 * const openAIForm = { type: "function", function: { name: "open_gate" } };
 * parseToolChoice(openAIForm, "toolChoice"); // { tool: "open_gate" }
 * parseToolChoice("any", "toolChoice"); // "required"
 * ```
 */
export function parseToolChoice(value: JsonValue, path: string): ToolChoice {
  if (typeof value === "string") {
    if (value === "auto" || value === "none" || value === "required" || value === "explicit") return value;
    if (value === "any") return "required";
  } else if (isJsonObject(value)) {
    if (typeof value.tool === "string" && value.tool !== "") return { tool: value.tool };
    if (typeof value.name === "string" && value.name !== "") return { tool: value.name };
    if (
      value.type === "function" && isJsonObject(value.function) && typeof value.function.name === "string"
    ) {
      return { tool: value.function.name };
    }
    throw BridgeError.invalidParams(`'${path}' object must be {"tool": "<name>"}.`);
  }
  throw BridgeError.invalidParams(
    `'${path}' must be "auto", "none", "required", "explicit" or {"tool": "<name>"}; got ${
      showValue(value)
    }.`,
  );
}

/** The JSON form of a tool choice (as sent by clients). */
export function toolChoiceJson(choice: ToolChoice): JsonValue {
  return typeof choice === "string" ? choice : { tool: choice.tool };
}
