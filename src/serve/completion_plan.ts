/**
 * Everything one chat completion runs with, derived from a validated request and the server's settings: the
 * model, the mapped conversation, the tools (the client's as client tools, the server's as local ones), the
 * tool policy, the answer format and the generation options.
 * @module
 */
import { type AgentTool, DEFAULT_SETTINGS, type ToolPolicy } from "../agent/types.ts";
import { RESPOND_DIRECTLY } from "../agent/step_policy.ts";
import type { GenerationOptions, LanguageModel, ResponseSchema, Sampling } from "../models/language_model.ts";
import { ScriptedModel } from "../models/scripted.ts";
import { convertSchema, SchemaError } from "../schema/convert.ts";
import { sanitizeTypeName, toolArgumentsTypeName } from "../schema/names.ts";
import { isJsonObject, type JsonObject, type JsonValue } from "../protocol/json.ts";
import type { ChatRequest } from "./chat_request.ts";
import { modelNotFound } from "./model_endpoints.ts";
import { mapMessages, type MappedConversation } from "./message_mapper.ts";
import { OpenAIError } from "./openai_error.ts";
import { resolveModelId, type ServeConfiguration } from "./server_config.ts";

/** The instruction added for `response_format: json_object`. */
export const JSON_OBJECT_INSTRUCTION =
  "Respond with a single valid JSON object and nothing else: no prose, no Markdown, no code fences.";

/**
 * The response schema of `response_format: json_object` on a backend that constrains answers to a schema: any
 * JSON object (for the GGUF grammar, an object of any members; for a server, `{"type": "object"}`).
 */
export const JSON_OBJECT_SCHEMA: ResponseSchema = {
  name: "JsonObject",
  generationSchema: {
    title: "JsonObject",
    type: "object",
    properties: {},
    required: [],
    "x-order": [],
    additionalProperties: true,
  },
  jsonSchema: { type: "object" },
};

/** How the answer is shaped. */
export type AnswerFormat =
  | { kind: "text" }
  /**
   * Any JSON object: generated under {@link JSON_OBJECT_SCHEMA} where the backend can constrain an answer to a
   * schema, else asked for by an instruction only (the object is then taken out of the answer's text).
   */
  | { kind: "json_object"; schema?: ResponseSchema }
  | { kind: "json_schema"; schema: ResponseSchema };

/**
 * Backends that constrain an answer to a schema (`kind`): an OpenAI-compatible server (`response_format`
 * json_schema; llama.cpp's server enforces it with a grammar, while its json_object without a schema is not
 * enforced at all) and the in-process GGUF model (a grammar). The on-device model's generation schemas cannot
 * express an object of any members, and a script plays its steps as written.
 */
const CONSTRAINS_JSON = new Set(["openai", "llama"]);

/**
 * Of those, the ones whose schema would stop the model from calling tools: llama.cpp's server lets a
 * `response_format` grammar replace its tool-call grammar. A json_object request there with tools the model
 * may call gets the instruction only, as before, so tool calling keeps working.
 */
const SCHEMA_DISABLES_TOOLS = new Set(["openai"]);

/** A completion ready to run. */
export interface CompletionPlan {
  /** The model id reported in responses (as requested, or the default). */
  modelId: string;
  /** The backend. */
  model: LanguageModel;
  /** The request's messages as the history and the new prompt. */
  conversation: MappedConversation;
  /** Server instructions, the request's system messages and the json_object instruction, joined. */
  instructions: string | null;
  /** Client tools, then server tools. */
  tools: AgentTool[];
  /** Names of the client's tools: calls to them end the completion with `tool_calls`. */
  clientToolNames: Set<string>;
  /** Tool choice and budgets. */
  policy: ToolPolicy;
  /** Answer format. */
  format: AnswerFormat;
  /** Temperature, sampling and token limit. */
  options: GenerationOptions;
  /** Stop sequences. */
  stop: string[];
  /** Token limit (for `finish_reason: "length"`), or null. */
  maxTokens: number | null;
  /**
   * Attempts of the turn: the agent's default (a transient failure is tried again), but 1 with a scripted
   * model, whose retry would play the next step: a scripted error is the answer of its own request.
   */
  maxAttempts: number;
  /** False: report only the first tool call. */
  parallelToolCalls: boolean;
  /** Stream server-sent events. */
  stream: boolean;
  /** Send a usage chunk at the end of a stream. */
  includeUsage: boolean;
}

function convert(schema: JsonValue, rootName: string, message: string, param: string): JsonObject {
  try {
    return convertSchema(schema, rootName).generationSchema;
  } catch (error) {
    if (error instanceof SchemaError) {
      throw OpenAIError.invalidRequest(
        `${message}: ${error.message} (at ${error.schemaPath})`,
        param,
        "invalid_schema",
      );
    }
    if (error instanceof RangeError) {
      throw OpenAIError.invalidRequest(`${message}: the schema nests too deeply.`, param, "invalid_schema");
    }
    throw error;
  }
}

/**
 * Validates `request` against the server's settings and builds the plan.
 *
 * @example
 * ```ts
 * import { planCompletion } from "./completion_plan.ts";
 * import { parseChatRequest } from "./chat_request.ts";
 * import { resolveServeConfiguration } from "./server_config.ts";
 * import { ScriptedModel } from "../models/scripted.ts";
 * const config = resolveServeConfiguration({ models: new Map([["system", new ScriptedModel({ steps: [] })]]) });
 * const plan = planCompletion(parseChatRequest({ messages: [{ role: "user", content: "Hi" }] }), config);
 * plan.conversation.prompt; // "Hi"
 * ```
 */
export function planCompletion(request: ChatRequest, config: ServeConfiguration): CompletionPlan {
  const resolved = resolvedModel(request, config);
  const conversation = mapMessages(request.messages);
  const tools = clientTools(request, config);
  const clientToolNames = new Set(tools.map((t) => t.name));
  tools.push(...config.serverTools);
  // Checked in this order: a request with several problems gets the first one's error.
  const policy = toolPolicy(request, config, new Set(tools.map((t) => t.name)));
  const model = config.models.get(resolved)!;
  const toolsCallable = tools.length > 0 && policy.choice !== "none" && policy.enabledTools?.length !== 0;
  const format = answerFormat(request, model, toolsCallable);
  const parts = [config.serverInstructions, conversation.instructions].filter((p): p is string => !!p);
  if (format.kind === "json_object") parts.push(JSON_OBJECT_INSTRUCTION);
  return {
    modelId: request.model ?? config.defaultModel,
    model: servedModel(model),
    conversation,
    instructions: parts.length === 0 ? null : parts.join("\n\n"),
    tools,
    clientToolNames,
    policy,
    format,
    options: generationOptions(request),
    stop: request.stop,
    maxTokens: request.maxTokens,
    maxAttempts: model.kind === "scripted" ? 1 : DEFAULT_SETTINGS.maxAttempts,
    parallelToolCalls: request.parallelToolCalls,
    stream: request.stream,
    includeUsage: request.includeUsage,
  };
}

/** The served model id the request's `model` names (404 `model_not_found` when none). */
function resolvedModel(request: ChatRequest, config: ServeConfiguration): string {
  const resolved = resolveModelId(config, request.model);
  if (resolved !== null) return resolved;
  throw modelNotFound(config, request.model);
}

/** The request's `tools` as client tools (a name the server's own tools use is refused). */
function clientTools(request: ChatRequest, config: ServeConfiguration): AgentTool[] {
  const serverNames = new Set(config.serverTools.map((t) => t.name));
  return request.tools.map((fn, i) => {
    if (serverNames.has(fn.name) || fn.name === RESPOND_DIRECTLY) {
      throw OpenAIError.invalidRequest(
        `Tool name '${fn.name}' is reserved by the server.`,
        `tools[${i}].function.name`,
        "invalid_value",
      );
    }
    return {
      name: fn.name,
      description: fn.description,
      jsonSchema: fn.parameters,
      generationSchema: convert(
        fn.parameters,
        toolArgumentsTypeName(fn.name),
        `Invalid parameters schema for tool '${fn.name}'`,
        `tools[${i}].function.parameters`,
      ),
      execution: "client",
      timeoutMs: null,
    };
  });
}

/** The tool policy of `tool_choice` over the tools named `allNames` (client and server tools). */
function toolPolicy(request: ChatRequest, config: ServeConfiguration, allNames: Set<string>): ToolPolicy {
  const policy: ToolPolicy = {
    choice: "auto",
    maxToolRounds: config.maxToolRounds,
    maxToolCalls: config.maxToolCalls,
    enabledTools: null,
  };
  const choice = request.toolChoice;
  if (choice?.kind === "none") policy.choice = "none";
  else if (choice?.kind === "required") {
    if (allNames.size === 0) {
      throw OpenAIError.invalidRequest(
        "tool_choice 'required' needs at least one tool in 'tools'.",
        "tool_choice",
        "invalid_value",
      );
    }
    policy.choice = "required";
  } else if (choice?.kind === "function") {
    if (!allNames.has(choice.name)) {
      throw OpenAIError.invalidRequest(
        `tool_choice names the function '${choice.name}', which is not in 'tools'.`,
        "tool_choice",
        "unknown_tool",
      );
    }
    policy.choice = { tool: choice.name };
  } else if (choice?.kind === "allowed") {
    const unknown = choice.names.filter((n) => !allNames.has(n)).sort()[0];
    if (unknown !== undefined) {
      throw OpenAIError.invalidRequest(
        `tool_choice.allowed_tools names the function '${unknown}', which is not in 'tools'.`,
        "tool_choice",
        "unknown_tool",
      );
    }
    policy.enabledTools = choice.names;
    policy.choice = choice.required && choice.names.length > 0 ? "required" : "auto";
  }
  return policy;
}

/**
 * What `response_format` asks for of `model` (`toolsCallable`: the model may call tools): text, any JSON
 * object, or a converted JSON schema.
 */
function answerFormat(request: ChatRequest, model: LanguageModel, toolsCallable: boolean): AnswerFormat {
  const responseFormat = request.responseFormat;
  if (responseFormat.kind === "json_object") {
    const constrained = CONSTRAINS_JSON.has(model.kind) &&
      !(toolsCallable && SCHEMA_DISABLES_TOOLS.has(model.kind));
    return constrained ? { kind: "json_object", schema: JSON_OBJECT_SCHEMA } : { kind: "json_object" };
  }
  if (responseFormat.kind !== "json_schema") return { kind: "text" };
  const raw = responseFormat.name.replace(/[^\p{L}\p{N}_]/gu, "");
  const name = raw === "" ? "Response" : sanitizeTypeName(raw);
  const jsonSchema = responseFormat.schema;
  let generationSchema = convert(
    jsonSchema,
    name,
    "Invalid JSON schema in response_format",
    "response_format.json_schema.schema",
  );
  // Generation schemas have no object of any members (`{"type": "object"}` becomes `{}` only); a backend that
  // can generate one gets json_object's schema, and the answer is still checked against the client's.
  if (CONSTRAINS_JSON.has(model.kind) && isAnyObject(jsonSchema)) {
    generationSchema = { ...JSON_OBJECT_SCHEMA.generationSchema, title: name };
  }
  return { kind: "json_schema", schema: { name, generationSchema, jsonSchema } };
}

/** Keywords that leave an object schema open to any members. */
const ANY_OBJECT_KEYWORDS = new Set([
  "type",
  "additionalProperties",
  "title",
  "description",
  "$schema",
  "$id",
]);

/** Whether `schema` is an object of any members: `{"type": "object"}`, perhaps with a title or description. */
function isAnyObject(schema: JsonValue): boolean {
  if (!isJsonObject(schema) || schema.type !== "object") return false;
  if (Object.hasOwn(schema, "additionalProperties") && schema.additionalProperties !== true) return false;
  return Object.keys(schema).every((key) => ANY_OBJECT_KEYWORDS.has(key));
}

/**
 * Sampling options of `temperature`, `top_p`, `seed` and `max_tokens` (temperature or top_p 0 is greedy); a cut-off
 * answer is reported, not retried.
 */
function generationOptions(request: ChatRequest): GenerationOptions {
  const options: GenerationOptions = {};
  // Temperature 0, or top_p 0 (only the likeliest token), is greedy.
  if (request.temperature === 0 || request.topP === 0) options.sampling = { mode: "greedy" };
  else {
    if (request.temperature !== null) options.temperature = request.temperature;
    const seed = request.seed === null ? {} : { seed: seedValue(request.seed) };
    let sampling: Sampling | undefined;
    if (request.topP !== null) sampling = { mode: "topP", p: request.topP, ...seed };
    else if (request.seed !== null) sampling = { mode: "topP", p: 1, ...seed };
    if (sampling) options.sampling = sampling;
  }
  if (request.maxTokens !== null) options.maximumResponseTokens = request.maxTokens;
  // JSON the token limit cut off (the request's, or the backend's own) is answered as OpenAI does (200 with
  // `finish_reason: "length"`), not asked for again.
  options.reportCutOff = true;
  return options;
}

/** OpenAI seeds may be negative; the sampling seed is unsigned (two's complement, as the reference does). */
function seedValue(seed: number): number {
  return seed >= 0 ? seed : Number(BigInt.asUintN(53, BigInt(seed)));
}

/**
 * The model a completion runs on: a scripted one held to the request's token limit as OpenAI's answers are
 * (over the bridge protocol a script plays its steps whole, as the reference's does, and its place in the
 * script is the server's); others on their own instance where they keep per-conversation state, so no
 * request sees another's (a GGUF model's prompt shows the tools of earlier requests otherwise).
 */
function servedModel(model: LanguageModel): LanguageModel {
  if (model instanceof ScriptedModel) return model.tokenLimited();
  return model.forRequest?.() ?? model;
}
