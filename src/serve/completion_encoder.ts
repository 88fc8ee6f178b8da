/**
 * The wire shapes of completions: `chat.completion` objects, `chat.completion.chunk` server-sent events,
 * usage, and the `data: [DONE]` terminator, as OpenAI sends them.
 * @module
 */
import { compactJson, type JsonObject, type JsonValue } from "../protocol/json.ts";
import type { ToolCallInfo } from "../agent/types.ts";

/** `finish_reason` values. */
export type FinishReason = "stop" | "length" | "tool_calls" | "content_filter";

/** Token counts of a completion. */
export interface CompletionUsage {
  promptTokens: number;
  /** Generated tokens. */
  completionTokens: number;
  /** Prompt tokens served from a cache. */
  cachedTokens: number;
}

/** `system_fingerprint` of every completion. */
export const SYSTEM_FINGERPRINT = "fp_open_apple_models";

const ALPHABET = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

/** A fresh completion id: `chatcmpl-` + 29 alphanumerics. */
export function newCompletionId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(29));
  let id = "chatcmpl-";
  for (const b of bytes) id += ALPHABET[b % ALPHABET.length];
  return id;
}

/** The `usage` object. */
export function usageJson(usage: CompletionUsage): JsonObject {
  return {
    prompt_tokens: usage.promptTokens,
    completion_tokens: usage.completionTokens,
    total_tokens: usage.promptTokens + usage.completionTokens,
    prompt_tokens_details: { cached_tokens: usage.cachedTokens },
    completion_tokens_details: { reasoning_tokens: 0 },
  };
}

/** A tool call of a completion: the model's, or one the token limit cut off (its arguments' text as written). */
export type CompletionToolCall = ToolCallInfo | { id: string; name: string; argumentsText: string };

/**
 * A tool call as `{id, type: "function", function: {name, arguments: "<JSON text>"}}` (a cut-off call's
 * `arguments` are its text as far as it was written, not valid JSON, as OpenAI sends them).
 */
export function toolCallJson(call: CompletionToolCall): JsonObject {
  const args = "argumentsText" in call ? call.argumentsText : compactJson(call.arguments);
  return { id: call.id, type: "function", function: { name: call.name, arguments: args } };
}

/** Frames a value as one server-sent event. */
export function sseEvent(value: JsonValue): string {
  return `data: ${compactJson(value)}\n\n`;
}

/** The last event of a stream. */
export const SSE_DONE = "data: [DONE]\n\n";

/**
 * Builds the objects of one completion (one id and creation time for all of its chunks).
 *
 * @example
 * ```ts
 * import { CompletionEncoder } from "./completion_encoder.ts";
 * const encoder = new CompletionEncoder("system");
 * const body = encoder.completion({ content: "Hi", refusal: null, toolCalls: [], finishReason: "stop",
 *   usage: { promptTokens: 3, completionTokens: 1, cachedTokens: 0 } });
 * ```
 */
export class CompletionEncoder {
  /** `chatcmpl-…`. */
  readonly id: string;
  /** Unix seconds. */
  readonly created: number;
  /** The model id reported. */
  readonly model: string;

  /** An encoder for a completion of `model`. */
  constructor(model: string, id = newCompletionId(), created = Math.floor(Date.now() / 1000)) {
    this.model = model;
    this.id = id;
    this.created = created;
  }

  /** A whole `chat.completion`. */
  completion(parts: {
    content: string | null;
    refusal: string | null;
    toolCalls: CompletionToolCall[];
    finishReason: FinishReason;
    usage: CompletionUsage;
  }): JsonObject {
    const message: JsonObject = { role: "assistant", content: parts.content, refusal: parts.refusal };
    if (parts.toolCalls.length > 0) message.tool_calls = parts.toolCalls.map(toolCallJson);
    message.annotations = [];
    return {
      id: this.id,
      object: "chat.completion",
      created: this.created,
      model: this.model,
      system_fingerprint: SYSTEM_FINGERPRINT,
      choices: [{ index: 0, message, logprobs: null, finish_reason: parts.finishReason }],
      usage: usageJson(parts.usage),
    };
  }

  /** A `chat.completion.chunk` with one choice (`usage: null` when the stream will end with usage). */
  chunk(delta: JsonObject, finishReason: FinishReason | null, includeUsage: boolean): JsonObject {
    const out: JsonObject = {
      id: this.id,
      object: "chat.completion.chunk",
      created: this.created,
      model: this.model,
      system_fingerprint: SYSTEM_FINGERPRINT,
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
    };
    if (includeUsage) out.usage = null;
    return out;
  }

  /** The usage chunk that ends a stream with `stream_options.include_usage` (no choices). */
  usageChunk(usage: CompletionUsage): JsonObject {
    return {
      id: this.id,
      object: "chat.completion.chunk",
      created: this.created,
      model: this.model,
      system_fingerprint: SYSTEM_FINGERPRINT,
      choices: [],
      usage: usageJson(usage),
    };
  }

  /** Tool calls streamed as one delta carrying every call with its index and full arguments. */
  static toolCallsDelta(calls: CompletionToolCall[]): JsonObject {
    return { tool_calls: calls.map((call, index) => ({ index, ...toolCallJson(call) })) };
  }
}
