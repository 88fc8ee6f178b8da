/**
 * `POST /v1/chat/completions`: reads and validates the body, checks the model, waits for a slot, runs the
 * completion and answers it whole or as server-sent events. A streamed answer commits to status 200 only with
 * its first event, so failures before that (unavailable model, context overflow, guardrails) get their own
 * status. The request's time limit includes the wait for a slot; a client that goes away cancels its
 * completion and frees its slot.
 * @module
 */
import { BridgeError, internalErrorReport } from "../protocol/errors.ts";
import type { JsonObject } from "../protocol/json.ts";
import type { ModelAvailability } from "../models/language_model.ts";
import { parseChatRequestText } from "./chat_request.ts";
import {
  CompletionEncoder,
  type CompletionToolCall,
  type CompletionUsage,
  type FinishReason,
  SSE_DONE,
  sseEvent,
} from "./completion_encoder.ts";
import { type CompletionPlan, planCompletion } from "./completion_plan.ts";
import { type CompletionEvent, CompletionRun, type CompletionSink } from "./completion_run.ts";
import { errorResponse, eventStreamResponse, jsonResponse } from "./http_response.ts";
import type { ConcurrencyLimiter } from "./limiter.ts";
import { fromAgentError, OpenAIError } from "./openai_error.ts";
import { readBodyText } from "./request_body.ts";
import type { ServeConfiguration } from "./server_config.ts";

/** What the endpoint shares with the server. */
export interface ChatContext {
  /** Settings. */
  config: ServeConfiguration;
  /** Slots and queue. */
  limiter: ConcurrencyLimiter;
  /** Completions in flight (the server cancels them when it stops). */
  runs: Set<CompletionRun>;
  /** Aborts when the server begins to stop (a body still arriving is then refused). */
  stopping?: AbortSignal;
}

const utf8 = new TextEncoder();

function asOpenAIError(error: unknown, config: ServeConfiguration): OpenAIError {
  const e = error instanceof OpenAIError ? error : fromAgentError(error);
  logInternal(e, config);
  return e;
}

/** Logs the stack of a bug behind an error answer (an internal error of the turn or the server). */
function logInternal(error: OpenAIError, config: ServeConfiguration): void {
  if (!(error.cause instanceof BridgeError)) return;
  const report = internalErrorReport(error.cause, { where: "/v1/chat/completions" });
  if (report !== null) config.logger.error(report);
}

/**
 * Serves one chat completion request. `context.clientGone` aborts when the client disconnects before the
 * answer.
 */
export async function chatCompletions(
  request: Request,
  context: ChatContext & { clientGone: AbortSignal; logAs?: string },
): Promise<Response> {
  const started = performance.now();
  const { clientGone } = context;
  const { config, limiter } = context;
  const deadline = Date.now() + config.requestTimeoutMs;
  let plan: CompletionPlan;
  try {
    const text = await readBodyText(request, {
      limit: config.maxRequestBodyBytes,
      time: {
        deadline,
        timeoutMs: config.requestTimeoutMs,
        ...(context.stopping ? { stop: context.stopping } : {}),
      },
    });
    plan = planCompletion(parseChatRequestText(text), config);
  } catch (error) {
    const e = asOpenAIError(error, config);
    // The rest of a body that never came is not read: the connection cannot carry another request.
    const unread = e.code === "request_timeout" || e.code === "server_shutting_down";
    return errorResponse(e, unread ? { connection: "close" } : {});
  }
  try {
    const availability = await plan.model.availability();
    if (!availability.available) {
      return errorResponse(unavailableError(plan.modelId, plan.model.kind, availability));
    }
  } catch (error) {
    return errorResponse(asOpenAIError(error, config));
  }
  switch (await limiter.acquire(deadline, clientGone)) {
    case "acquired":
      break;
    case "queue_full":
      return errorResponse(OpenAIError.queueFull(limiter.limit, limiter.maxQueued));
    case "timed_out":
      return errorResponse(OpenAIError.queueTimeout(config.requestTimeoutMs / 1000, limiter.limit));
    case "cancelled":
      return errorResponse(OpenAIError.server("The request was cancelled.", "cancelled"));
  }
  config.logger.debug(
    `Completion started (${
      plan.stream ? "streamed" : "whole"
    }; ${limiter.active} active, ${limiter.queued} queued).`,
  );
  if (!plan.stream) return collected(plan, context, deadline, clientGone);
  const log = { as: context.logAs ?? `${request.method} /v1/chat/completions`, started };
  return streamed(plan, { ...context, log }, deadline, clientGone);
}

/** Starts `run` holding a slot until its turn has ended; cancels it at the deadline. */
function start(run: CompletionRun, context: ChatContext, deadline: number): void {
  const seconds = context.config.requestTimeoutMs / 1000;
  const timer = setTimeout(
    () => run.cancel(OpenAIError.timeout(seconds)),
    Math.max(0, deadline - Date.now()),
  );
  context.runs.add(run);
  run.run().finally(() => {
    clearTimeout(timer);
    context.runs.delete(run);
    context.limiter.release();
  });
}

/** Cancels `run` when the client goes away, until the returned function is called. */
function cancelWhenGone(run: CompletionRun, clientGone: AbortSignal): () => void {
  const onGone = () => run.cancel(OpenAIError.clientGone());
  clientGone.addEventListener("abort", onGone, { once: true });
  return () => clientGone.removeEventListener("abort", onGone);
}

function collected(
  plan: CompletionPlan,
  context: ChatContext,
  deadline: number,
  clientGone: AbortSignal,
): Promise<Response> {
  const encoder = new CompletionEncoder(plan.modelId);
  let content = "";
  let refusal: string | null = null;
  let toolCalls: CompletionToolCall[] = [];
  return new Promise<Response>((resolve) => {
    const run = new CompletionRun(plan, {
      event: (event) => {
        switch (event.type) {
          case "content":
            content += event.text;
            break;
          case "refusal":
            refusal = event.text;
            break;
          case "toolCalls":
            toolCalls = event.calls;
            break;
          case "finished":
            stopWatching();
            resolve(jsonResponse(encoder.completion({
              content: refusal !== null || (content === "" && toolCalls.length > 0) ? null : content,
              refusal,
              toolCalls,
              finishReason: event.reason,
              usage: event.usage,
            })));
        }
      },
      fail: (error) => {
        logInternal(error, context.config);
        stopWatching();
        resolve(errorResponse(error));
      },
    });
    const stopWatching = cancelWhenGone(run, clientGone);
    start(run, context, deadline);
  });
}

/** How a stream's end is logged: the request's method and path, and when it began (`performance.now()`). */
interface StreamLog {
  as: string;
  started: number;
}

function streamed(
  plan: CompletionPlan,
  context: ChatContext & { log: StreamLog },
  deadline: number,
  clientGone: AbortSignal,
): Promise<Response> {
  return new Promise<Response>((resolve) => {
    const answer = new StreamedAnswer(plan, { config: context.config, log: context.log }, resolve);
    const run = new CompletionRun(plan, answer);
    answer.watch(run, clientGone);
    start(run, context, deadline);
  });
}

/** The body of a streamed answer: takes text until it ends or the client cancels it, then ignores writes. */
class EventStream {
  readonly body: ReadableStream<Uint8Array>;
  #controller!: ReadableStreamDefaultController<Uint8Array>;
  #open = true;

  /** A stream that calls `onCancel` when the client goes away mid-stream. */
  constructor(onCancel: () => void) {
    this.body = new ReadableStream<Uint8Array>({
      start: (controller) => {
        this.#controller = controller;
      },
      cancel: () => {
        this.#open = false;
        onCancel();
      },
    });
  }

  write(text: string): void {
    if (!this.#open) return;
    try {
      this.#controller.enqueue(utf8.encode(text));
    } catch {
      this.#open = false;
    }
  }

  end(): void {
    if (!this.#open) return;
    this.#open = false;
    try {
      this.#controller.close();
    } catch {
      // cancelled meanwhile
    }
  }

  /** Leaves the stream unsent (the answer became an error response). */
  discard(): void {
    this.#open = false;
  }
}

/**
 * A completion answered as server-sent events. Status 200 goes out with the first event (with the role
 * chunk, or the role in the tool calls' chunk); a failure before it is an error response with its own status,
 * a failure after it an error event.
 */
class StreamedAnswer implements CompletionSink {
  readonly #encoder: CompletionEncoder;
  readonly #includeUsage: boolean;
  readonly #config: ServeConfiguration;
  readonly #log: StreamLog;
  readonly #respond: (response: Response) => void;
  readonly #stream: EventStream;
  #run: CompletionRun | null = null;
  #stopWatching: () => void = () => {};
  #started = false;
  /** The client closed the stream (its run is cancelled for that). */
  #clientLeft = false;

  constructor(
    plan: CompletionPlan,
    server: { config: ServeConfiguration; log: StreamLog },
    respond: (response: Response) => void,
  ) {
    this.#encoder = new CompletionEncoder(plan.modelId);
    this.#includeUsage = plan.includeUsage;
    this.#config = server.config;
    this.#log = server.log;
    this.#respond = respond;
    // The client went away mid-stream: stop generating (the slot frees when the turn has ended).
    this.#stream = new EventStream(() => {
      this.#clientLeft = true;
      this.#run?.cancel(OpenAIError.clientGone());
    });
  }

  /** Answers for `run`, which the client's going away cancels. */
  watch(run: CompletionRun, clientGone: AbortSignal): void {
    this.#run = run;
    this.#stopWatching = cancelWhenGone(run, clientGone);
  }

  event(event: CompletionEvent): void {
    if (!this.#started && event.type === "toolCalls") {
      // An answer that starts with tool calls starts as OpenAI streams one: the role, `content: null` and the
      // calls in one delta (the SDKs' accumulated message then has `content: null`, as when not streamed).
      this.#begin(false);
      return this.#chunk({
        role: "assistant",
        content: null,
        ...CompletionEncoder.toolCallsDelta(event.calls),
      });
    }
    this.#begin();
    switch (event.type) {
      case "content":
        return this.#chunk({ content: event.text });
      case "refusal":
        return this.#chunk({ refusal: event.text });
      case "toolCalls":
        return this.#chunk(CompletionEncoder.toolCallsDelta(event.calls));
      case "finished":
        return this.#finish(event.reason, event.usage);
    }
  }

  fail(error: OpenAIError): void {
    logInternal(error, this.#config);
    if (!this.#started) return this.#refuse(error);
    this.#logEnd(error);
    this.#stream.write(sseEvent(error.toJson()));
    this.#close();
  }

  /**
   * The log's word on a stream that ended without its finish chunk: the access line went out with the 200,
   * and the developer of a client whose stream stopped reads here why (a warning), or that the client itself
   * closed it (info).
   */
  #logEnd(error: OpenAIError): void {
    const { as, started } = this.#log;
    const after = `${Math.round(performance.now() - started)}ms`;
    if (this.#clientLeft) {
      return this.#config.logger.info(
        `${as}: the client closed the connection after ${after} of the stream; its generation was cancelled.`,
      );
    }
    this.#config.logger.warning(
      `${as}: the stream ended with an error after ${after}: ${error.status} ${
        error.code ?? error.type
      }: ${error.message}`,
    );
  }

  /** On the first event: the response, then the role chunk (unless `roleChunk` is false: the caller sends it). */
  #begin(roleChunk = true): void {
    if (this.#started) return;
    this.#started = true;
    // From here on the client's disconnect is seen by the stream itself.
    this.#stopWatching();
    this.#respond(eventStreamResponse(this.#stream.body));
    if (roleChunk) this.#chunk({ role: "assistant", content: "" });
  }

  /** A failure before the first event: an error response instead of the stream. */
  #refuse(error: OpenAIError): void {
    this.#started = true;
    this.#stopWatching();
    this.#stream.discard();
    this.#respond(errorResponse(error));
  }

  #chunk(delta: JsonObject, finishReason: FinishReason | null = null): void {
    this.#stream.write(sseEvent(this.#encoder.chunk(delta, finishReason, this.#includeUsage)));
  }

  #finish(reason: FinishReason, usage: CompletionUsage): void {
    this.#chunk({}, reason);
    if (this.#includeUsage) this.#stream.write(sseEvent(this.#encoder.usageChunk(usage)));
    this.#close();
  }

  #close(): void {
    this.#stream.write(SSE_DONE);
    this.#stream.end();
  }
}

/**
 * The 503 `model_unavailable` of a model found unavailable before its turn: the reason, why in words for the
 * on-device model, and the check's `detail` (an SDK's user sees only this message, not the server's log).
 * A check that says waiting cannot cure it (`permanent`: a Deno permission this process was not granted, a
 * model id the server does not offer, credentials it refuses) gets no `Retry-After` and `x-should-retry: false`.
 */
function unavailableError(
  modelId: string,
  kind: string,
  availability: Pick<ModelAvailability, "reason" | "detail" | "permanent">,
): OpenAIError {
  const { reason, detail, permanent } = availability;
  let message = `The model '${modelId}' is unavailable: ${reason ?? "unknown"}${
    unavailableAdvice(kind, reason)
  }`;
  if (detail !== undefined && detail.trim() !== "") {
    message += ` ${detail.trim()}${/[.!?]$/.test(detail.trim()) ? "" : "."}`;
  }
  if (permanent !== true) return OpenAIError.modelUnavailable(message, reason);
  return new OpenAIError({
    status: 503,
    message,
    type: "server_error",
    code: "model_unavailable",
    retryable: false,
  });
}

/** Why the on-device model cannot run, in words, for the reasons waiting does not cure. */
const ON_DEVICE_WHY: Readonly<Record<string, string>> = {
  device_not_eligible: "this device cannot run Apple Intelligence",
  apple_intelligence_not_enabled: "Apple Intelligence is turned off",
};

/**
 * The end of a 503 `model_unavailable` message: for the on-device model on a machine that cannot run it, why
 * and the flags that serve another model (an SDK's user sees only this message, not the server's banner).
 *
 * @example
 * ```ts
 * import { unavailableAdvice } from "./chat_endpoint.ts";
 * unavailableAdvice("system", "device_not_eligible"); // " (this device cannot run Apple Intelligence). Start …"
 * unavailableAdvice("system", "model_not_ready"); // "."
 * ```
 */
export function unavailableAdvice(kind: string, reason: string | undefined): string {
  if (kind !== "system" || reason === undefined || !Object.hasOwn(ON_DEVICE_WHY, reason)) return ".";
  return ` (${ON_DEVICE_WHY[reason]}). Start the server with --model gguf:<file.gguf>, ` +
    "--model openai:<baseURL>#<model> or --script <file> to serve another model.";
}
