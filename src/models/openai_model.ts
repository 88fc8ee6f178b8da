/**
 * The OpenAI-compatible model backend: one {@link LanguageModel} step = one `POST {baseURL}/chat/completions`
 * (llama.cpp's `llama-server`, vLLM, Ollama, LM Studio, OpenAI, …).
 *
 * The server is never trusted: tool calls and structured answers are validated (see `openai_validate.ts`)
 * and an invalid answer is requested again, up to {@link OPENAI_STEP_ATTEMPTS} times in all, before the step
 * fails with `generation_failed`. A retry is never the same request: it carries the invalid answer and what
 * was wrong with it (`retryMessages`), appended to the conversation so the server's prompt cache still
 * covers the rest. With the options' `reportCutOff` (`oam serve`), an invalid answer the token limit cut off
 * (`finish_reason: "length"`) is not asked for again: the step fails at once with a `CutOffAnswer` holding what
 * was written. HTTP and network failures are not retried here (the agent's `maxAttempts` policy
 * decides); they map to protocol errors as described in `openai_errors.ts`.
 *
 * Every step of a turn sends the turn's whole tool list (`offeredTools`) and restricts the callable ones by
 * `tool_choice` (see `openai_request.ts`), so the prompt's prefix stays the same from step to step.
 * @module
 */
import { BridgeError } from "../protocol/errors.ts";
import { compactJson, isJsonObject, type JsonObject, type JsonValue } from "../protocol/json.ts";
import type {
  LanguageModel,
  ModelAvailability,
  StepRequest,
  StepResult,
  StepToolCall,
  StepUsage,
} from "./language_model.ts";
import { type ChatOutput, CompletionAccumulator, parseJsonText } from "./openai_completion.ts";
import { CutOffAnswer } from "./cut_off.ts";
import { DEFAULT_OPENAI_TIMEOUT_MS, type OpenAIModelConfig } from "./openai_config.ts";
import { FieldCompatibility } from "./openai_compat.ts";
import {
  httpError,
  infoFromData,
  malformed,
  networkError,
  type ServerErrorInfo,
  serverErrorInfo,
  timeoutError,
} from "./openai_errors.ts";
import { orderBySchema } from "../schema/order.ts";
import { parsePartialJson } from "./openai_partial_json.ts";
import { withoutCutToolMarkup } from "./tool_markup.ts";
import { buildChatRequest, retryMessages } from "./openai_request.ts";
import { SseParser } from "./openai_sse.ts";
import { checkStructured, checkToolCalls } from "./openai_validate.ts";
import { endSentence } from "../util/text.ts";
import { forGood, isForGood, isMissingGrant } from "./for_good.ts";

/** Attempts per step when the server's answer is invalid (the first try plus 2 retries). */
export const OPENAI_STEP_ATTEMPTS = 3;
/** Context size assumed until {@link LanguageModel.availability} learned the real one. */
export const DEFAULT_OPENAI_CONTEXT_SIZE = 4096;
/** Longest wait for `GET /models` (and `/props`) in `availability()`. */
const AVAILABILITY_TIMEOUT_MS = 10_000;
/** Largest error body read from a failed response. */
const MAX_ERROR_BODY = 64 * 1024;
/** Re-sends of one request after the server rejected an optional field (see `openai_compat.ts`). */
const MAX_FIELD_ADJUSTMENTS = 4;

function addUsage(total: StepUsage | null, more: StepUsage | null): StepUsage | null {
  if (more === null) return total;
  if (total === null) return { ...more };
  return {
    inputTokens: total.inputTokens + more.inputTokens,
    cachedInputTokens: total.cachedInputTokens + more.cachedInputTokens,
    outputTokens: total.outputTokens + more.outputTokens,
  };
}

type Interpretation = { result: StepResult } | { problem: string };

/**
 * Aborts a request when the caller cancels or nothing happened for `timeoutMs`, and says which one it was.
 * Activity only moves a timestamp: one timer runs per timeout window (not one per streamed chunk), and when
 * it fires after recent activity it waits out the rest of the window.
 */
class RequestGuard {
  readonly controller = new AbortController();
  timedOutIn: string | null = null;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #phase = "";
  #lastActivity = 0;
  readonly #onAbort = () => this.controller.abort();

  constructor(readonly caller: AbortSignal | null, readonly timeoutMs: number) {
    if (caller?.aborted) this.controller.abort();
    else caller?.addEventListener("abort", this.#onAbort, { once: true });
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Notes activity in `phase`: the inactivity window starts again from now. */
  arm(phase: string): void {
    this.#phase = phase;
    this.#lastActivity = performance.now();
    if (this.timeoutMs > 0 && this.#timer === undefined) this.#wait(this.timeoutMs);
  }

  #wait(ms: number): void {
    this.#timer = setTimeout(() => {
      const idle = performance.now() - this.#lastActivity;
      if (idle < this.timeoutMs) return this.#wait(this.timeoutMs - idle);
      this.#timer = undefined;
      this.timedOutIn = this.#phase;
      this.controller.abort();
    }, Math.max(1, Math.ceil(ms)));
  }

  /** Maps an exception to cancellation, a timeout or a given fallback. */
  fail(error: unknown, fallback: (error: unknown) => BridgeError): BridgeError {
    if (this.caller?.aborted) return BridgeError.cancelled();
    if (this.timedOutIn !== null) return timeoutError(this.timeoutMs, this.timedOutIn);
    if (error instanceof BridgeError) return error;
    return fallback(error);
  }

  dispose(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.caller?.removeEventListener("abort", this.#onAbort);
  }
}

async function readLimitedText(response: Response): Promise<string> {
  if (response.body === null) return "";
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  try {
    while (text.length < MAX_ERROR_BODY) {
      const { value, done } = await reader.read();
      if (done) break;
      text += value;
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
  return text;
}

/** What the server said in the body of an HTTP error answer (the start of it; JSON or plain text). */
async function readServerError(response: Response): Promise<ServerErrorInfo> {
  const text = await readLimitedText(response);
  let parsed: JsonValue | undefined;
  try {
    parsed = JSON.parse(text) as JsonValue;
  } catch {
    parsed = undefined;
  }
  return serverErrorInfo(parsed, text);
}

/**
 * The invalid answer `output` that the token limit cut off, with what it wrote: its tool calls (arguments as
 * sent, cut), or its text; none when a call was required and the cut came before one was written.
 */
function cutOffAnswer(
  output: ChatOutput,
  request: StepRequest,
  at: { problem: string; attempt: number; usage: StepUsage | null },
): CutOffAnswer {
  const written = output.toolCalls.length > 0 || request.toolCallingMode === "required"
    ? { toolCalls: output.toolCalls.map((c) => ({ name: c.name, argumentsText: c.arguments })) }
    : { text: answerText(output, request) };
  return CutOffAnswer.invalid(at.problem, { attempts: at.attempt, written, usage: at.usage });
}

/**
 * The answer text of `output`: a tool call the token limit cut before the server could parse it (llama.cpp
 * then sends the chat template's markup, `<tool_call>\n{"name`, as content) is not part of it.
 */
function answerText(output: ChatOutput, request: StepRequest): string {
  const toolsOffered = (request.offeredTools ?? request.tools).length > 0;
  return toolsOffered && output.finishReason === "length"
    ? withoutCutToolMarkup(output.content)
    : output.content;
}

/** The OpenAI-compatible backend (see {@link createOpenAIModel}). */
class OpenAIModel implements LanguageModel {
  readonly kind = "openai";
  readonly trimsHistory = false;
  readonly #config: OpenAIModelConfig;
  readonly #timeoutMs: number;
  #contextSize = DEFAULT_OPENAI_CONTEXT_SIZE;
  readonly #fields = new FieldCompatibility();
  /** True once the server showed it is llama.cpp (which takes a named `tool_choice` as `"auto"`). */
  #llamaCpp = false;

  /** How to grant network access to a host this process may not reach (else Deno's message stands). */
  readonly #netAccessAdvice: ((host: string) => string | null) | undefined;

  constructor(config: OpenAIModelConfig, netAccessAdvice?: (host: string) => string | null) {
    this.#netAccessAdvice = netAccessAdvice;
    this.#config = { ...config, baseURL: config.baseURL.replace(/\/+$/, "") };
    this.#timeoutMs = config.timeoutMs ?? DEFAULT_OPENAI_TIMEOUT_MS;
  }

  /** The model as `--model` names it: `openai:<baseURL>#<model>`. */
  get label(): string {
    return `openai:${this.#config.baseURL}#${this.#config.model}`;
  }

  get contextSize(): number {
    return this.#contextSize;
  }

  #headers(json: boolean, stream: boolean): Headers {
    const headers = new Headers();
    for (const [name, value] of Object.entries(this.#config.headers ?? {})) headers.set(name, value);
    if (json) headers.set("Content-Type", "application/json");
    headers.set("Accept", stream ? "text/event-stream" : "application/json");
    if (this.#config.apiKey !== undefined) headers.set("Authorization", `Bearer ${this.#config.apiKey}`);
    return headers;
  }

  async step(request: StepRequest): Promise<StepResult> {
    if (request.signal.aborted) throw BridgeError.cancelled();
    if (request.toolCallingMode === "required" && request.tools.length === 0) {
      throw BridgeError.of("invalid_request", "Tool calling mode 'required' needs at least one tool.");
    }
    const body = this.#body(request);
    let usage: StepUsage | null = null;
    let problem = "";
    for (let attempt = 1; attempt <= OPENAI_STEP_ATTEMPTS; attempt++) {
      const output = await this.#completeAdapting(request, body);
      usage = addUsage(usage, output.usage);
      const outcome = this.#interpret(request, output);
      if ("result" in outcome) return { ...outcome.result, usage } as StepResult;
      problem = outcome.problem;
      if (request.options.reportCutOff === true && output.finishReason === "length") {
        throw cutOffAnswer(output, request, { problem, attempt, usage });
      }
      (body.messages as JsonObject[]).push(...retryMessages(output, { problem, request, attempt }));
    }
    throw BridgeError.of(
      "generation_failed",
      `The model gave an invalid answer ${OPENAI_STEP_ATTEMPTS} times; last problem: ${endSentence(problem)}`,
      { attempts: OPENAI_STEP_ATTEMPTS, problem },
    );
  }

  #interpret(request: StepRequest, output: ChatOutput): Interpretation {
    if (output.finishReason === "content_filter") {
      throw BridgeError.of("guardrail_violation", "The model server's content filter blocked the answer.", {
        finishReason: "content_filter",
      });
    }
    if (output.refusal !== null) {
      throw BridgeError.of("refusal", `The model refused: ${output.refusal}`, { refusal: output.refusal });
    }
    if (output.toolCalls.length > 0) {
      const checked = checkToolCalls(output.toolCalls, request.tools);
      if (!checked.ok) return { problem: checked.problem };
      const calls: StepToolCall[] = checked.value;
      return { result: { kind: "toolCalls", calls, usage: null } };
    }
    if (request.toolCallingMode === "required") {
      return { problem: "the model answered with text although a tool call was required" };
    }
    const truncated = output.finishReason === "length" ? " (the answer was cut off at the token limit)" : "";
    // Whether the answer stopped at the token limit, when asked for and the server said.
    const cutOff = request.options.reportCutOff === true && output.finishReason !== null
      ? { cutOff: output.finishReason === "length" }
      : {};
    if (request.responseSchema !== null) {
      const checked = checkStructured(output.content, request.responseSchema.jsonSchema);
      if (!checked.ok) return { problem: checked.problem + truncated };
      const text = compactJson(checked.value);
      return { result: { kind: "structured", value: checked.value, text, usage: null, ...cutOff } };
    }
    return { result: { kind: "text", text: answerText(output, request), usage: null, ...cutOff } };
  }

  /** The request body of a step, with what was learned about the server applied. */
  #body(request: StepRequest): JsonObject {
    return this.#fields.apply(buildChatRequest(request, {
      model: this.#config.model,
      stream: request.stream,
      namedToolChoice: !this.#llamaCpp,
      narrowTools: this.#fields.narrowTools,
    }));
  }

  /** {@link #complete}, re-sent without an optional field the server rejected with HTTP 400. */
  async #completeAdapting(request: StepRequest, body: JsonObject): Promise<ChatOutput> {
    for (let adjustments = 0;; adjustments++) {
      try {
        return await this.#complete(request, body);
      } catch (error) {
        const adapt = adjustments < MAX_FIELD_ADJUSTMENTS && error instanceof BridgeError &&
          error.data.status === 400 && !request.signal.aborted &&
          this.#fields.learn(body, infoFromData(error.data));
        if (!adapt) throw error;
        if (this.#fields.narrowTools && body.tool_choice !== undefined) this.#renarrow(request, body);
      }
    }
  }

  /** Rebuilds the tool fields of `body` (in place, keeping retry messages) after the server refused them. */
  #renarrow(request: StepRequest, body: JsonObject): void {
    const fresh = this.#body(request);
    delete body.tools;
    delete body.tool_choice;
    if (fresh.tools !== undefined) body.tools = fresh.tools;
    if (fresh.tool_choice !== undefined) body.tool_choice = fresh.tool_choice;
  }

  /** Sends one completion request and assembles the answer. */
  async #complete(request: StepRequest, body: JsonObject): Promise<ChatOutput> {
    const url = `${this.#config.baseURL}/chat/completions`;
    const guard = new RequestGuard(request.signal, this.#timeoutMs);
    const accumulator = new CompletionAccumulator();
    try {
      guard.arm("waiting for the response");
      let response: Response;
      try {
        response = await fetch(url, {
          method: "POST",
          headers: this.#headers(true, request.stream),
          body: JSON.stringify(body),
          signal: guard.signal,
        });
      } catch (error) {
        throw guard.fail(error, (e) => networkError(e, { url, advice: this.#netAccessAdvice }));
      }
      const broken = (e: unknown) =>
        BridgeError.of(
          "generation_failed",
          `The connection to the model server broke: ${e instanceof Error ? e.message : String(e)}`,
        ).withCause(e);
      try {
        if (!response.ok) {
          throw httpError(response.status, {
            info: await readServerError(response),
            model: this.#config.model,
            url,
            retryAfter: response.headers.get("retry-after"),
          });
        }
        const type = response.headers.get("content-type") ?? "";
        if (type.includes("text/event-stream")) {
          await this.#readStream(response, request, accumulator, guard);
        } else {
          guard.arm("reading the response");
          accumulator.applyBody(parseJsonText(await response.text(), "the response body"));
        }
      } catch (error) {
        await response.body?.cancel().catch(() => {});
        throw guard.fail(error, broken);
      }
      if (accumulator.fromLlamaCpp) this.#llamaCpp = true;
      return accumulator.output();
    } finally {
      guard.dispose();
    }
  }

  async #readStream(
    response: Response,
    request: StepRequest,
    accumulator: CompletionAccumulator,
    guard: RequestGuard,
  ): Promise<void> {
    if (response.body === null) throw malformed("the event stream has no body");
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    const parser = new SseParser();
    const emit = this.#emitter(request);
    let finished = false;
    try {
      while (!finished) {
        guard.arm("streaming the answer");
        const { value, done } = await reader.read();
        const events = done ? parser.finish() : parser.push(value);
        // Everything that arrived together becomes one snapshot (one text event, not one per chunk).
        let changed = false;
        for (const event of events) {
          if (event.data === "[DONE]") {
            finished = true;
            break;
          }
          const chunk = parseJsonText(event.data, "a stream event");
          // An `event: error` carries the error object itself; wrap it so it is reported as one.
          const wrapped = event.event === "error" && !(isJsonObject(chunk) && Object.hasOwn(chunk, "error"))
            ? { error: chunk }
            : chunk;
          if (accumulator.applyChunk(wrapped)) changed = true;
        }
        if (changed) emit(accumulator.content);
        if (done) {
          if (finished) break;
          if (parser.pending.trim() !== "") {
            throw malformed("the event stream was cut off in the middle of an event");
          }
          // Some servers omit `[DONE]`; a finish reason is enough.
          if (accumulator.finishReason === null) {
            throw malformed("the event stream ended before the answer was complete");
          }
          finished = true;
        }
      }
    } finally {
      await reader.cancel().catch(() => {});
    }
  }

  /** Snapshot callback for the step: text turns stream text, schema turns stream partial values. */
  #emitter(request: StepRequest): (content: string) => void {
    if (!request.stream) return () => {};
    if (request.responseSchema !== null) {
      const schema = request.responseSchema.jsonSchema;
      const onPartial = request.onPartial;
      if (onPartial === undefined) return () => {};
      let last = "";
      return (content) => {
        const partial = parsePartialJson(content);
        if (partial === undefined) return;
        const ordered = orderBySchema(partial, schema);
        const text = compactJson(ordered);
        if (text === last) return;
        last = text;
        onPartial(ordered);
      };
    }
    // In `required` mode any text is not the answer (the step must end in a tool call): do not stream it.
    if (request.toolCallingMode === "required" || request.onText === undefined) return () => {};
    const onText = request.onText;
    return (content) => onText(content);
  }

  async availability(): Promise<ModelAvailability> {
    const base = {
      contextSize: this.#contextSize,
      variant: this.#config.model,
      supportedLanguages: [] as string[],
    };
    // `permanent`: waiting cannot help (a grant this process lacks, a model or credentials the server refuses).
    const unavailable = (detail: string, permanent = false): ModelAvailability => ({
      ...base,
      contextSize: this.#contextSize,
      available: false,
      reason: "unknown",
      detail,
      ...(permanent ? { permanent } : {}),
    });
    const url = `${this.#config.baseURL}/models`;
    let listing: JsonValue;
    try {
      listing = await this.#getJson(url);
    } catch (error) {
      return unavailable(error instanceof Error ? error.message : String(error), isForGood(error));
    }
    const data = isJsonObject(listing) && Array.isArray(listing.data)
      ? listing.data.filter(isJsonObject)
      : null;
    if (data === null) return unavailable(`${url} did not return a model list.`);
    const isLlama = data.some((entry) => entry.owned_by === "llamacpp");
    if (isLlama) this.#llamaCpp = true;
    let entry = data.find((m) =>
      m.id === this.#config.model ||
      (Array.isArray(m.aliases) && m.aliases.includes(this.#config.model))
    );
    // llama.cpp serves its one model under any requested name.
    if (entry === undefined && isLlama && data.length === 1) entry = data[0];
    if (entry === undefined) {
      const ids = data.map((m) => String(m.id)).slice(0, 20).join(", ");
      return unavailable(
        `The server does not offer model '${this.#config.model}' (it lists: ${ids || "none"}).`,
        true,
      );
    }
    const size = await this.#contextSizeOf(entry, isLlama);
    if (size !== undefined) this.#contextSize = size;
    return { ...base, contextSize: this.#contextSize, available: true };
  }

  async #contextSizeOf(entry: JsonObject, isLlama: boolean): Promise<number | undefined> {
    const positive = (v: JsonValue | undefined) =>
      typeof v === "number" && Number.isInteger(v) && v > 0 ? v : undefined;
    const meta = isJsonObject(entry.meta) ? entry.meta : {};
    const fromMeta = positive(meta.n_ctx) ?? positive(entry.max_model_len) ?? positive(entry.context_length);
    if (fromMeta !== undefined) return fromMeta;
    if (isLlama) {
      try {
        const props = await this.#getJson(`${this.#config.baseURL.replace(/\/v1$/, "")}/props`);
        const settings = isJsonObject(props) ? props.default_generation_settings : undefined;
        const n = isJsonObject(settings) ? positive(settings.n_ctx) : undefined;
        if (n !== undefined) return n;
      } catch {
        // fall through to the training context
      }
    }
    return positive(meta.n_ctx_train);
  }

  async #getJson(url: string): Promise<JsonValue> {
    const timeout = this.#timeoutMs > 0
      ? Math.min(this.#timeoutMs, AVAILABILITY_TIMEOUT_MS)
      : AVAILABILITY_TIMEOUT_MS;
    const guard = new RequestGuard(null, timeout);
    try {
      guard.arm("listing models");
      let response: Response;
      try {
        response = await fetch(url, { headers: this.#headers(false, false), signal: guard.signal });
      } catch (error) {
        const failure = guard.fail(error, (e) => networkError(e, { url, advice: this.#netAccessAdvice }));
        // A network grant this process lacks: it cannot be added while the process runs.
        throw isMissingGrant(error) ? forGood(failure) : failure;
      }
      try {
        if (!response.ok) {
          const info = await readServerError(response);
          const said = info.message === "" ? "" : `: ${info.message}`;
          const refused = BridgeError.of(
            "model_unavailable",
            `GET ${url} answered HTTP ${response.status}${said}`,
            {
              status: response.status,
              serverMessage: info.message,
            },
          );
          // 401/403: the server refuses these credentials; asking again later brings the same answer.
          throw response.status === 401 || response.status === 403 ? forGood(refused) : refused;
        }
        return parseJsonText(await response.text(), `the answer of GET ${url}`);
      } catch (error) {
        await response.body?.cancel().catch(() => {});
        throw guard.fail(
          error,
          (e) =>
            BridgeError.of(
              "model_unavailable",
              `GET ${url} failed: ${e instanceof Error ? e.message : String(e)}`,
            ),
        );
      }
    } finally {
      guard.dispose();
    }
  }
}

/**
 * Creates the OpenAI-compatible backend (`kind: "openai"`, no history trimming, `contextSize` 4096 until
 * `availability()` has read the server's value).
 *
 * @example
 * ```ts
 * import { createOpenAIModel } from "@open-apple-models/bridge/engine";
 * const model = createOpenAIModel({ baseURL: "http://127.0.0.1:8080/v1", model: "tiny" });
 * const availability = await model.availability();
 * // A process without the network grant: its failures end with this advice instead of Deno's.
 * const advised = createOpenAIModel({ baseURL: "http://127.0.0.1:8080/v1", model: "tiny" }, {
 *   netAccessAdvice: (host) => `Start the bridge with --allow-net=${host}.`,
 * });
 * ```
 */
export function createOpenAIModel(
  config: OpenAIModelConfig,
  options: { netAccessAdvice?: (host: string) => string | null } = {},
): LanguageModel {
  return new OpenAIModel(config, options.netAccessAdvice);
}
