/**
 * Parsing a scripted model's steps (PROTOCOL.md §10) into a {@link Script}, with the bridge's `-32602`
 * messages, in a leaf module: the scripted model uses it, and so does the playground page, whose check of its
 * script must agree with the bridge's (it is bundled for the browser, so it imports no model backend).
 * @module
 */
import { AGENT_ERROR_CODES, BridgeError, isAgentErrorCode } from "./errors.ts";
import { isJsonObject, type JsonObject, type JsonValue } from "./json.ts";
import { didYouMean, nearestName } from "./edit_distance.ts";
import { unknownParameter } from "./params.ts";
import { idleStepMembers, knownStepMembers } from "./script_keys.ts";

/**
 * One step of a script (§10): text, tool calls, a JSON value, a template or an error, optionally delayed.
 *
 * @example
 * ```ts
 * import type { ScriptStep } from "@open-apple-models/bridge/engine";
 * const steps: ScriptStep[] = [
 *   { toolCalls: [{ name: "open_gate", arguments: { gate: "north" } }] },
 *   { template: "The gate says: {toolOutput}", delayMs: 20 },
 * ];
 * ```
 */
export type ScriptStep =
  & (
    | { text: string; chunks?: number }
    | { toolCalls: Array<{ name: string; arguments: JsonObject; id?: string }> }
    | { json: JsonValue }
    | { template: string }
    | { error: string; message?: string }
  )
  & { delayMs?: number };

/**
 * A parsed script.
 *
 * @example
 * ```ts
 * import { type Script, ScriptedModel } from "@open-apple-models/bridge/engine";
 * const script: Script = { steps: [{ text: "Halt!" }], fallback: { text: "Move along." } };
 * const model = new ScriptedModel(script);
 * ```
 */
export interface Script {
  /** Steps played one per inference. */
  steps: ScriptStep[];
  /** Played when the steps run out (default `{"text": "(script exhausted)"}`). */
  fallback?: ScriptStep;
}

function invalid(message: string): BridgeError {
  return BridgeError.invalidParams(message);
}

/** Parses one step at `path` (e.g. `model.steps[0]`). */
export function parseScriptStep(value: JsonValue, path: string): ScriptStep {
  if (!isJsonObject(value)) throw invalid(`'${path}' must be an object.`);
  let delayMs: number | undefined;
  if (Object.hasOwn(value, "delayMs") && value.delayMs !== null) {
    const d = value.delayMs;
    if (typeof d !== "number" || !Number.isInteger(d) || d < 0 || d > 86_400_000) {
      throw invalid(`'${path}.delayMs' must be an integer from 0 to 86400000.`);
    }
    delayMs = d;
  }
  const extra = delayMs ? { delayMs } : {};
  const has = (k: string) => Object.hasOwn(value, k) && value[k] !== null;
  if (has("text")) {
    if (typeof value.text !== "string") throw invalid(`'${path}.text' must be a string.`);
    let chunks: number | undefined;
    if (has("chunks")) {
      const c = value.chunks;
      if (typeof c !== "number" || !Number.isInteger(c) || c < 1 || c > 100_000) {
        throw invalid(`'${path}.chunks' must be an integer from 1 to 100000.`);
      }
      chunks = c;
    }
    return { text: value.text, ...(chunks !== undefined ? { chunks } : {}), ...extra };
  }
  if (has("toolCalls")) {
    const calls = value.toolCalls;
    if (!Array.isArray(calls)) throw invalid(`'${path}.toolCalls' must be an array.`);
    if (calls.length === 0) throw invalid(`'${path}.toolCalls' must not be empty.`);
    const parsed = calls.map((c, i) => {
      const p = `${path}.toolCalls[${i}]`;
      if (!isJsonObject(c)) throw invalid(`'${p}' must be an object.`);
      if (typeof c.name !== "string" || c.name === "") {
        throw invalid(`'${p}.name' must be a non-empty string.`);
      }
      const args = c.arguments ?? {};
      if (!isJsonObject(args)) throw invalid(`'${p}.arguments' must be an object.`);
      if (c.id !== undefined && c.id !== null && typeof c.id !== "string") {
        throw invalid(`'${p}.id' must be a string.`);
      }
      return { name: c.name, arguments: args, ...(typeof c.id === "string" ? { id: c.id } : {}) };
    });
    return { toolCalls: parsed, ...extra };
  }
  if (Object.hasOwn(value, "json")) return { json: value.json, ...extra };
  if (has("template")) {
    if (typeof value.template !== "string") throw invalid(`'${path}.template' must be a string.`);
    return { template: value.template, ...extra };
  }
  if (has("error")) {
    const code = value.error;
    if (typeof code !== "string" || !isAgentErrorCode(code)) {
      const meant = typeof code === "string" ? nearestName(code, AGENT_ERROR_CODES) : undefined;
      throw invalid(
        `'${path}.error' must be one of: ${AGENT_ERROR_CODES.join(", ")}; got '${String(code)}'` +
          `${didYouMean(meant)}.`,
      );
    }
    if (value.message !== undefined && value.message !== null && typeof value.message !== "string") {
      throw invalid(`'${path}.message' must be a string.`);
    }
    return {
      error: code,
      ...(typeof value.message === "string" ? { message: value.message } : {}),
      ...extra,
    };
  }
  throw invalid(`'${path}' must contain one of 'text', 'toolCalls', 'json', 'template' or 'error'.`);
}

/**
 * Parses a script from a `model` object (`{type: "scripted", steps?, fallback?}`) or a bare steps array;
 * `path` names the value in `-32602` messages.
 *
 * @example
 * ```ts
 * import { parseScript } from "@open-apple-models/bridge/engine";
 * const script = parseScript({ type: "scripted", steps: [{ text: "Halt!" }] }, "model");
 * script.steps.length; // 1
 * ```
 */
export function parseScript(value: JsonValue, path: string): Script {
  if (Array.isArray(value)) return { steps: value.map((s, i) => parseScriptStep(s, `${path}[${i}]`)) };
  if (!isJsonObject(value)) throw invalid(`'${path}' must be an object with 'steps'.`);
  const steps = value.steps ?? [];
  if (!Array.isArray(steps)) throw invalid(`'${path}.steps' must be an array.`);
  const script: Script = { steps: steps.map((s, i) => parseScriptStep(s, `${path}.steps[${i}]`)) };
  if (value.fallback !== undefined && value.fallback !== null) {
    script.fallback = parseScriptStep(value.fallback, `${path}.fallback`);
  }
  return script;
}

/** The members of a scripted `model` object; any other is ignored (a step's are in `script_keys.ts`). */
const SCRIPT_KEYS: ReadonlySet<string> = new Set(["type", "steps", "fallback"]);

/**
 * Pushes the unknown members of step `value` at `path`, which parsed (so it is an object), to `warnings`, then
 * those its kind of step does not read (`chunks` in a `json` step).
 */
function stepWarnings(value: JsonObject, path: string, warnings: string[]): void {
  if (!isJsonObject(value)) return;
  for (const { member, meant } of knownStepMembers(value).unknown) {
    warnings.push(
      `Unknown parameter '${path}.${member}' was ignored${didYouMean(meant)}.`,
    );
  }
  for (const { member, why } of idleStepMembers(value)) {
    warnings.push(`'${path}.${member}' has no effect: ${why}.`);
  }
}

/**
 * The members of a script that {@link parseScript} accepted but nothing reads (`"step"` for `steps`,
 * `"delay"` for `delayMs`, a tool call's `"args"`): one "Unknown parameter '<path>' was ignored." each, in
 * the order of the keys (a step's, and its tool calls', where the step is). Computed once, when the model is
 * made; `value` must be a script `parseScript` accepted.
 *
 * @example
 * ```ts
 * import { parseScript, scriptWarnings } from "./script_parse.ts";
 * const value = { type: "scripted", steps: [{ text: "Hi", delay: 500 }] };
 * parseScript(value, "model");
 * scriptWarnings(value, "model"); // ["Unknown parameter 'model.steps[0].delay' was ignored (did you mean 'delayMs'?)."]
 * ```
 */
export function scriptWarnings(value: JsonValue, path: string): string[] {
  const warnings: string[] = [];
  if (Array.isArray(value)) {
    value.forEach((s, i) => stepWarnings(s as JsonObject, `${path}[${i}]`, warnings));
    return warnings;
  }
  if (!isJsonObject(value)) return warnings;
  for (const key of Object.keys(value)) {
    if (key === "steps" && Array.isArray(value.steps)) {
      value.steps.forEach((s, i) => stepWarnings(s as JsonObject, `${path}.steps[${i}]`, warnings));
    } else if (key === "fallback") {
      if (isJsonObject(value.fallback)) stepWarnings(value.fallback, `${path}.fallback`, warnings);
    } else if (!SCRIPT_KEYS.has(key)) {
      warnings.push(unknownParameter({ name: `${path}.${key}`, key }, SCRIPT_KEYS));
    }
  }
  return warnings;
}
