/**
 * BridgeEngine: the JSON-RPC engine. It classifies each incoming line, dispatches requests strictly in arrival
 * order (a handler's synchronous part finishes before the next message is looked at), runs deferred work
 * concurrently, and writes every outgoing message through one ordered `send`.
 * @module
 */
import {
  classifyMessage,
  copyMessage,
  decodeLine,
  encodeMessage,
  type Incoming,
  type RequestId,
} from "../protocol/codec.ts";
import { BridgeError, internalErrorReport, MESSAGES, toBridgeError } from "../protocol/errors.ts";
import type { JsonObject, JsonValue } from "../protocol/json.ts";
import { Params } from "../protocol/params.ts";
import type { LanguageModel } from "../models/language_model.ts";
import type { ModelSpec } from "../models/registry.ts";
import { type ClientRequest, ClientRequestTable } from "./client_requests.ts";
import { type BridgeConfiguration, type EngineParts, resolveConfiguration } from "./configuration.ts";
import {
  type BridgeExtension,
  type ExtensionHost,
  type HandlerResult,
  type MethodHandler,
  MethodRegistry,
  watchRegistrations,
} from "./extension.ts";
import { RequestContext } from "./context.ts";
import type { BridgeSettings } from "./settings.ts";
import { Pending, type PendingConsumer } from "../util/work_queue.ts";
import { settledWithin } from "../util/sleep.ts";
import { wakeAll } from "../util/waiters.ts";

/**
 * Grace period of `shutdown` for cancelled work and extensions (ms).
 *
 * @example
 * ```ts
 * import { SHUTDOWN_GRACE_MS } from "@open-apple-models/bridge/engine";
 * SHUTDOWN_GRACE_MS; // 2000
 * ```
 */
export const SHUTDOWN_GRACE_MS = 2000;

/** Where a dispatched request's outcome goes. */
interface Reply {
  /** `handedOver`: the handler made `result` for this response alone (`HandlerContext.handOver`). */
  result(id: RequestId | null, method: string, result: JsonValue, handedOver: boolean): void;
  error(id: RequestId | null, method: string, error: BridgeError): void;
}

/** Methods served even past `maxInFlightRequests`: they are cheap or free resources. */
const RELIEVES_LOAD = /^(ping|initialize|shutdown)$|\/(cancel|delete|list|unsubscribe)$/;

/** The notification methods of the built-ins and then of `extensions`, without repeats. */
function notificationMethodsOf(extensions: readonly BridgeExtension[]): string[] {
  const out = ["session/event", "tool/cancel"];
  for (const e of extensions) {
    for (const m of e.notificationMethods ?? []) if (!out.includes(m)) out.push(m);
  }
  return out;
}

/** How messages name a method set: its class, else its place. */
function extensionName(extension: BridgeExtension, builtin: boolean): string {
  const name = extension.constructor === Object ? "" : extension.constructor?.name ?? "";
  return `${builtin ? "The built-in method set" : "The extension"}${name ? ` ${name}` : ""}`;
}

/** How an internal error's log line names a host's method set. */
function hostExtension(extension: BridgeExtension): string {
  const name = extension.constructor === Object ? "" : extension.constructor?.name ?? "";
  return name
    ? `the host's extension ${name}, which registered this method`
    : "the host's extension that registered this method";
}

function lower(name: string): string {
  return name[0].toLowerCase() + name.slice(1);
}

/**
 * The engine's lifecycle phase ({@link EngineCore.phase}): `"running"` serves requests; `"shut_down"` after
 * {@link EngineCore.shutdown} (a `shutdown` request): every later request is answered `-32023 shut_down`;
 * `"closed"` after {@link EngineCore.close}: nothing more is sent.
 *
 * @example
 * ```ts
 * import { BridgeEngine, type EnginePhase } from "@open-apple-models/bridge/engine";
 * const engine = new BridgeEngine({}, () => {});
 * const phase: EnginePhase = engine.phase; // "running"
 * await engine.shutdown();
 * engine.phase; // "shut_down"
 * ```
 */
export type EnginePhase = "running" | "shut_down" | "closed";

/**
 * The engine core: framing, arrival-order dispatch, deferred work, the ordered writer, bridge→client requests
 * and the lifecycle. It knows no method set and no model backend: both come in {@link EngineParts}.
 * Hosts use `BridgeEngine` (the core composed with the standard methods and models); build an `EngineCore`
 * directly only to serve a method set of your own and nothing else.
 *
 * @example An engine that serves one method
 * ```ts
 * import { EngineCore } from "@open-apple-models/bridge/engine";
 * const lines: string[] = [];
 * const engine = new EngineCore({
 *   builtins: [{ register: (registry) => registry.register("quest/ping", () => ({ pong: true })) }],
 *   defaults: { systemModel: () => { throw new Error("no models here"); }, extensions: () => [] },
 *   models: { parse: () => ({ type: "system" }), create: () => { throw new Error("no models here"); } },
 * }, {}, (line) => lines.push(line));
 * engine.receive('{"jsonrpc":"2.0","id":1,"method":"quest/ping"}');
 * // lines[0] === '{"jsonrpc":"2.0","id":1,"result":{"pong":true}}'
 * ```
 */
export class EngineCore {
  /** The resolved configuration. */
  readonly configuration: BridgeConfiguration;
  /** Registered methods. */
  readonly registry: MethodRegistry = new MethodRegistry();
  readonly #models: EngineParts["models"];
  readonly #send: (line: string) => void;
  /** Where outgoing messages go as values once {@link EngineCore.connectInProcess} was called; else null. */
  #deliver: ((message: JsonObject) => void) | null = null;
  readonly #clientRequests = new ClientRequestTable();
  /** Requests whose deferred work has not answered yet. */
  #inFlight = 0;
  /** Of those, the ones that started before shutdown (what `shutdown` waits for). */
  #inFlightBeforeShutdown = 0;
  readonly #lifetime = new AbortController();
  /** `#lifetime.signal`, read once (the getter checks its receiver on every call). */
  readonly #lifetimeSignal: AbortSignal = this.#lifetime.signal;
  readonly #extensions: BridgeExtension[];
  #phase: EnginePhase = "running";
  #localIds = 0;
  readonly #idleWaiters: Array<() => void> = [];
  readonly #shutdownWaiters: Array<() => void> = [];
  #inputClosed: string | null = null;
  /**
   * The handlers registered while the engine was built: null for a method set of the project, else the
   * host's extension that registered it (what an internal error's log line blames). A handler missing here
   * was registered later, by the host.
   */
  readonly #culprits = new WeakMap<MethodHandler, string | null>();
  /** The method sets that are this project's own (`EngineParts.ownsMethodSet`). */
  readonly #ownSets = new Set<BridgeExtension>();

  /**
   * Creates an engine from its parts that writes each outgoing message (one JSON line, no newline) to `send`.
   * The built-in method sets register first, then the configuration's extensions (which may override them).
   */
  constructor(
    parts: EngineParts,
    config: Partial<BridgeConfiguration> = {},
    send: (line: string) => void = () => {},
  ) {
    this.configuration = resolveConfiguration(config, parts.defaults);
    this.#models = parts.models;
    this.#send = send;
    this.#extensions = [...parts.builtins, ...this.configuration.extensions];
    const host = this.#extensionHost();
    // Who registered each method: a method set that registers a name twice is a mistake (refused); one that
    // replaces an earlier set's method is an override (logged at info).
    const builtins = new Set(parts.builtins);
    const owners = new Map<string, string>();
    for (const extension of this.#extensions) {
      const name = extensionName(extension, builtins.has(extension));
      const own = new Set<string>();
      const ours = parts.ownsMethodSet?.(extension) === true;
      if (ours) this.#ownSets.add(extension);
      const culprit = ours ? null : hostExtension(extension);
      const watch = (method: string, replaces: boolean, handler: MethodHandler) => {
        this.#culprits.set(handler, culprit);
        if (own.has(method)) {
          throw new TypeError(
            `${name} registers the method '${method}' twice; its first handler would never run.`,
          );
        }
        own.add(method);
        if (replaces) {
          const before = owners.get(method);
          this.logger.info(`${name} replaces the method '${method}'${before ? ` of ${lower(before)}` : ""}.`);
        }
        owners.set(method, name);
      };
      watchRegistrations(this.registry, { watch, register: () => extension.register(this.registry, host) });
    }
  }

  /** The narrow view of the engine that extensions get when they register. */
  #extensionHost(): ExtensionHost {
    const config = this.configuration;
    return {
      settings: config,
      logger: config.logger,
      get notificationMethods() {
        return notificationMethodsOf(config.extensions);
      },
      systemModel: () => config.systemModel(),
      shutdown: () => this.shutdown(),
    };
  }

  /** Current lifecycle phase. */
  get phase(): EnginePhase {
    return this.#phase;
  }

  /** Aborted at shutdown or close; deferred work outside queues should observe it. */
  get lifetimeSignal(): AbortSignal {
    return this.#lifetimeSignal;
  }

  /** Notification methods the bridge may send (built-ins, then extensions'). */
  get notificationMethods(): string[] {
    return notificationMethodsOf(this.configuration.extensions);
  }

  /** The limits and switches of the configuration. */
  get settings(): Readonly<BridgeSettings> {
    return this.configuration;
  }

  /** Requests whose response has not been sent yet. */
  get inFlight(): number {
    return this.#inFlight;
  }

  /** Bridge→client requests waiting for a reply. */
  get pendingClientRequests(): number {
    return this.#clientRequests.size;
  }

  /** Where the engine logs (stderr; never stdout). */
  get logger(): BridgeConfiguration["logger"] {
    return this.configuration.logger;
  }

  /** Adds or replaces a method at runtime. */
  register(method: string, handler: MethodHandler): void {
    this.registry.register(method, handler);
  }

  /** Parses a `model` parameter (`"system"`, `"scripted"`, `{type, …}`). Throws -32602. */
  parseModel(value: JsonValue | undefined, path = "model"): ModelSpec {
    return this.#models.parse(value, { path, allowsScripted: this.configuration.allowsScriptedModels });
  }

  /** Creates a model for a parsed spec. Throws -32602 for unknown types. */
  createModel(spec: ModelSpec): LanguageModel {
    return this.#models.create(spec, this.configuration);
  }

  /**
   * True once messages go to an in-process client as values ({@link EngineCore.connectInProcess}): then a
   * handler may hand over a result or notification params it made fresh (`HandlerContext.handOver`).
   */
  get handsOver(): boolean {
    return this.#deliver !== null;
  }

  /** Handles one incoming line (no newline). Never throws. */
  receive(line: string): void {
    if (this.#phase === "closed") return;
    this.#handle(decodeLine(line));
  }

  /**
   * Connects a client in this process without JSON text in between (the typed client's in-process
   * transport does this): from then on each outgoing message goes to `deliver` as a value of its own, equal
   * to `JSON.parse` of its line and sharing nothing with the engine, instead of as a line to `send` (a
   * message whose JSON text is not a plain copy of it, see `copyMessage`, still goes to `send` as its
   * line, in order). Returns the entry for incoming messages as values: it behaves as `receive` of their
   * line, and the engine may keep what it is given, so pass a copy (`copyIncoming`; a message it cannot
   * copy goes to `receive` as its line) and never touch it again.
   *
   * Returns null and changes nothing when `send` is not the callback this engine writes to (the host wrapped
   * it, e.g. to log every line), when `receive` is overridden, or when it was already called: the engine
   * then stays on lines.
   *
   * @example
   * ```ts
   * import { BridgeEngine } from "@open-apple-models/bridge/engine";
   * const messages: object[] = [];
   * const send = (_line: string) => {};
   * const engine = new BridgeEngine({}, send);
   * const receive = engine.connectInProcess(send, (message) => messages.push(message));
   * receive?.({ jsonrpc: "2.0", id: 1, method: "ping" });
   * // messages[0]: { jsonrpc: "2.0", id: 1, result: {} }
   * ```
   */
  connectInProcess(
    send: (line: string) => void,
    deliver: (message: JsonObject) => void,
  ): ((message: JsonObject) => void) | null {
    if (send !== this.#send || this.#deliver !== null || this.receive !== EngineCore.prototype.receive) {
      return null;
    }
    this.#deliver = deliver;
    return (message) => {
      if (this.#phase !== "closed") this.#handle(classifyMessage(message));
    };
  }

  #handle(msg: Incoming): void {
    switch (msg.kind) {
      case "blank":
        return;
      case "invalid":
        this.#write({ jsonrpc: "2.0", id: msg.id, error: msg.error.toJson() });
        return;
      case "response":
        if (!this.#clientRequests.reply(msg.id, msg.message)) {
          this.logger.warning(`Ignoring a response to unknown or finished request '${msg.id}'.`);
        }
        return;
      case "notification":
        this.#dispatch(null, msg.method, msg.params, this.#notificationReply);
        return;
      case "request":
        this.#dispatch(msg.id, msg.method, msg.params, this.#wireReply);
    }
  }

  /** Notifications get no response; a `shutdown` notification still runs the host's hook when it is done. */
  readonly #notificationReply: Reply = {
    result: (_id, method) => {
      if (method === "shutdown" && this.#phase === "shut_down") this.configuration.onShutdown?.();
    },
    error: (_id, method, e) => this.logger.debug(`Notification '${method}' failed: ${e.message}`),
  };

  /** Writes responses of wire requests (one shared object: no closures per message on the hot path). */
  readonly #wireReply: Reply = {
    result: (id, method, result, handedOver) => {
      this.#write({ jsonrpc: "2.0", id, result }, method, handedOver);
      if (method === "shutdown" && this.#phase === "shut_down") this.configuration.onShutdown?.();
    },
    error: (id, _method, e) => this.#write({ jsonrpc: "2.0", id, error: e.toJson() }),
  };

  /**
   * Calls a method in-process and returns its result (or rejects with a BridgeError). Notifications and
   * `tool/call`s it causes carry `id` as `requestId`, or a private `local-<n>` id.
   */
  call(method: string, params: JsonObject = {}, id?: RequestId): Promise<JsonValue> {
    return new Promise<JsonValue>((resolve, reject) => {
      if (this.#phase === "closed") return reject(BridgeError.shutDown());
      this.#dispatch(id ?? null, method, params, {
        result: (_id, _method, result) => {
          resolve(result);
          if (method === "shutdown" && this.#phase === "shut_down") this.configuration.onShutdown?.();
        },
        error: (_id, _method, e) => reject(e),
      }, true);
    });
  }

  #dispatch(
    id: RequestId | null,
    method: string,
    rawParams: JsonValue | undefined,
    reply: Reply,
    direct = false,
  ): void {
    if (this.#phase !== "running") {
      reply.error(id, method, BridgeError.shutDown());
      return;
    }
    const handler = this.registry.lookup(method);
    if (!handler) {
      reply.error(id, method, BridgeError.of("method_not_found", `Unknown method '${method}'.`, { method }));
      return;
    }
    const limit = this.configuration.maxInFlightRequests;
    if (this.#inFlight >= limit && !RELIEVES_LOAD.test(method)) {
      reply.error(
        id,
        method,
        BridgeError.of(
          "busy",
          `Too many requests are waiting for their response (limit ${limit}); wait for some before sending more.`,
          { limit },
        ),
      );
      return;
    }
    const requestId = id ?? `local-${++this.#localIds}`;
    let result: HandlerResult;
    let ctx: RequestContext;
    try {
      const params = Params.from(rawParams);
      ctx = new RequestContext(this, {
        id: direct || id !== null ? id : null,
        requestId,
        method,
        params,
      });
      result = handler(ctx);
    } catch (error) {
      reply.error(id, method, this.#mapError(error, method));
      return;
    }
    if (!(result instanceof Promise) && !(result instanceof Pending)) {
      reply.result(id, method, result, ctx.takeHandedOver(result));
      return;
    }
    // Deferred: counted until answered. A handler that shut the bridge down (`shutdown`) is not waited for
    // by that shutdown.
    const early = this.#phase === "running";
    this.#inFlight++;
    if (early) this.#inFlightBeforeShutdown++;
    const answer = this.#answer(id, method, reply, early, ctx);
    // One consumer per deferred request (no Set of promises, no finally); a Pending answers synchronously.
    if (result instanceof Pending) result.consume(answer);
    else result.then((value) => answer(true, value), (error) => answer(false, error));
  }

  /** The consumer of a deferred request's outcome: writes the response, then counts the request done. */
  #answer(
    id: RequestId | null,
    method: string,
    reply: Reply,
    early: boolean,
    ctx: RequestContext,
  ): PendingConsumer<JsonValue> {
    return (ok, outcome) => {
      try {
        if (this.#phase === "closed") return;
        if (ok) reply.result(id, method, outcome as JsonValue, ctx.takeHandedOver(outcome));
        else reply.error(id, method, this.#mapError(outcome, method));
      } catch (error) {
        this.logger.error(`Answering '${method}' failed: ${String(error)}`);
      } finally {
        this.#settled(early);
      }
    };
  }

  #settled(early: boolean): void {
    if (early && --this.#inFlightBeforeShutdown === 0) wakeAll(this.#shutdownWaiters);
    if (--this.#inFlight === 0 && this.#idleWaiters.length > 0) wakeAll(this.#idleWaiters);
  }

  /** The BridgeError a handler's throw or rejection is answered with; an internal error is logged with its stack. */
  #mapError(error: unknown, method: string): BridgeError {
    const e = toBridgeError(error);
    const report = internalErrorReport(e, { where: method, hostCode: this.#hostCode(method) });
    if (report !== null) this.logger.error(report);
    return e;
  }

  /** The host's code that handles `method`, for an internal error's log line; undefined for the project's. */
  #hostCode(method: string): string | undefined {
    const handler = this.registry.get(method);
    if (handler === undefined) return undefined;
    const culprit = this.#culprits.get(handler);
    return culprit === undefined ? "the handler the host registered for this method" : culprit ?? undefined;
  }

  /** Resolves when no request is waiting for its response. */
  idle(): Promise<void> {
    if (this.#inFlight === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  /**
   * Sends a notification. `handedOver`: the caller made `params` for this notification alone and nothing
   * else holds them (see `HandlerContext.handOver`).
   */
  notify(method: string, params: JsonObject, handedOver = false): void {
    this.#write({ jsonrpc: "2.0", method, params }, undefined, handedOver);
  }

  /**
   * Sends a bridge→client request (e.g. `tool/call`) with a fresh `t-<n>` id. The reply resolves `outcome`.
   * Past `maxPendingClientRequests`, or after shutdown, the outcome is an immediate error.
   */
  requestClient(method: string, params: JsonObject): ClientRequest {
    if (this.#phase !== "running") {
      return this.#failedClientRequest(MESSAGES.shutDown);
    }
    if (this.#inputClosed !== null) return this.#failedClientRequest(this.#inputClosed);
    if (this.#clientRequests.size >= this.configuration.maxPendingClientRequests) {
      return this.#failedClientRequest(
        `Too many tool calls are waiting for the client (limit ${this.configuration.maxPendingClientRequests}).`,
      );
    }
    const request = this.#clientRequests.open();
    this.#write({ jsonrpc: "2.0", id: request.id, method, params });
    return request;
  }

  #failedClientRequest(message: string): ClientRequest {
    return { id: "t-0", outcome: Promise.resolve({ output: message, isError: true }), abandon: () => {} };
  }

  /**
   * Marks the client's input as closed: it can no longer answer `tool/call`, so every waiting and future
   * client request fails at once with `message` (the turns then finish with an error output).
   */
  markInputClosed(message = "The client closed its input before answering."): void {
    this.#inputClosed = message;
    this.#clientRequests.failAll(BridgeError.of("shut_down", message));
  }

  /** Sends an error response with id null for input the transport could not turn into a line. */
  reportInvalid(error: BridgeError): void {
    this.#write({ jsonrpc: "2.0", id: null, error: error.toJson() });
  }

  /**
   * Encodes and sends a message. For a response (`resultOf` = its method) whose result is not JSON, an
   * `internal_error` response is sent instead, so the request is still answered exactly once.
   */
  #write(message: JsonObject, resultOf?: string, handedOver = false): void {
    if (this.#phase === "closed") return;
    const kind = resultOf === undefined ? "" : typeof message.result;
    const notJson = kind === "undefined" || kind === "function" || kind === "symbol";
    if (this.#deliver !== null && !notJson) {
      // The message object is the engine's own, made for this message: with a handed-over result or params
      // (plain JSON made for this message alone, see HandlerContext.handOver), there is nothing to copy.
      if (handedOver) {
        this.#deliver(message);
        return;
      }
      const copy = copyMessage(message);
      if (copy !== null) {
        this.#deliver(copy);
        return;
      }
    }
    let line: string;
    try {
      if (notJson) throw new TypeError(kind);
      line = encodeMessage(message);
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      if (resultOf === undefined) {
        this.logger.error(`Could not encode a message: ${reason}`);
        return;
      }
      const e = BridgeError.internal(`The result of '${resultOf}' is not JSON: ${reason}.`);
      const culprit = this.#hostCode(resultOf);
      this.logger.error(
        `${e.message} (${
          culprit === undefined ? "a bug; please report it" : `a bug in ${culprit}; fix it there`
        })`,
      );
      line = encodeMessage({ jsonrpc: "2.0", id: message.id, error: e.toJson() });
    }
    this.#send(line);
  }

  /**
   * Shuts down: later requests fail with -32023; every session, turn and client request is cancelled; the
   * wait for cancelled work and extensions is bounded by {@link SHUTDOWN_GRACE_MS}.
   */
  async shutdown(): Promise<void> {
    if (this.#phase !== "running") return;
    this.#phase = "shut_down";
    // Cancel the extensions' work first (synchronously), then deferred work: running turns see their signal
    // abort while their client tool calls are still pending, so each pending tool/call gets its tool/cancel.
    const stops = this.#extensions.map((e) => {
      const failed = (error: unknown) => this.logger.error(`${this.#shutdownFailure(e)}: ${String(error)}`);
      try {
        return Promise.resolve(e.shutdown?.()).catch(failed);
      } catch (error) {
        failed(error);
        return Promise.resolve();
      }
    });
    this.#lifetime.abort(BridgeError.shutDown());
    this.#clientRequests.failAll(BridgeError.shutDown());
    const work = this.#inFlightBeforeShutdown === 0
      ? Promise.resolve()
      : new Promise<void>((resolve) => this.#shutdownWaiters.push(resolve));
    await settledWithin(Promise.allSettled([work, ...stops]), { ms: SHUTDOWN_GRACE_MS });
  }

  /** The start of a shutdown failure's log line: which method set failed, and whose bug it is. */
  #shutdownFailure(extension: BridgeExtension): string {
    const name = extension.constructor === Object ? "" : extension.constructor?.name ?? "";
    return this.#ownSets.has(extension)
      ? `The built-in method set${name ? ` ${name}` : ""} failed to shut down (a bug; please report it)`
      : `The host's extension${name ? ` ${name}` : ""} failed to shut down (a bug in it; fix it there)`;
  }

  /** Closes at once: cancels everything and never calls `send` again. */
  close(): void {
    if (this.#phase === "closed") return;
    this.#phase = "closed";
    this.#lifetime.abort(BridgeError.shutDown());
    this.#clientRequests.failAll(BridgeError.shutDown());
    for (const e of this.#extensions) {
      Promise.resolve().then(() => e.shutdown?.()).catch(() => {});
    }
  }
}
