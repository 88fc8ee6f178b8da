/**
 * A small OpenAI-compatible mock server for the backend's unit tests: Deno.serve on 127.0.0.1 port 0,
 * records every request, answers from a list of handlers (one per request, the last one repeats).
 * @module
 */
import type { JsonValue } from "../../src/protocol/json.ts";

/** A request the mock received. */
export interface RecordedRequest {
  method: string;
  path: string;
  headers: Headers;
  body: JsonValue | null;
}

/**
 * An error a test makes on purpose (a response body that breaks off, say): the mock server keeps it out of
 * the test output. Any other error a handler or a response body raises is reported on stderr.
 */
export class IntendedFailure extends Error {}

/** Where the mock server reports unexpected errors (default: stderr). */
export type ErrorReporter = (error: unknown) => void;

function reportOnStderr(error: unknown): void {
  const text = error instanceof Error ? error.stack ?? error.message : String(error);
  Deno.stderr.writeSync(new TextEncoder().encode(`mock server: ${text}\n`));
}

/** Produces the answer to the `index`-th request. */
export type MockHandler = (
  request: RecordedRequest,
  index: number,
  server: MockServer,
) => Response | Promise<Response>;

/** A running mock server; always `await close()` it. */
export class MockServer {
  readonly requests: RecordedRequest[] = [];
  readonly #server: Deno.HttpServer<Deno.NetAddr>;
  readonly #open = new Set<ReadableStreamDefaultController<Uint8Array>>();
  /** Resolves when a streamed response was cancelled by the client. */
  readonly cancelled: Promise<void>;
  #markCancelled!: () => void;

  constructor(handlers: MockHandler | MockHandler[], report: ErrorReporter = reportOnStderr) {
    const list = Array.isArray(handlers) ? handlers : [handlers];
    this.cancelled = new Promise((resolve) => this.#markCancelled = resolve);
    this.#server = Deno.serve(
      {
        hostname: "127.0.0.1",
        port: 0,
        onListen: () => {},
        // Deno prints every error of a handler or a response body with its stack trace by default, which
        // reads like a failure in a passing run: intended ones stay quiet.
        onError: (error) => {
          if (!(error instanceof IntendedFailure)) report(error);
          return new Response("Internal Server Error", { status: 500 });
        },
      },
      async (req) => {
        const text = await req.text();
        let body: JsonValue | null = null;
        if (text !== "") body = JSON.parse(text) as JsonValue;
        const recorded: RecordedRequest = {
          method: req.method,
          path: new URL(req.url).pathname,
          headers: req.headers,
          body,
        };
        const index = this.requests.length;
        this.requests.push(recorded);
        const handler = list[Math.min(index, list.length - 1)];
        return await handler(recorded, index, this);
      },
    );
  }

  /** `http://127.0.0.1:<port>/v1`. */
  get baseURL(): string {
    return `http://127.0.0.1:${this.#server.addr.port}/v1`;
  }

  /** Bodies of the `POST …/chat/completions` requests. */
  get chatBodies(): JsonValue[] {
    return this.requests.filter((r) => r.path.endsWith("/chat/completions")).map((r) => r.body);
  }

  /**
   * A streamed SSE response. Each item is sent as one network write: objects become `data: <json>\n\n`,
   * strings are written verbatim; `{delayMs}` items pause. With `hang`, the stream stays open until the
   * client goes away or the server closes.
   */
  sse(
    items: (JsonValue | { delayMs: number } | RawText)[],
    options: { done?: boolean; hang?: boolean } = {},
  ): Response {
    const encoder = new TextEncoder();
    let controllerRef: ReadableStreamDefaultController<Uint8Array>;
    const stream = new ReadableStream<Uint8Array>({
      start: (controller) => {
        controllerRef = controller;
        this.#open.add(controller);
        (async () => {
          try {
            for (const item of items) {
              if (item instanceof RawText) {
                controller.enqueue(encoder.encode(item.text));
              } else if (
                item !== null && typeof item === "object" && "delayMs" in item &&
                Object.keys(item).length === 1
              ) {
                await new Promise((resolve) => setTimeout(resolve, (item as { delayMs: number }).delayMs));
              } else {
                controller.enqueue(encoder.encode(`data: ${JSON.stringify(item)}\n\n`));
              }
            }
            if (options.done !== false) controller.enqueue(encoder.encode("data: [DONE]\n\n"));
            if (!options.hang) {
              this.#open.delete(controller);
              controller.close();
            }
          } catch {
            // the client went away
          }
        })();
      },
      cancel: () => {
        this.#open.delete(controllerRef);
        this.#markCancelled();
      },
    });
    return new Response(stream, { headers: { "content-type": "text/event-stream" } });
  }

  /** Stops the server, ending hanging streams first. */
  async close(): Promise<void> {
    for (const controller of this.#open) {
      try {
        controller.close();
      } catch {
        // already closed
      }
    }
    this.#open.clear();
    await this.#server.shutdown();
  }
}

/** Text written verbatim into an SSE stream (for framing tests). */
export class RawText {
  constructor(readonly text: string) {}
}

/** A JSON response. */
export function json(body: JsonValue, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json", ...headers },
  });
}

/** A non-streamed `chat.completion` with text content. */
export function completion(
  content: string | null,
  extra: { finish?: string; usage?: JsonValue; toolCalls?: JsonValue[] } = {},
): JsonValue {
  const message: Record<string, JsonValue> = { role: "assistant", content };
  if (extra.toolCalls !== undefined) message.tool_calls = extra.toolCalls;
  return {
    id: "chatcmpl-1",
    object: "chat.completion",
    created: 1,
    model: "mock",
    choices: [{
      index: 0,
      message,
      finish_reason: extra.finish ?? (extra.toolCalls ? "tool_calls" : "stop"),
    }],
    usage: extra.usage ?? { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
  };
}

/** A `chat.completion.chunk` with a delta. */
export function chunk(delta: JsonValue, finish: string | null = null): JsonValue {
  return {
    id: "chatcmpl-1",
    object: "chat.completion.chunk",
    created: 1,
    model: "mock",
    choices: [{ index: 0, delta, finish_reason: finish }],
  };
}

/** The final usage chunk (`choices: []`). */
export function usageChunk(prompt: number, completionTokens: number, cached?: number): JsonValue {
  const usage: Record<string, JsonValue> = {
    prompt_tokens: prompt,
    completion_tokens: completionTokens,
    total_tokens: prompt + completionTokens,
  };
  if (cached !== undefined) usage.prompt_tokens_details = { cached_tokens: cached };
  return { id: "chatcmpl-1", object: "chat.completion.chunk", created: 1, model: "mock", choices: [], usage };
}

/** A tool call in a non-streamed message. */
export function toolCall(id: string, name: string, args: string): JsonValue {
  return { id, type: "function", function: { name, arguments: args } };
}

/** A port nothing listens on (bound, then released). */
export function closedPort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}
