/**
 * The JSON the system model sends to the plugin (`step`, `countTokens`) and the parsing of what comes back
 * (`availability` and `step` results). Shapes follow ffi/README.md.
 * @module
 */
import { isJsonObject, type JsonObject, type JsonValue } from "../protocol/json.ts";
import { assignMissingIds, type ConversationEntry } from "../protocol/transcript.ts";
import { convertSchema } from "../schema/convert.ts";
import type {
  GenerationOptions,
  ModelAvailability,
  StepRequest,
  StepResult,
  StepToolCall,
  StepUsage,
} from "./language_model.ts";
import { utf8Length } from "../util/text.ts";

/** Context size assumed until the plugin reports one (and whenever it reports a value ≤ 0). */
export const DEFAULT_CONTEXT_SIZE = 4096;
/** Default quiescence window after the first captured tool call (ms). */
export const DEFAULT_CAPTURE_WINDOW_MS = 25;

function optionsJson(options: GenerationOptions): JsonObject {
  const out: JsonObject = {};
  if (typeof options.temperature === "number") out.temperature = options.temperature;
  if (typeof options.maximumResponseTokens === "number") {
    out.maximumResponseTokens = options.maximumResponseTokens;
  }
  const s = options.sampling;
  if (s) {
    if (s.mode === "greedy") out.sampling = { mode: "greedy" };
    else if (s.mode === "topK") {
      out.sampling = s.seed === undefined ? { mode: "topK", k: s.k } : { mode: "topK", k: s.k, seed: s.seed };
    } else {out.sampling = s.seed === undefined
        ? { mode: "topP", p: s.p }
        : { mode: "topP", p: s.p, seed: s.seed };}
  }
  return out;
}

/** Generation schemas of the JSON Schemas that prompt entries keep, converted once per schema object. */
const converted = new WeakMap<JsonObject, JsonObject | null>();

function generationSchemaOf(schema: JsonObject, name: string): JsonObject | null {
  let out = converted.get(schema);
  if (out === undefined) {
    try {
      out = convertSchema(schema, name).generationSchema;
    } catch {
      out = null; // accepted when the turn ran, so not expected; the plugin then rebuilds without the format
    }
    converted.set(schema, out);
  }
  return out;
}

/**
 * The history as the plugin reads it. A prompt entry keeps its turn's response format as the client's JSON
 * Schema (what `session/transcript` shows and `history` restores); the plugin rebuilds Apple's transcript
 * from it and needs the generation schema (FoundationModels' dialect), as for `responseSchema`. Entries
 * without a response format are passed as they are (the same array when none has one).
 */
export function pluginHistory(history: ConversationEntry[]): JsonValue[] {
  let out: JsonValue[] | null = null;
  for (let i = 0; i < history.length; i++) {
    const entry = history[i];
    if (entry.role !== "user" || entry.responseFormat === undefined) continue;
    out ??= history.slice(0, i) as unknown as JsonValue[];
    const { name, schema } = entry.responseFormat;
    const generation = generationSchemaOf(schema, name);
    const { responseFormat: _, ...rest } = entry;
    const plugin = generation === null ? rest : { ...rest, responseFormat: { name, schema: generation } };
    out[i] = plugin as unknown as JsonValue;
  }
  if (out === null) return history as unknown as JsonValue[];
  for (let i = out.length; i < history.length; i++) out[i] = history[i] as unknown as JsonValue;
  return out;
}

/** The `step` request body (without `id`). */
export function stepRequestBody(
  request: StepRequest,
  captureWindowMs = DEFAULT_CAPTURE_WINDOW_MS,
): JsonObject {
  assignMissingIds(request.history); // Apple's transcript entries need real ids
  return {
    op: "step",
    instructions: request.instructions,
    tools: request.tools.map((t) => ({ name: t.name, description: t.description, parameters: t.parameters })),
    toolCallingMode: request.toolCallingMode,
    history: pluginHistory(request.history),
    prompt: request.prompt,
    responseSchema: request.responseSchema ? request.responseSchema.generationSchema : null,
    options: optionsJson(request.options),
    stream: request.stream,
    captureWindowMs,
  };
}

/** The `countTokens` request body (without `id`). */
export function countTokensRequestBody(request: Omit<StepRequest, "signal">): JsonObject {
  assignMissingIds(request.history);
  return {
    op: "countTokens",
    instructions: request.instructions,
    tools: request.tools.map((t) => ({ name: t.name, description: t.description, parameters: t.parameters })),
    history: pluginHistory(request.history),
    prompt: request.prompt,
    responseSchema: request.responseSchema ? request.responseSchema.generationSchema : null,
  };
}

/**
 * A cheap token estimate for when the plugin cannot count: 3 bytes of UTF-8 per token (about 3 characters of
 * English, 1 of Japanese or Chinese).
 */
export function estimateTokens(request: Omit<StepRequest, "signal">): number {
  let bytes = utf8Length(request.instructions ?? "") + utf8Length(request.prompt);
  for (const tool of request.tools) {
    bytes += tool.name.length + utf8Length(tool.description) + utf8Length(JSON.stringify(tool.parameters));
  }
  for (const entry of request.history) bytes += utf8Length(JSON.stringify(entry));
  if (request.responseSchema) bytes += utf8Length(JSON.stringify(request.responseSchema.generationSchema));
  return Math.ceil(bytes / 3);
}

/** Availability when the plugin cannot be asked (absent library, load failure). */
export function unavailable(reason: string, detail?: string): ModelAvailability {
  const out: ModelAvailability = {
    available: false,
    reason,
    contextSize: DEFAULT_CONTEXT_SIZE,
    supportedLanguages: [],
  };
  if (detail) out.detail = detail;
  return out;
}

/** Normalises the plugin's availability result (key order: available, reason?, contextSize, variant?, languages). */
export function parseAvailability(raw: unknown): ModelAvailability {
  if (!isJsonObject(raw) || typeof raw.available !== "boolean") {
    return unavailable("unknown", "The plugin returned a malformed availability result.");
  }
  const out: ModelAvailability = {
    available: raw.available,
    contextSize: DEFAULT_CONTEXT_SIZE,
    supportedLanguages: [],
  };
  if (!raw.available) out.reason = typeof raw.reason === "string" && raw.reason ? raw.reason : "unknown";
  const size = raw.contextSize;
  out.contextSize = typeof size === "number" && Number.isInteger(size) && size > 0
    ? size
    : DEFAULT_CONTEXT_SIZE;
  if (typeof raw.variant === "string" && raw.variant) out.variant = raw.variant;
  const langs = Array.isArray(raw.supportedLanguages) ? raw.supportedLanguages : [];
  out.supportedLanguages = [...new Set(langs.filter((l): l is string => typeof l === "string"))].sort();
  return out;
}

/** Feature flags from an availability result (`features` object), defaulting to false. */
export function parseFeatures(raw: unknown): Record<string, boolean> {
  const out: Record<string, boolean> = Object.create(null);
  if (isJsonObject(raw) && isJsonObject(raw.features)) {
    for (const [key, value] of Object.entries(raw.features)) if (typeof value === "boolean") out[key] = value;
  }
  return out;
}

function count(value: JsonValue | undefined): number | null {
  return typeof value === "number" && Number.isFinite(value) && value >= 0 ? Math.round(value) : null;
}

/** Usage from a result, or null when absent or incomplete. */
export function parseUsage(raw: JsonValue | undefined): StepUsage | null {
  if (!isJsonObject(raw)) return null;
  const inputTokens = count(raw.inputTokens);
  const outputTokens = count(raw.outputTokens);
  if (inputTokens === null || outputTokens === null) return null;
  return { inputTokens, cachedInputTokens: count(raw.cachedInputTokens) ?? 0, outputTokens };
}

/** Thrown by {@link parseStepResult} for results that do not match the documented shapes. */
export class MalformedResultError extends Error {
  /** Creates the error. */
  constructor(message: string) {
    super(message);
    this.name = "MalformedResultError";
  }
}

function parseCall(raw: JsonValue, index: number): StepToolCall {
  if (!isJsonObject(raw) || typeof raw.name !== "string" || raw.name === "") {
    throw new MalformedResultError(`calls[${index}] has no name`);
  }
  let args: JsonValue | undefined = raw.arguments;
  if (typeof args === "string") {
    try {
      args = JSON.parse(args) as JsonValue;
    } catch {
      throw new MalformedResultError(`calls[${index}].arguments is not JSON`);
    }
  }
  if (args === undefined || args === null) args = {};
  if (!isJsonObject(args)) throw new MalformedResultError(`calls[${index}].arguments is not an object`);
  const call: StepToolCall = { name: raw.name, arguments: args };
  if (typeof raw.nativeId === "string" && raw.nativeId) call.nativeId = raw.nativeId;
  return call;
}

/** Converts a `step` result payload into a StepResult; throws MalformedResultError. */
export function parseStepResult(raw: unknown): StepResult {
  if (!isJsonObject(raw)) throw new MalformedResultError("the result is not an object");
  const usage = parseUsage(raw.usage);
  switch (raw.kind) {
    case "text":
      if (typeof raw.text !== "string") throw new MalformedResultError("text result without text");
      return { kind: "text", text: raw.text, usage };
    case "structured": {
      if (!Object.hasOwn(raw, "value") || raw.value === undefined) {
        throw new MalformedResultError("structured result without value");
      }
      const value = raw.value as JsonValue;
      const text = typeof raw.text === "string" ? raw.text : JSON.stringify(value);
      return { kind: "structured", value, text, usage };
    }
    case "toolCalls": {
      if (!Array.isArray(raw.calls) || raw.calls.length === 0) {
        throw new MalformedResultError("toolCalls result without calls");
      }
      return { kind: "toolCalls", calls: raw.calls.map(parseCall), usage };
    }
    default:
      throw new MalformedResultError(`unknown result kind ${JSON.stringify(raw.kind ?? null)}`);
  }
}
