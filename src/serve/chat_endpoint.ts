/**
 * `POST /v1/chat/completions`: reads and validates the body, checks the model, waits for a slot, runs the
 * completion and answers it whole or as server-sent events. A streamed answer commits to status 200 only with
 * its first event, so failures before that (unavailable model, context overflow, guardrails) get their own
 * status. The request's time limit includes the wait for a slot; a client that goes away cancels its
 * completion and frees its slot.
 * @module
 */
import type { ToolCallInfo } from "../agent/types.ts";
import { BridgeError, internalErrorReport } from "../protocol/errors.ts";
import { parseChatRequestText } from "./chat_request.ts";
import { CompletionEncoder, type FinishReason, SSE_DONE, sseEvent } from "./completion_encoder.ts";
import { type CompletionPlan, planCompletion } from "./completion_plan.ts";
import { CompletionRun } from "./completion_run.ts";
import { errorResponse, jsonResponse } from "./http_response.ts";
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
  const report = internalErrorReport(error.cause, "/v1/chat/completions");
  if (report !== null) config.logger.error(report);
}

/**
 * Serves one chat completion request. `context.clientGone` aborts when the client disconnects before the
 * answer.
 */
export async function chatCompletions(
  request: Request,
  context: ChatContext & { clientGone: AbortSignal },
): Promise<Response> {
  const { clientGone } = context;
  const { config, limiter } = context;
  const deadline = Date.now() + config.requestTimeoutMs;
  let plan: CompletionPlan;
  try {
    const text = await readBodyText(request, config.maxRequestBodyBytes);
    plan = planCompletion(parseChatRequestText(text), config);
  } catch (error) {
    return errorResponse(asOpenAIError(error, config));
  }
  try {
    const availability = await plan.model.availability();
    if (!availability.available) {
      return errorResponse(
        new OpenAIError({
          status: 503,
          message: `The model '${plan.modelId}' is unavailable: ${availability.reason ?? "unknown"}.`,
          type: "server_error",
          code: "model_unavailable",
          retryAfter: 30,
        }),
      );
    }
  } catch (error) {
    return errorResponse(asOpenAIError(error, config));
  }
  switch (await limiter.acquire(deadline, clientGone)) {
    case "acquired":
      break;
    case "queue_full":
      return errorResponse(
        new OpenAIError({
          status: 429,
          message: "Too many requests are waiting for the model. Retry shortly.",
          type: "rate_limit_error",
          code: "rate_limited",
          retryAfter: 1,
        }),
      );
    case "timed_out":
      return errorResponse(OpenAIError.timeout(config.requestTimeoutMs / 1000));
    case "cancelled":
      return errorResponse(OpenAIError.server("The request was cancelled.", "cancelled"));
  }
  config.logger.debug(
    `Completion started (${
      plan.stream ? "streamed" : "whole"
    }; ${limiter.active} active, ${limiter.queued} queued).`,
  );
  return plan.stream
    ? streamed(plan, context, deadline, clientGone)
    : collected(plan, context, deadline, clientGone);
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

function collected(
  plan: CompletionPlan,
  context: ChatContext,
  deadline: number,
  clientGone: AbortSignal,
): Promise<Response> {
  const encoder = new CompletionEncoder(plan.modelId);
  let content = "";
  let refusal: string | null = null;
  let toolCalls: ToolCallInfo[] = [];
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
            clientGone.removeEventListener("abort", onGone);
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
        clientGone.removeEventListener("abort", onGone);
        resolve(errorResponse(error));
      },
    });
    const onGone = () => run.cancel(OpenAIError.clientGone());
    clientGone.addEventListener("abort", onGone, { once: true });
    start(run, context, deadline);
  });
}

function streamed(
  plan: CompletionPlan,
  context: ChatContext,
  deadline: number,
  clientGone: AbortSignal,
): Promise<Response> {
  const encoder = new CompletionEncoder(plan.modelId);
  const usage = plan.includeUsage;
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  let open = true;
  let started = false;
  let run!: CompletionRun;
  const body = new ReadableStream<Uint8Array>({
    start: (c) => {
      controller = c;
    },
    // The client went away mid-stream: stop generating (the slot frees when the turn has ended).
    cancel: () => {
      open = false;
      run.cancel(OpenAIError.clientGone());
    },
  });
  const write = (text: string) => {
    if (!open) return;
    try {
      controller.enqueue(utf8.encode(text));
    } catch {
      open = false;
    }
  };
  const end = () => {
    if (!open) return;
    open = false;
    try {
      controller.close();
    } catch {
      // cancelled meanwhile
    }
  };
  return new Promise<Response>((resolve) => {
    const begin = () => {
      if (started) return;
      started = true;
      // From here on the client's disconnect is seen by the stream itself.
      clientGone.removeEventListener("abort", onGone);
      resolve(
        new Response(body, {
          status: 200,
          headers: {
            "content-type": "text/event-stream; charset=utf-8",
            "cache-control": "no-cache",
            "x-accel-buffering": "no",
          },
        }),
      );
      write(sseEvent(encoder.chunk({ role: "assistant", content: "" }, null, usage)));
    };
    run = new CompletionRun(plan, {
      event: (event) => {
        begin();
        switch (event.type) {
          case "content":
            write(sseEvent(encoder.chunk({ content: event.text }, null, usage)));
            break;
          case "refusal":
            write(sseEvent(encoder.chunk({ refusal: event.text }, null, usage)));
            break;
          case "toolCalls":
            write(sseEvent(encoder.chunk(CompletionEncoder.toolCallsDelta(event.calls), null, usage)));
            break;
          case "finished": {
            const reason: FinishReason = event.reason;
            write(sseEvent(encoder.chunk({}, reason, usage)));
            if (usage) write(sseEvent(encoder.usageChunk(event.usage)));
            write(SSE_DONE);
            end();
          }
        }
      },
      fail: (error) => {
        logInternal(error, context.config);
        if (!started) {
          started = true;
          clientGone.removeEventListener("abort", onGone);
          open = false;
          resolve(errorResponse(error));
          return;
        }
        write(sseEvent(error.toJson()));
        write(SSE_DONE);
        end();
      },
    });
    const onGone = () => run.cancel(OpenAIError.clientGone());
    clientGone.addEventListener("abort", onGone, { once: true });
    start(run, context, deadline);
  });
}
