/**
 * A validated `POST /v1/chat/completions` body: every field the server uses, type-checked with OpenAI errors
 * that name the field. Fields OpenAI defines that do not change generation here (`user`, `metadata`, `store`,
 * `logprobs`, penalties, `logit_bias`, …) are ignored; ones the server cannot honour are rejected.
 * @module
 */
import type { JsonObject, JsonValue } from "../protocol/json.ts";
import { JsonParams } from "./json_params.ts";
import { OpenAIError } from "./openai_error.ts";

/** A client function tool. */
export interface FunctionTool {
  /** Name: 1–64 ASCII letters, digits, `_` or `-` (OpenAI's rule, with its errors). */
  name: string;
  /** What it does. */
  description: string;
  /** JSON Schema of the arguments. */
  parameters: JsonObject;
}

/** `tool_choice`. */
export type ToolChoiceSpec =
  | { kind: "auto" }
  | { kind: "none" }
  | { kind: "required" }
  | { kind: "function"; name: string }
  | { kind: "allowed"; names: string[]; required: boolean };

/** `response_format`. */
export type ResponseFormatSpec =
  | { kind: "text" }
  | { kind: "json_object" }
  | { kind: "json_schema"; name: string; schema: JsonObject };

/** A parsed request. */
export interface ChatRequest {
  /** Requested model id (default model when absent). */
  model: string | null;
  /** The raw messages (mapped by message_mapper.ts). */
  messages: JsonValue[];
  /** Stream server-sent events. */
  stream: boolean;
  /** Send a final usage chunk (`stream_options.include_usage`). */
  includeUsage: boolean;
  /** Client function tools. */
  tools: FunctionTool[];
  /** Tool choice, or null when absent. */
  toolChoice: ToolChoiceSpec | null;
  /** False: report only the first tool call. */
  parallelToolCalls: boolean;
  /** 0…2. */
  temperature: number | null;
  /** [0, 1] (0 is greedy). */
  topP: number | null;
  /** Sampling seed. */
  seed: number | null;
  /** `max_completion_tokens` (preferred) or `max_tokens`, ≥ 1. */
  maxTokens: number | null;
  /** Up to 4 non-empty stop sequences. */
  stop: string[];
  /** Answer format. */
  responseFormat: ResponseFormatSpec;
}

/** Parses the request body text. Invalid JSON is 400 `invalid_json`. */
export function parseChatRequestText(text: string): ChatRequest {
  let json: JsonValue;
  try {
    json = JSON.parse(text);
  } catch {
    throw OpenAIError.invalidRequest(
      "We could not parse the JSON body of your request. The body must be a JSON object.",
      null,
      "invalid_json",
    );
  }
  return parseChatRequest(json);
}

/**
 * Validates a parsed body.
 *
 * @example
 * ```ts
 * import { parseChatRequest } from "./chat_request.ts";
 * const request = parseChatRequest({ model: "system", messages: [{ role: "user", content: "Hi" }] });
 * request.stream; // false
 * ```
 */
export function parseChatRequest(body: JsonValue): ChatRequest {
  const p = JsonParams.of(body, "");
  const model = p.string("model") ?? null;
  const messages = p.nonEmptyArray("messages");
  if (messages === undefined) throw p.missing("messages");
  const stream = p.bool("stream") ?? false;
  const streamOptions = p.child("stream_options");
  if (streamOptions !== undefined && !stream) {
    throw OpenAIError.invalidRequest(
      "The 'stream_options' parameter is only allowed when 'stream' is enabled.",
      "stream_options",
    );
  }
  const includeUsage = streamOptions?.bool("include_usage") ?? false;
  const n = p.integer("n");
  if (n !== undefined && n !== 1) {
    throw p.invalid("n", "Only n=1 is supported: the server generates one choice.");
  }
  const modalities = p.array("modalities");
  if (modalities?.includes("audio")) throw p.invalid("modalities", "Audio output is not supported.");
  if (p.has("audio")) throw p.invalid("audio", "Audio output is not supported.");
  for (const legacy of ["functions", "function_call"]) {
    if (p.has(legacy)) {
      throw p.invalid(legacy, "The legacy 'functions' API is not supported; use 'tools' and 'tool_choice'.");
    }
  }
  const temperature = p.numberIn("temperature", 0, 2) ?? null;
  const topP = p.numberIn("top_p", 0, 1) ?? null;
  // Checked as OpenAI checks them, though they do not change generation here: a request this server takes,
  // OpenAI takes too.
  p.numberIn("frequency_penalty", -2, 2);
  p.numberIn("presence_penalty", -2, 2);
  const seed = p.integer("seed") ?? null;
  const maxCompletion = p.integerAtLeast("max_completion_tokens", 1);
  const legacyMax = p.integerAtLeast("max_tokens", 1);
  const maxTokens = maxCompletion ?? legacyMax ?? null;
  return {
    model,
    messages,
    stream,
    includeUsage,
    tools: parseTools(p),
    toolChoice: parseToolChoice(p),
    parallelToolCalls: p.bool("parallel_tool_calls") ?? true,
    temperature,
    topP,
    seed,
    maxTokens,
    stop: parseStop(p),
    responseFormat: parseResponseFormat(p),
  };
}

function parseStop(p: JsonParams): string[] {
  const value = p.value("stop");
  if (value === undefined) return [];
  let values: string[];
  if (typeof value === "string") values = [value];
  else if (Array.isArray(value)) {
    values = value.map((s, i) => {
      if (typeof s !== "string") {
        throw OpenAIError.invalidRequest(
          `Invalid type for 'stop[${i}]': expected a string.`,
          `stop[${i}]`,
          "invalid_type",
        );
      }
      return s;
    });
  } else throw p.typeError("stop", "a string or an array of strings");
  if (values.length > 4) throw p.invalid("stop", "'stop' accepts at most 4 sequences.");
  return values.filter((s) => s !== "");
}

function parseTools(p: JsonParams): FunctionTool[] {
  const list = p.nonEmptyArray("tools");
  if (list === undefined) return [];
  const names = new Set<string>();
  return list.map((value, i) => {
    const tool = JsonParams.of(value, `tools[${i}]`);
    const type = tool.string("type") ?? "function";
    if (type !== "function") {
      throw tool.invalid("type", `Unsupported tool type '${type}'. Only 'function' tools are supported.`);
    }
    const fn = tool.requiredChild("function");
    const name = fn.name("name", "Write other languages in the tool's description.");
    if (names.has(name)) throw fn.invalid("name", `Duplicate tool name '${name}'.`);
    names.add(name);
    const description = fn.string("description") ?? "";
    const parameters = fn.value("parameters");
    if (parameters !== undefined && (typeof parameters !== "object" || Array.isArray(parameters))) {
      throw fn.typeError("parameters", "a JSON Schema object");
    }
    return {
      name,
      description,
      parameters: (parameters as JsonObject | undefined) ?? { type: "object", properties: {} },
    };
  });
}

function parseToolChoice(p: JsonParams): ToolChoiceSpec | null {
  const value = p.value("tool_choice");
  if (value === undefined) return null;
  if (typeof value === "string") {
    if (value === "auto" || value === "none" || value === "required") return { kind: value };
    throw p.invalid(
      "tool_choice",
      `Invalid 'tool_choice' '${value}': expected 'auto', 'none', 'required' or an object.`,
    );
  }
  const choice = JsonParams.of(value, "tool_choice");
  const type = choice.requiredString("type");
  if (type === "function") {
    return { kind: "function", name: choice.requiredChild("function").requiredString("name") };
  }
  if (type === "allowed_tools") {
    const allowed = choice.requiredChild("allowed_tools");
    const mode = allowed.string("mode") ?? "auto";
    if (mode !== "auto" && mode !== "required") {
      throw allowed.invalid("mode", `Invalid mode '${mode}': expected 'auto' or 'required'.`);
    }
    const names: string[] = [];
    (allowed.array("tools") ?? []).forEach((entry, i) => {
      const e = JsonParams.of(entry, allowed.param(`tools[${i}]`));
      const fn = e.child("function");
      const name = fn ? fn.requiredString("name") : e.requiredString("name");
      if (!names.includes(name)) names.push(name);
    });
    return { kind: "allowed", names, required: mode === "required" };
  }
  throw choice.invalid("type", `Unsupported tool_choice type '${type}'.`);
}

function parseResponseFormat(p: JsonParams): ResponseFormatSpec {
  const format = p.child("response_format");
  if (format === undefined) return { kind: "text" };
  const type = format.requiredString("type");
  if (type === "text") return { kind: "text" };
  if (type === "json_object") return { kind: "json_object" };
  if (type === "json_schema") {
    const spec = format.requiredChild("json_schema");
    // Required, as on OpenAI (its SDKs' types require it too): a request this server takes, OpenAI takes.
    const name = spec.name("name");
    const schema = spec.value("schema");
    if (schema === undefined) throw spec.missing("schema");
    if (typeof schema !== "object" || Array.isArray(schema)) {
      throw spec.typeError("schema", "a JSON Schema object");
    }
    spec.bool("strict"); // accepted: generation is constrained (or validated) either way
    return { kind: "json_schema", name, schema: schema as JsonObject };
  }
  throw format.invalid(
    "type",
    `Invalid response_format type '${type}': expected 'text', 'json_object' or 'json_schema'.`,
  );
}
