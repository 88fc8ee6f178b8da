/**
 * The JSON-RPC peer: request ids and the table of pending requests, routing of responses, of the bridge's
 * requests (`tool/call`) to handlers and of notifications (to the request that caused them, by
 * `params.requestId`, and to listeners), and what closing means for each of them. One implementation for
 * every transport; it knows no method of the protocol.
 * @module
 */
import { BridgeError } from "../protocol/errors.ts";
import { isJsonObject, type JsonObject, type JsonValue } from "../protocol/json.ts";
import { shown } from "./checks.ts";
import { classify, type JsonRpcErrorObject, type JsonRpcMessage, type RequestId } from "./messages.ts";
import { type ConnectionEnd, SENT, type Transport, type TransportClose } from "./transport.ts";

/**
 * Per-request options of {@link Peer.request}.
 *
 * @example
 * ```ts
 * import { Bridge } from "@open-apple-models/bridge";
 * await using bridge = await Bridge.open();
 * const slow = await bridge.createSession({ model: { type: "scripted", steps: [{ text: "Zzz.", delayMs: 60_000 }] } });
 * const controller = new AbortController();
 * const turn = bridge.request("session/respond", { session: slow.id, prompt: "Wake up." }, {
 *   signal: controller.signal,
 *   onAbort: () => bridge.notify("session/cancel", { session: slow.id }), // then wait for the -32009 answer
 * });
 * controller.abort();
 * await turn.catch((error) => error.dataCode); // "cancelled"
 * ```
 */
export interface RequestOptions {
  /** Aborts the request (see {@link RequestOptions.onAbort}). */
  signal?: AbortSignal;
  /** Gives up after this many milliseconds (see {@link RequestOptions.onAbort}). No timeout by default. */
  timeoutMs?: number;
  /**
   * Called when `signal` aborts or `timeoutMs` passes. With it, the request keeps waiting for its response
   * (the hook asks the bridge to cancel the work, which then answers `-32009`); a timeout then rejects with
   * `-32024 timeout`. A bridge that has not answered 5 s later (a stopped process) is waited for no more: the
   * request rejects with `-32009` (or `-32024`) saying so, and a late answer is ignored. Without it, the
   * request rejects at once and its late response is ignored: the bridge is not asked to stop the work (a
   * `decision/decide` or `content/generate` goes on, and so does its model call). Either way, a spawned bridge
   * does not keep the program alive for a request given up on (see {@link Transport.abandoned}).
   */
  onAbort?: (reason: BridgeError) => void;
  /**
   * Receives every notification whose `params.requestId` is this request's id, in order, before it settles.
   * Once it throws it gets no more, and the request rejects with its error when the response arrives.
   */
  onNotification?: (method: string, params: JsonObject) => void;
  /**
   * Answers the bridge's requests (`tool/call`) whose `params.requestId` is this request's id, instead of
   * the handler set with {@link Peer.setRequestHandler} for their method.
   */
  onRequest?: RequestHandler;
  /** Called with the result when the response arrives, before any later message is handled. */
  onResult?: (result: JsonValue) => void;
}

/**
 * What a handler of an incoming request gets besides its params.
 *
 * @example
 * ```ts
 * import { InProcessTransport, Peer } from "@open-apple-models/bridge";
 * const peer = new Peer(new InProcessTransport());
 * const abandoned: Array<string | number> = [];
 * peer.setRequestHandler("tool/call", (params, request) => {
 *   request.signal.addEventListener("abort", () => abandoned.push(request.id)); // tool/cancel arrived
 *   return { output: `handled ${request.method}` };
 * });
 * ```
 */
export interface IncomingRequest {
  /** The request's id (e.g. `"t-1"`). */
  id: RequestId;
  /** Its method. */
  method: string;
  /** Aborted by {@link Peer.cancelIncoming} or when the peer closes; the reply is then not sent. */
  signal: AbortSignal;
}

/**
 * Answers an incoming request: the value is the `result`; a throw becomes an error response.
 *
 * @example
 * ```ts
 * import { InProcessTransport, Peer, type RequestHandler } from "@open-apple-models/bridge";
 * const answer: RequestHandler = (params) => ({ output: `You asked for ${JSON.stringify(params.call)}.` });
 * const peer = new Peer(new InProcessTransport());
 * const abandoned: Array<string | number> = [];
 * peer.setRequestHandler("tool/call", answer);
 * ```
 */
export type RequestHandler = (params: JsonObject, request: IncomingRequest) => JsonValue | Promise<JsonValue>;

/**
 * Receives a notification's params (and its method, for `"*"` listeners).
 *
 * @example
 * ```ts
 * import { InProcessTransport, type NotificationHandler, Peer } from "@open-apple-models/bridge";
 * const seen: string[] = [];
 * const log: NotificationHandler = (_params, method) => seen.push(method);
 * const peer = new Peer(new InProcessTransport());
 * const stop = peer.onNotification("*", log);
 * stop();
 * ```
 */
export type NotificationHandler = (params: JsonObject, method: string) => void;

/**
 * Options of a {@link Peer}.
 *
 * @example
 * ```ts
 * import { InProcessTransport, Peer, type PeerOptions } from "@open-apple-models/bridge";
 * const options: PeerOptions = { onError: (error) => console.error(`bridge client: ${error.message}`) };
 * const peer = new Peer(new InProcessTransport(), options);
 * peer.closed; // false
 * ```
 */
export interface PeerOptions {
  /**
   * Receives errors thrown by listeners and messages that are not JSON-RPC (default: `reportError`). An
   * error it throws itself is passed to `reportError` (an uncaught error in Deno), not to the call at hand.
   */
  onError?: (error: Error) => void;
  /** Sees every successful result (with its request's method) as it arrives, before the request resolves. */
  onResult?: (method: string, result: JsonValue) => void;
}

interface Pending {
  method: string;
  resolve(value: JsonValue): void;
  reject(error: Error): void;
  options: RequestOptions;
  /** Set once a timeout fired (the request then rejects with it). */
  timedOut: BridgeError | null;
  /** The first error a per-request callback threw (the request rejects with it). */
  callbackError: unknown;
  /** The timeout's timer, if any. */
  timer: ReturnType<typeof setTimeout> | undefined;
  /** After `onAbort` asked the bridge to cancel: the timer that stops waiting for its answer. */
  grace: ReturnType<typeof setTimeout> | undefined;
  /** The listener on `options.signal`, if any. */
  onAbort: (() => void) | undefined;
}

/** The default `onError`: `reportError` (a Deno program without an "error" listener then ends). */
export function report(error: Error): void {
  if (typeof globalThis.reportError === "function") globalThis.reportError(error);
  else throw error;
}

/**
 * `onError` made safe to call anywhere: an error it throws itself goes to {@link report} (an uncaught error,
 * as with no `onError` at all), once, and never into the call or message being handled when it ran.
 */
export function guardOnError(onError: ((error: Error) => void) | undefined): (error: Error) => void {
  if (onError === undefined) return report;
  return (error) => {
    try {
      onError(error);
    } catch (thrown) {
      report(toError(thrown));
    }
  };
}

/** `value` when it is an Error, else an Error with its text. */
export function toError(value: unknown): Error {
  return value instanceof Error ? value : new Error(String(value));
}

/**
 * True for a transport's refusal to send one message, which leaves the connection as it was: a TypeError of
 * its encoding (a BigInt, a cycle, a lone surrogate) or `-32600 invalid_message` (longer than the bridge
 * reads).
 */
function isRefusal(error: unknown): error is Error {
  return error instanceof TypeError || (error instanceof BridgeError && error.dataCode === "invalid_message");
}

/**
 * True for a transport's `-32023 shut_down`: the connection is gone (a process that no longer reads, a socket
 * closing), which the transport's close reports. An answer to the bridge that could not be sent then is no
 * error of its own: the bridge that asked is gone.
 */
function isConnectionGone(error: unknown): boolean {
  return error instanceof BridgeError && error.dataCode === "shut_down";
}

/** The BridgeError of an error response. */
export function errorFromResponse(error: JsonRpcErrorObject): BridgeError {
  return BridgeError.fromJson(error);
}

/**
 * How long a request whose `onAbort` asked the bridge to cancel it waits for the bridge's answer before it
 * rejects anyway (the same wait as `Bridge.close()` gives `shutdown`).
 */
const CANCEL_GRACE_MS = 5000;

/** Longest timeout `setTimeout` keeps (a longer one would fire at once). */
const MAX_TIMEOUT_MS = 2 ** 31 - 1;

/**
 * What is wrong with a request's `signal` or `timeoutMs`, or null. Checked before sending: a value that is
 * not an AbortSignal would fail inside the request and leave it pending.
 */
function optionsProblem(options: RequestOptions): string | null {
  const { signal, timeoutMs } = options;
  if (
    signal !== undefined && signal !== null &&
    (typeof signal.addEventListener !== "function" || typeof signal.aborted !== "boolean")
  ) {
    return `'signal' must be an AbortSignal (e.g. new AbortController().signal); got ${shown(signal)}.`;
  }
  if (
    timeoutMs !== undefined &&
    (typeof timeoutMs !== "number" || !(timeoutMs >= 0 && timeoutMs <= MAX_TIMEOUT_MS))
  ) {
    return `'timeoutMs' must be a number of milliseconds from 0 to ${MAX_TIMEOUT_MS}; got ${
      shown(timeoutMs)
    }.`;
  }
  return null;
}

/** Why the transport closed, from whether this side asked and what the transport reported. */
function connectionEnd(requested: boolean, error?: Error, close?: TransportClose): ConnectionEnd {
  const by = requested ? "client" : close?.network ? "network" : "server";
  const end: ConnectionEnd = { by };
  if (close) {
    end.code = close.code;
    end.reason = close.reason;
  }
  if (error && by !== "client") end.error = error;
  return end;
}

/**
 * A JSON-RPC peer over a {@link Transport}.
 *
 * @example
 * ```ts
 * import { InProcessTransport, Peer } from "@open-apple-models/bridge";
 * const peer = new Peer(new InProcessTransport());
 * await peer.start();
 * await peer.request("ping"); // {}
 * await peer.close();
 * ```
 */
export class Peer {
  /** Called once when the transport has closed (with its reason, when it ended on its own). */
  onclose?: (reason?: Error) => void;
  readonly #transport: Transport;
  readonly #pending = new Map<RequestId, Pending>();
  readonly #handlers = new Map<string, RequestHandler>();
  readonly #listeners = new Map<string, NotificationHandler[]>();
  readonly #incoming = new Map<RequestId, AbortController>();
  readonly #onError: (error: Error) => void;
  readonly #onResult: ((method: string, result: JsonValue) => void) | undefined;
  #next = 0;
  #started = false;
  #closed = false;
  #closeReason: Error | undefined;
  /** True once `close()` was called: the end is this side's. */
  #closeRequested = false;
  /** A `shutdown` request was sent: the bridge that then closed the connection was asked to by this side. */
  #shutdownSent = false;
  #end: ConnectionEnd | null = null;
  readonly #closedSignal: Promise<void>;
  #markClosed!: () => void;

  /** A peer over `transport` (not started yet). */
  constructor(transport: Transport, options: PeerOptions = {}) {
    this.#transport = transport;
    this.#onError = guardOnError(options.onError);
    this.#onResult = options.onResult;
    this.#closedSignal = new Promise((resolve) => this.#markClosed = resolve);
  }

  /** True once the transport has closed. */
  get closed(): boolean {
    return this.#closed;
  }

  /** Requests still waiting for their response. */
  get pendingRequests(): number {
    return this.#pending.size;
  }

  /** Resolves when the transport has closed ({@link closeInfo} then says why). */
  get done(): Promise<void> {
    return this.#closedSignal;
  }

  /** Why the transport closed (see {@link ConnectionEnd}), once it has; null before. */
  get closeInfo(): ConnectionEnd | null {
    return this.#end;
  }

  /** Connects the transport's callbacks and starts it. */
  async start(): Promise<void> {
    if (this.#started) throw new Error("The peer was already started.");
    this.#started = true;
    const t = this.#transport;
    t.onmessage = (message) => this.#receive(message);
    t.onclose = (reason, close) => this.#handleClose(reason, close);
    t.onerror = (error) => this.#onError(error);
    await t.start();
  }

  /**
   * Sends a request and resolves with its result; an error response rejects with a {@link BridgeError}
   * rebuilt from `code` / `data.code` / `data`. When the transport closes first, rejects with `-32023
   * shut_down` naming the method.
   */
  request(method: string, params?: object, options: RequestOptions = {}): Promise<JsonValue> {
    if (this.#closed || !this.#started) return Promise.reject(this.#notSent(method));
    const problem = optionsProblem(options);
    if (problem !== null) return Promise.reject(new TypeError(`'${method}' was not sent: ${problem}`));
    const signal = options.signal;
    if (signal?.aborted) {
      return Promise.reject(
        BridgeError.cancelled(`'${method}' was not sent: its signal was already aborted.`),
      );
    }
    const id = ++this.#next;
    if (method === "shutdown") this.#shutdownSent = true;
    return new Promise<JsonValue>((resolve, reject) => {
      const pending: Pending = {
        method,
        resolve,
        reject,
        options,
        timedOut: null,
        callbackError: undefined,
        timer: undefined,
        grace: undefined,
        onAbort: undefined,
      };
      this.#pending.set(id, pending);
      if (signal) {
        pending.onAbort = () => {
          const e = BridgeError.cancelled(`'${method}' was aborted.`);
          e.cause = signal.reason; // why the game gave up on it (abort(reason), a TimeoutError)
          this.#abort(id, pending, e);
        };
        signal.addEventListener("abort", pending.onAbort, { once: true });
      }
      if (options.timeoutMs !== undefined) {
        const ms = options.timeoutMs;
        pending.timer = setTimeout(() => {
          pending.timer = undefined;
          // With a hook the bridge is asked to stop the work; without one nothing tells it, and the work
          // goes on there (a decision or a generation still holds the model).
          const e = BridgeError.of(
            "timeout",
            options.onAbort
              ? `'${method}' did not finish within ${ms} ms; it was cancelled.`
              : `'${method}' did not finish within ${ms} ms; its response will be ignored (the bridge was not asked to stop it).`,
          );
          pending.timedOut = e;
          this.#abort(id, pending, e);
        }, ms);
      }
      const message = params === undefined
        ? { jsonrpc: "2.0" as const, id, method }
        : { jsonrpc: "2.0" as const, id, method, params };
      const sent = this.#transport.send(message);
      if (sent === SENT) return;
      sent.catch((error) => {
        if (this.#pending.get(id) !== pending) return;
        this.#settle(id, pending);
        // A TypeError is the encoding's (params that are not JSON) and -32600 the transport's refusal of a
        // message longer than the bridge reads; anything else is the connection's.
        if (isRefusal(error) && !this.#closed) reject(error);
        else reject(this.#closed ? this.#closedError(method) : this.#sendError(method, error));
      });
    });
  }

  /** Sends a notification (no response). */
  async notify(method: string, params?: object): Promise<void> {
    if (this.#closed || !this.#started) throw this.#notSent(method);
    try {
      await this.#transport.send(
        params === undefined ? { jsonrpc: "2.0", method } : { jsonrpc: "2.0", method, params },
      );
    } catch (error) {
      if (isRefusal(error) && !this.#closed) throw error;
      throw this.#closed ? this.#closedError(method) : this.#sendError(method, error);
    }
  }

  /** Answers incoming requests of `method` with `handler` (replacing an earlier one). */
  setRequestHandler(method: string, handler: RequestHandler): void {
    this.#handlers.set(method, handler);
  }

  /**
   * Calls `handler` for every notification `method` (`"*"`: every notification). Returns a function that
   * removes it.
   */
  onNotification(method: string, handler: NotificationHandler): () => void {
    const list = this.#listeners.get(method) ?? [];
    list.push(handler);
    this.#listeners.set(method, list);
    return () => {
      const current = this.#listeners.get(method);
      const i = current?.indexOf(handler) ?? -1;
      if (current && i >= 0) current.splice(i, 1);
    };
  }

  /** Aborts the handler of incoming request `id` (its reply will not be sent). False when none runs. */
  cancelIncoming(id: RequestId, reason?: string): boolean {
    const controller = this.#incoming.get(id);
    if (!controller) return false;
    this.#incoming.delete(id);
    controller.abort(BridgeError.cancelled(reason ?? "The bridge no longer needs this result."));
    return true;
  }

  /** Closes the transport; pending requests reject with `-32023 shut_down`. */
  async close(): Promise<void> {
    this.#closeRequested = true;
    if (!this.#started) {
      this.#started = true;
      this.#handleClose();
      return;
    }
    // Also when the transport ended on its own: closing it again releases what it still holds.
    await this.#transport.close();
    this.#handleClose(); // a no-op when the transport reported its close (as it should)
    await this.#closedSignal;
  }

  #sendError(method: string, error: unknown): BridgeError {
    const e = BridgeError.of(
      "shut_down",
      `Could not send '${method}' to the bridge: ${toError(error).message}`,
    );
    e.cause = error;
    return e;
  }

  /**
   * `-32023` for a message sent before start or after the close, saying who closed it: a script that uses an
   * NPC after the `await using` block (or function) that opened its bridge ended is told so.
   */
  #notSent(method: string): BridgeError {
    if (!this.#started) {
      return BridgeError.of("shut_down", `The bridge is not started; '${method}' was not sent.`);
    }
    const end = this.#end;
    const why = end?.by === "client" || this.#shutdownSent
      ? " This program closed it (close(), or the end of the block or function that opened it with 'await " +
        "using'): its NPCs, sessions and worlds went with it. Keep it open while you use them, or save them " +
        "(npc.state(), world.snapshot()) and restore them in a new bridge."
      : end?.error
      ? ` It stopped: ${end.error.message}`
      : "";
    return BridgeError.of("shut_down", `The bridge is closed; '${method}' was not sent.${why}`);
  }

  #closedError(method: string): BridgeError {
    const reason = this.#closeReason;
    const e = BridgeError.of(
      "shut_down",
      reason
        ? `The bridge stopped before answering '${method}': ${reason.message}`
        : `The bridge was closed before answering '${method}'.`,
    );
    if (reason) e.cause = reason;
    return e;
  }

  /** The reason a handler's `signal` gets when the connection ends while it runs: why it ended, when known. */
  #closedForHandler(): BridgeError {
    const reason = this.#closeReason;
    if (!reason) return BridgeError.of("shut_down", "The bridge was closed.");
    const e = BridgeError.of(
      "shut_down",
      `The bridge stopped before the tool call was answered: ${reason.message}`,
    );
    e.cause = reason;
    return e;
  }

  #settle(id: RequestId, pending: Pending): void {
    this.#pending.delete(id);
    if (pending.timer !== undefined) clearTimeout(pending.timer);
    if (pending.grace !== undefined) clearTimeout(pending.grace);
    if (pending.onAbort) pending.options.signal?.removeEventListener("abort", pending.onAbort);
  }

  #abort(id: RequestId, pending: Pending, reason: BridgeError): void {
    if (this.#pending.get(id) !== pending) return;
    const hook = pending.options.onAbort;
    if (hook) {
      try {
        hook(reason);
      } catch (error) {
        this.#onError(toError(error));
      }
      // The bridge answers a cancel at once; one that does not (a stopped or wedged process) must not keep
      // the request pending for ever.
      pending.grace ??= setTimeout(() => {
        pending.grace = undefined;
        if (this.#pending.get(id) !== pending) return;
        this.#giveUp(id, pending);
        const what = reason.dataCode === "timeout"
          ? `did not finish within ${pending.options.timeoutMs} ms`
          : "was aborted";
        const e = new BridgeError(
          reason.code,
          reason.dataCode,
          `'${pending.method}' ${what}, and the bridge did not answer within ${CANCEL_GRACE_MS} ms after it ` +
            "was asked to cancel it (is its process stopped or stuck?); its answer, if one comes, is ignored.",
        );
        e.cause = reason.cause;
        pending.reject(e);
      }, CANCEL_GRACE_MS);
      return;
    }
    this.#giveUp(id, pending);
    pending.reject(reason);
  }

  /** Settles a request whose response will not be waited for, and tells the transport so. */
  #giveUp(id: RequestId, pending: Pending): void {
    this.#settle(id, pending);
    this.#transport.abandoned?.(id);
  }

  #receive(raw: JsonValue): void {
    // The common messages first, read in place (what `classify` makes of them, without making it).
    if (isJsonObject(raw) && raw.jsonrpc === "2.0") {
      const { id, method } = raw;
      if (typeof method === "string") {
        if (id === undefined) {
          this.#notification(method, isJsonObject(raw.params) ? raw.params : {});
          return;
        }
      } else if (
        method === undefined && (typeof id === "number" || typeof id === "string") &&
        !Object.hasOwn(raw, "error") && Object.hasOwn(raw, "result")
      ) {
        const pending = this.#pending.get(id);
        if (pending) this.#resolve(id, pending, raw.result as JsonValue);
        return;
      }
    }
    const message = classify(raw);
    switch (message.kind) {
      case "result":
      case "error": {
        const pending = message.id === null ? undefined : this.#pending.get(message.id);
        if (!pending || message.id === null) {
          if (message.kind === "error" && message.id === null) {
            this.#onError(errorFromResponse(message.error));
          }
          return;
        }
        if (message.kind === "error") {
          this.#settle(message.id, pending);
          const error = errorFromResponse(message.error);
          if (pending.timedOut) {
            pending.timedOut.cause = error;
            pending.reject(pending.timedOut);
          } else {
            // The bridge's -32009 for a call this client cancelled: the signal's reason says why.
            const signal = pending.options.signal;
            if (signal?.aborted && error.dataCode === "cancelled") error.cause ??= signal.reason;
            pending.reject(error);
          }
          return;
        }
        this.#resolve(message.id, pending, message.result);
        return;
      }
      case "notification":
        this.#notification(message.method, message.params);
        return;
      case "request":
        this.#incomingRequest(message.id, message.method, message.params);
        return;
      case "invalid":
        this.#onError(new Error(`Ignoring a message from the bridge: ${message.reason}.`));
    }
  }

  /** A result for the pending request `id`: its hooks see it, then the request resolves. */
  #resolve(id: RequestId, pending: Pending, result: JsonValue): void {
    this.#settle(id, pending);
    const onResult = pending.options.onResult;
    if (onResult) {
      try {
        onResult(result);
      } catch (error) {
        pending.callbackError ??= error;
      }
    }
    if (this.#onResult) {
      try {
        this.#onResult(pending.method, result);
      } catch (error) {
        pending.callbackError ??= error;
      }
    }
    if (pending.callbackError !== undefined) pending.reject(toError(pending.callbackError));
    else pending.resolve(result);
  }

  #notification(method: string, params: JsonObject): void {
    const requestId = params.requestId;
    if (typeof requestId === "number" || typeof requestId === "string") {
      const pending = this.#pending.get(requestId);
      const hook = pending?.options.onNotification;
      // A hook that threw gets no more: the request rejects with its error once it settles.
      if (pending && hook && pending.callbackError === undefined) {
        try {
          hook(method, params);
        } catch (error) {
          pending.callbackError ??= error;
        }
      }
    }
    this.#notifyListeners(this.#listeners.get(method), method, params);
    this.#notifyListeners(this.#listeners.get("*"), method, params);
  }

  #notifyListeners(list: NotificationHandler[] | undefined, method: string, params: JsonObject): void {
    if (list === undefined || list.length === 0) return;
    for (const handler of list.length === 1 ? list : [...list]) {
      try {
        handler(params, method);
      } catch (error) {
        this.#onError(toError(error));
      }
    }
  }

  #incomingRequest(id: RequestId, method: string, params: JsonObject): void {
    const requestId = params.requestId;
    const cause = typeof requestId === "number" || typeof requestId === "string"
      ? this.#pending.get(requestId)
      : undefined;
    const handler = cause?.options.onRequest ?? this.#handlers.get(method);
    if (!handler) {
      this.#replyError(id, { code: -32601, message: `This client does not handle '${method}'.` });
      return;
    }
    const controller = new AbortController();
    this.#incoming.set(id, controller);
    const signal = controller.signal;
    let outcome: JsonValue | Promise<JsonValue>;
    try {
      outcome = handler(params, { id, method, signal });
    } catch (error) {
      outcome = Promise.reject(error);
    }
    Promise.resolve(outcome).then(
      (result) => {
        if (!signal.aborted) this.#reply(id, result);
      },
      (error) => {
        if (signal.aborted) return;
        const e = error instanceof BridgeError
          ? error
          : BridgeError.internal(toError(error).message || "The client's handler failed.");
        this.#replyError(id, e);
      },
    ).finally(() => {
      if (this.#incoming.get(id) === controller) this.#incoming.delete(id);
    });
  }

  /**
   * Sends a handler's result. A result the transport refuses (see `isRefusal`: a BigInt, a cycle, a lone
   * surrogate, too long) is answered with `-32603` instead, so the bridge's request does not wait for its
   * timeout.
   */
  #reply(id: RequestId, result: JsonValue): void {
    if (this.#closed) return;
    const sent = this.#transport.send({ jsonrpc: "2.0", id, result });
    if (sent === SENT) return;
    sent.catch((error) => {
      if (this.#closed || isConnectionGone(error)) return;
      if (!isRefusal(error)) {
        this.#onError(toError(error));
        return;
      }
      this.#replyError(id, BridgeError.internal(`The client's result could not be sent: ${error.message}`));
    });
  }

  #replyError(id: RequestId, error: JsonRpcErrorObject | BridgeError): void {
    this.#send({
      jsonrpc: "2.0",
      id,
      error: error instanceof BridgeError ? error.toJson() as unknown as JsonRpcErrorObject : error,
    });
  }

  #send(message: JsonRpcMessage): void {
    if (this.#closed) return;
    const sent = this.#transport.send(message);
    if (sent === SENT) return;
    sent.catch((error) => {
      if (!this.#closed && !isConnectionGone(error)) this.#onError(toError(error));
    });
  }

  #handleClose(reason?: Error, close?: TransportClose): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#closeReason = reason;
    this.#end = connectionEnd(this.#closeRequested, reason, close);
    for (const [id, pending] of [...this.#pending]) {
      this.#settle(id, pending);
      pending.reject(this.#closedError(pending.method));
    }
    for (const controller of this.#incoming.values()) controller.abort(this.#closedForHandler());
    this.#incoming.clear();
    this.#markClosed();
    try {
      this.onclose?.(reason);
    } catch (error) {
      this.#onError(toError(error));
    }
  }
}
