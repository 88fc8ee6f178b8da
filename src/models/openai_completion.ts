/**
 * Assembles a chat completion from a non-streamed body or from streamed `chat.completion.chunk` objects:
 * content deltas are concatenated, tool-call deltas are merged by `index`, usage and the finish reason are
 * kept. Shapes are checked field by field; anything unexpected is a malformed answer.
 * @module
 */
import { isJsonObject, type JsonObject, type JsonValue } from "../protocol/json.ts";
import type { StepUsage } from "./language_model.ts";
import { malformed, serverErrorInfo, streamError } from "./openai_errors.ts";
import { truncateText } from "../util/text.ts";

/** A tool call as the server sent it (arguments still JSON text). */
export interface RawToolCall {
  /** Position of the call in the answer (the stream's `index`). */
  index: number;
  /** The server's call id, when it sent one. */
  id?: string;
  /** Function name. */
  name: string;
  /** Arguments as the JSON text the server sent. */
  arguments: string;
}

/** What one completion produced. */
export interface ChatOutput {
  /** The answer text (`""` when none). */
  content: string;
  /** Tool calls ordered by index. */
  toolCalls: RawToolCall[];
  /** `stop`, `length`, `tool_calls`, `content_filter`, … or `null` when not sent. */
  finishReason: string | null;
  /** OpenAI's `message.refusal`, when present. */
  refusal: string | null;
  /** Token usage, when the server reported it. */
  usage: StepUsage | null;
}

function count(value: JsonValue | undefined): number | undefined {
  return typeof value === "number" && Number.isFinite(value) && value >= 0 ? Math.round(value) : undefined;
}

/** Maps an OpenAI `usage` object; `null` when absent or without token counts. */
export function mapUsage(usage: JsonValue | undefined): StepUsage | null {
  if (!isJsonObject(usage)) return null;
  const input = count(usage.prompt_tokens);
  const output = count(usage.completion_tokens);
  if (input === undefined && output === undefined) return null;
  const details = usage.prompt_tokens_details;
  const cached = isJsonObject(details) ? count(details.cached_tokens) : undefined;
  return { inputTokens: input ?? 0, cachedInputTokens: cached ?? 0, outputTokens: output ?? 0 };
}

function optionalString(value: JsonValue | undefined, what: string): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "string") throw malformed(`${what} is not a string`);
  return value;
}

/** Accumulates one completion (streamed or not). */
export class CompletionAccumulator {
  /** Content text so far. */
  content = "";
  /** Refusal text so far. */
  refusal = "";
  /** The last finish reason seen. */
  finishReason: string | null = null;
  /** The last usage seen. */
  usage: StepUsage | null = null;
  /** True once any chunk or body was accepted. */
  started = false;
  /** True when the answer came from llama.cpp's server (it adds a `timings` object). */
  fromLlamaCpp = false;
  readonly #calls = new Map<number, RawToolCall>();
  #lastIndex = -1;

  /** Applies a non-streamed `chat.completion` body. */
  applyBody(body: JsonValue): void {
    if (!isJsonObject(body)) throw malformed("the body is not a JSON object");
    if (Object.hasOwn(body, "error") && body.error !== null) throw streamError(serverErrorInfo(body));
    const choices = body.choices;
    if (!Array.isArray(choices) || choices.length === 0 || !isJsonObject(choices[0])) {
      throw malformed("no 'choices' in the completion");
    }
    const choice = choices[0];
    const message = choice.message;
    if (!isJsonObject(message)) throw malformed("'choices[0].message' is missing");
    this.content = optionalString(message.content, "'message.content'") ?? "";
    this.refusal = optionalString(message.refusal, "'message.refusal'") ?? "";
    const calls = message.tool_calls;
    if (calls !== undefined && calls !== null) {
      if (!Array.isArray(calls)) throw malformed("'message.tool_calls' is not an array");
      calls.forEach((call, i) => this.#applyToolDelta(call, i, true));
    }
    this.finishReason = optionalString(choice.finish_reason, "'finish_reason'") ?? null;
    this.usage = mapUsage(body.usage);
    if (isJsonObject(body.timings)) this.fromLlamaCpp = true;
    this.started = true;
  }

  /**
   * Applies one streamed chunk. Returns true when the content text changed.
   * @throws {BridgeError} for an `{"error": …}` chunk or a malformed chunk.
   */
  applyChunk(chunk: JsonValue): boolean {
    if (!isJsonObject(chunk)) throw malformed("a stream chunk is not a JSON object");
    if (Object.hasOwn(chunk, "error") && chunk.error !== null) throw streamError(serverErrorInfo(chunk));
    this.started = true;
    if (isJsonObject(chunk.timings)) this.fromLlamaCpp = true;
    const usage = mapUsage(chunk.usage);
    if (usage !== null) this.usage = usage;
    const choices = chunk.choices;
    if (choices === undefined || choices === null) return false;
    if (!Array.isArray(choices)) throw malformed("'choices' of a stream chunk is not an array");
    let changed = false;
    for (const choice of choices) {
      if (!isJsonObject(choice)) throw malformed("a stream choice is not an object");
      if (choice.index !== undefined && choice.index !== 0) continue; // n is always 1
      const delta = choice.delta;
      if (delta !== undefined && delta !== null) {
        if (!isJsonObject(delta)) throw malformed("'delta' is not an object");
        const text = optionalString(delta.content, "'delta.content'");
        if (text !== undefined && text !== "") {
          this.content += text;
          changed = true;
        }
        const refusal = optionalString(delta.refusal, "'delta.refusal'");
        if (refusal !== undefined) this.refusal += refusal;
        const calls = delta.tool_calls;
        if (calls !== undefined && calls !== null) {
          if (!Array.isArray(calls)) throw malformed("'delta.tool_calls' is not an array");
          for (const call of calls) this.#applyToolDelta(call, undefined, false);
        }
      }
      const finish = optionalString(choice.finish_reason, "'finish_reason'");
      if (finish !== undefined) this.finishReason = finish;
    }
    return changed;
  }

  #applyToolDelta(call: JsonValue, position: number | undefined, whole: boolean): void {
    if (!isJsonObject(call)) throw malformed("a tool call is not an object");
    const id = optionalString(call.id, "a tool call 'id'");
    let index: number;
    if (typeof call.index === "number" && Number.isInteger(call.index) && call.index >= 0) {
      index = call.index;
    } else if (position !== undefined) {
      index = position;
    } else {
      // No index: a new id starts a new call, otherwise the delta continues the last one.
      const last = this.#calls.get(this.#lastIndex);
      index = last === undefined || (id !== undefined && last.id !== undefined && id !== last.id)
        ? this.#lastIndex + 1
        : this.#lastIndex;
    }
    this.#lastIndex = Math.max(this.#lastIndex, index);
    let entry = this.#calls.get(index);
    if (entry === undefined) {
      entry = { index, name: "", arguments: "" };
      this.#calls.set(index, entry);
    }
    if (id !== undefined && id !== "" && entry.id === undefined) entry.id = id;
    const fn = call.function;
    if (fn === undefined || fn === null) {
      if (whole) throw malformed("a tool call has no 'function'");
      return;
    }
    if (!isJsonObject(fn)) throw malformed("a tool call 'function' is not an object");
    const name = optionalString(fn.name, "a tool call name");
    // Some servers repeat the full name in every delta; append only genuinely new fragments.
    if (name !== undefined && name !== entry.name) entry.name += name;
    const args = fn.arguments;
    if (typeof args === "string") {
      entry.arguments += args;
    } else if (isJsonObject(args)) {
      // A few servers send the arguments as an object instead of JSON text.
      entry.arguments += JSON.stringify(args);
    } else if (args !== undefined && args !== null) {
      throw malformed("tool call 'arguments' are neither text nor an object");
    }
  }

  /** The assembled result (tool calls ordered by index). */
  output(): ChatOutput {
    const toolCalls = [...this.#calls.values()].sort((a, b) => a.index - b.index);
    return {
      content: this.content,
      toolCalls,
      finishReason: this.finishReason,
      refusal: this.refusal === "" ? null : this.refusal,
      usage: this.usage,
    };
  }
}

/** Parses JSON text into a value, or throws a malformed-answer error naming `what`. */
export function parseJsonText(text: string, what: string): JsonValue {
  try {
    return JSON.parse(text) as JsonValue;
  } catch {
    const shown = truncateText(text, 200);
    throw malformed(`${what} is not valid JSON`, { serverMessage: shown } as JsonObject);
  }
}
