/**
 * Fixtures of the server tests: a listening server on a free port with a given model, a model wrapper that
 * records every step request, and a model that streams a first snapshot and then holds its step until it
 * is released or aborted (to test disconnects, queueing and time limits without sleeps).
 */
import type {
  LanguageModel,
  ModelAvailability,
  StepRequest,
  StepResult,
} from "../../src/models/language_model.ts";
import { BridgeError } from "../../src/protocol/errors.ts";
import { parseScript, ScriptedModel } from "../../src/models/scripted.ts";
import type { JsonValue } from "../../src/protocol/json.ts";
import { OpenAIServer } from "../../src/serve/openai_server.ts";
import type { ServeConfiguration } from "../../src/serve/server_config.ts";
import type { Logger } from "../../src/util/logger.ts";

/** How long a test waits for an event before it fails (instead of hanging). */
export const WAIT_MS = 10_000;

/** `promise`, or a rejection naming `what` after {@link WAIT_MS}. */
export function within<T>(promise: Promise<T>, what: string, ms = WAIT_MS): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return Promise.race([
    promise,
    new Promise<T>((_, reject) =>
      timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), ms)
    ),
  ]).finally(() => clearTimeout(timer));
}

/** Resolves when no completion runs or waits on the server (rejects after the wait deadline). */
export function idle(server: OpenAIServer): Promise<void> {
  return within(server.idle(), "the server's slots to be free");
}

/** A running server and its base URL. */
export interface Served {
  server: OpenAIServer;
  /** `http://127.0.0.1:<port>` */
  base: string;
  [Symbol.asyncDispose](): Promise<void>;
}

/** A logger that keeps `level: message` lines and tells when one matches. */
export function recordingLogger(): {
  logger: Logger;
  lines: string[];
  seen(pattern: RegExp): Promise<string>;
} {
  const lines: string[] = [];
  const waiting: { pattern: RegExp; resolve: (line: string) => void }[] = [];
  const note = (level: string) => (message: string) => {
    const line = `${level}: ${message}`;
    lines.push(line);
    for (const w of [...waiting]) {
      if (w.pattern.test(line)) {
        waiting.splice(waiting.indexOf(w), 1);
        w.resolve(line);
      }
    }
  };
  return {
    logger: { debug: note("debug"), info: note("info"), warning: note("warning"), error: note("error") },
    lines,
    seen(pattern) {
      const found = lines.find((l) => pattern.test(l));
      if (found !== undefined) return Promise.resolve(found);
      return within(new Promise((resolve) => waiting.push({ pattern, resolve })), `a log line ${pattern}`);
    },
  };
}

/** Starts a server on a free loopback port serving `model` as `system`. */
export async function serve(model: LanguageModel, config: Partial<ServeConfiguration> = {}): Promise<Served> {
  const server = new OpenAIServer({ port: 0, models: new Map([["system", model]]), ...config });
  await server.start();
  return {
    server,
    base: `http://127.0.0.1:${server.port}`,
    [Symbol.asyncDispose]: () => server.stop(),
  };
}

/** A scripted model from plain steps. */
export function script(...steps: JsonValue[]): ScriptedModel {
  return new ScriptedModel(parseScript(steps, "script"));
}

/** Wraps a model and records each step request (what the model saw: mode, tools, history, prompt). */
export class RecordingModel implements LanguageModel {
  readonly kind: string;
  readonly contextSize: number;
  readonly trimsHistory = false;
  readonly steps: StepRequest[] = [];
  readonly #inner: LanguageModel;

  constructor(inner: LanguageModel) {
    this.#inner = inner;
    this.kind = inner.kind;
    this.contextSize = inner.contextSize;
  }

  availability(): Promise<ModelAvailability> {
    return this.#inner.availability();
  }

  step(request: StepRequest): Promise<StepResult> {
    // A copy: the agent appends the finished turn to the array it passed as the history.
    this.steps.push({ ...request, history: [...request.history] });
    return this.#inner.step(request);
  }
}

/**
 * A model whose steps stream `first` and then wait until {@link release} (answering `first + rest`) or until
 * they are aborted. `started` and `aborted` count the steps, with promises to wait for the next one. With
 * `holdThroughAbort`, an aborted step is counted but still waits for {@link release} (a backend slow to stop;
 * its turn, and the server slot it holds, end only then).
 */
export class HoldingModel implements LanguageModel {
  readonly kind = "holding";
  readonly contextSize = 8192;
  readonly trimsHistory = false;
  started = 0;
  aborted = 0;
  readonly #first: string;
  readonly #rest: string;
  #releases: Array<() => void> = [];
  #startWaiters: Array<() => void> = [];
  #abortWaiters: Array<() => void> = [];
  readonly #holdThroughAbort: boolean;

  constructor(first = "Once upon", rest = " a time.", options: { holdThroughAbort?: boolean } = {}) {
    this.#first = first;
    this.#rest = rest;
    this.#holdThroughAbort = options.holdThroughAbort ?? false;
  }

  availability(): Promise<ModelAvailability> {
    return Promise.resolve({ available: true, contextSize: 8192, supportedLanguages: [] });
  }

  /** Resolves once `n` steps have started (rejects after the wait deadline). */
  whenStarted(n: number): Promise<void> {
    return within(this.#when(() => this.started >= n, this.#startWaiters), `${n} started steps`);
  }

  /** Resolves once `n` steps were aborted (rejects after the wait deadline). */
  whenAborted(n: number): Promise<void> {
    return within(this.#when(() => this.aborted >= n, this.#abortWaiters), `${n} aborted steps`);
  }

  /** Lets the oldest waiting step finish. */
  release(): void {
    this.#releases.shift()?.();
  }

  #when(done: () => boolean, waiters: Array<() => void>): Promise<void> {
    if (done()) return Promise.resolve();
    return new Promise((resolve) => {
      const check = () => done() ? resolve() : waiters.push(check);
      waiters.push(check);
    });
  }

  #wake(waiters: Array<() => void>): void {
    for (const w of waiters.splice(0)) w();
  }

  step(request: StepRequest): Promise<StepResult> {
    this.started++;
    this.#wake(this.#startWaiters);
    request.onText?.(this.#first);
    return new Promise((resolve, reject) => {
      const release = () => {
        request.signal.removeEventListener("abort", onAbort);
        request.onText?.(this.#first + this.#rest);
        resolve({ kind: "text", text: this.#first + this.#rest, usage: null });
      };
      const onAbort = () => {
        this.aborted++;
        if (this.#holdThroughAbort) return this.#wake(this.#abortWaiters);
        this.#releases = this.#releases.filter((r) => r !== release);
        this.#wake(this.#abortWaiters);
        reject(BridgeError.cancelled("The turn was cancelled."));
      };
      if (request.signal.aborted) return onAbort();
      request.signal.addEventListener("abort", onAbort, { once: true });
      this.#releases.push(release);
    });
  }
}

/** A model whose steps stream `first` and then fail with `error` (a backend that went away mid-answer). */
export class FailsMidwayModel implements LanguageModel {
  readonly kind = "fails-midway";
  readonly contextSize = 8192;
  readonly trimsHistory = false;
  readonly #first: string;
  readonly #error: BridgeError;

  constructor(first: string, error: BridgeError) {
    this.#first = first;
    this.#error = error;
  }

  availability(): Promise<ModelAvailability> {
    return Promise.resolve({ available: true, contextSize: 8192, supportedLanguages: [] });
  }

  step(request: StepRequest): Promise<StepResult> {
    request.onText?.(this.#first);
    return Promise.reject(this.#error);
  }
}

/** POSTs a JSON body (or raw text) to the chat completions endpoint. */
export function postChat(
  base: string,
  body: JsonValue | string,
  headers: Record<string, string> = {},
  signal?: AbortSignal,
): Promise<Response> {
  return fetch(`${base}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
    signal,
  });
}

/** Reads a server-sent event stream to its end; returns the `data:` payloads (`[DONE]` included). */
export async function sseData(response: Response): Promise<string[]> {
  const text = await response.text();
  if (!text.endsWith("\n\n")) throw new Error(`unterminated event stream: ${JSON.stringify(text)}`);
  return text.slice(0, -2).split("\n\n").map((event) => {
    if (!event.startsWith("data: ")) throw new Error(`not a data event: ${JSON.stringify(event)}`);
    return event.slice(6);
  });
}

/** One user message. */
export function ask(content: string): JsonValue[] {
  return [{ role: "user", content }];
}

/**
 * Sends one raw HTTP/1.1 request over TCP (fetch cannot set `Host`) and returns the status and the body of
 * the response (the server closes the connection: `Connection: close`).
 */
export async function rawHttp(
  port: number,
  head: string,
  body = "",
): Promise<{ status: number; headers: string; body: string }> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  const bytes = new TextEncoder().encode(body);
  await conn.write(
    new TextEncoder().encode(
      `${head}\r\nContent-Length: ${bytes.length}\r\nConnection: close\r\n\r\n${body}`,
    ),
  );
  const text = await new Response(conn.readable).text();
  const split = text.indexOf("\r\n\r\n");
  const headers = text.slice(0, split);
  return { status: Number(headers.split(" ")[1]), headers, body: text.slice(split + 4) };
}
