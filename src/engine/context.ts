/**
 * What a method handler gets: the request's params and ids, its signal, the bridge's settings and logger,
 * and the few engine services a method needs — `notify`, `drive` (an agent run streamed as
 * `<namespace>/event` notifications, with client tools routed through `tool/call`) and model creation.
 * Handlers never see the engine itself.
 * @module
 */
import type { RequestId } from "../protocol/codec.ts";
import type { JsonObject, JsonValue } from "../protocol/json.ts";
import type { Params } from "../protocol/params.ts";
import type { AgentEvent, ToolCallInfo, ToolOutcome, TurnSink } from "../agent/types.ts";
import type { LanguageModel } from "../models/language_model.ts";
import type { ModelSpec } from "../models/registry.ts";
import type { Logger } from "../util/logger.ts";
import type { ClientRequest } from "./client_requests.ts";
import type { BridgeSettings } from "./settings.ts";

/** Reason given in `tool/cancel` for calls still pending when their turn ends. */
export const TURN_ENDED_REASON = "The turn ended before the tool finished.";

/**
 * Options of {@link HandlerContext.drive}.
 *
 * @example
 * ```ts
 * import type { DriveOptions } from "@open-apple-models/bridge/engine";
 * const quests: DriveOptions = { stream: true, context: { quest: "crypt" }, eventMethod: "quest/event" };
 * ```
 */
export interface DriveOptions {
  /** Send `eventMethod` notifications while the run goes on. */
  stream: boolean;
  /** Context fields put first in every notification and `tool/call` (e.g. `{session: "guard"}`). */
  context: JsonObject;
  /** Notification method for events, e.g. `session/event`. */
  eventMethod: string;
  /** Maps an agent event to the wire event (or null to drop it). Default: as is. */
  mapEvent?: (event: AgentEvent) => JsonObject | null;
}

/**
 * The request a handler serves and what it may use to serve it (the counterpart of the MCP SDK's
 * `RequestHandlerExtra`).
 *
 * @example
 * ```ts
 * import type { HandlerContext } from "@open-apple-models/bridge/engine";
 * function createQuest(ctx: HandlerContext) {
 *   const quest = ctx.params.string("quest");
 *   const model = ctx.createModel(ctx.parseModel(ctx.params.get("model")));
 *   ctx.notify("quest/created", { quest, model: model.kind });
 *   return { quest };
 * }
 * ```
 */
export interface HandlerContext {
  /** The client's id, or null for a notification. */
  readonly id: RequestId | null;
  /** The id used as `requestId` in notifications and `tool/call` (the id, or `local-<n>`). */
  readonly requestId: RequestId;
  /** Method name. */
  readonly method: string;
  /** Typed params. */
  readonly params: Params;
  /** Aborted when the bridge shuts down or closes. */
  readonly signal: AbortSignal;
  /** The bridge's limits and switches. */
  readonly settings: Readonly<BridgeSettings>;
  /** The bridge's logger (stderr). */
  readonly logger: Logger;
  /** Sends a notification. */
  notify(method: string, params: JsonObject): void;
  /**
   * True when the bridge gives its messages to a client in this process as values (the typed client's
   * in-process transport): a handler may then hand over what it made fresh ({@link HandlerContext.handOver}).
   */
  readonly handsOver: boolean;
  /**
   * Says that `value`, the result this handler returns or the params of the notification it sends next
   * (`notify(method, ctx.handOver(params))`), was made for that one message and is plain JSON: nothing in
   * it is held, or will be changed, by anything else, and it is what `JSON.parse` would make of its text
   * (no `undefined` members, only finite numbers and no -0, plain objects and arrays). Build it that way
   * while {@link HandlerContext.handsOver}: copy what you also keep, or did not make, with `copyJson`. A
   * client in this process then gets `value` itself instead of a copy. Returns `value`.
   */
  handOver<T extends JsonValue>(value: T): T;
  /** Parses a `model` parameter (`"system"`, `"scripted"`, `{type, …}`) at `path`. Throws -32602. */
  parseModel(value: JsonValue | undefined, path?: string): ModelSpec;
  /** Creates the backend of a parsed `model` parameter. Throws -32602 for unknown types. */
  createModel(spec: ModelSpec): LanguageModel;
  /**
   * Runs `run` with a turn sink that streams events as `eventMethod` notifications (when `stream`) and sends
   * client tool calls as `tool/call` requests with `{...context, requestId, call}`. Calls still pending when
   * the run ends get `tool/cancel`. When `run` returns its result directly (a scripted turn that needed no
   * waiting), so does `drive`.
   */
  drive<T>(run: (sink: TurnSink) => Promise<T>, options: DriveOptions): Promise<T>;
  /** {@link HandlerContext.drive} for a run that may finish synchronously. */
  drive<T>(run: (sink: TurnSink) => T | Promise<T>, options: DriveOptions): T | Promise<T>;
}

/** What a request context needs from its engine. */
export interface ContextHost {
  /** The engine's settings. */
  readonly settings: Readonly<BridgeSettings>;
  /** The engine's logger. */
  readonly logger: Logger;
  /** Aborted at shutdown or close. */
  readonly lifetimeSignal: AbortSignal;
  /** Sends a notification (`handedOver`: see {@link HandlerContext.handOver}). */
  notify(method: string, params: JsonObject, handedOver?: boolean): void;
  /** Sends a bridge→client request. */
  requestClient(method: string, params: JsonObject): ClientRequest;
  /** {@link HandlerContext.handsOver}. */
  readonly handsOver: boolean;
  /** Parses a `model` parameter. */
  parseModel(value: JsonValue | undefined, path?: string): ModelSpec;
  /** Creates a model. */
  createModel(spec: ModelSpec): LanguageModel;
}

/** The {@link HandlerContext} of one dispatched request (made by the engine). */
export class RequestContext implements HandlerContext {
  readonly id: RequestId | null;
  readonly requestId: RequestId;
  readonly method: string;
  readonly params: Params;
  readonly #host: ContextHost;
  #signal: AbortSignal | null = null;
  /** The value last given to {@link handOver}, until a response or notification carries it. */
  #handedOver: unknown = undefined;

  /** A context for one request served by `host`. */
  constructor(
    host: ContextHost,
    request: { id: RequestId | null; requestId: RequestId; method: string; params: Params },
  ) {
    this.#host = host;
    this.id = request.id;
    this.requestId = request.requestId;
    this.method = request.method;
    this.params = request.params;
  }

  /**
   * Each request has its own signal (made on first use and following the engine's): listeners added to one
   * shared signal by thousands of concurrent requests would make each new listener slower to add than the
   * last.
   */
  get signal(): AbortSignal {
    return this.#signal ??= AbortSignal.any([this.#host.lifetimeSignal]);
  }

  get settings(): Readonly<BridgeSettings> {
    return this.#host.settings;
  }

  get logger(): Logger {
    return this.#host.logger;
  }

  notify(method: string, params: JsonObject): void {
    this.#host.notify(method, params, this.takeHandedOver(params));
  }

  get handsOver(): boolean {
    return this.#host.handsOver;
  }

  handOver<T extends JsonValue>(value: T): T {
    this.#handedOver = value;
    return value;
  }

  /** True when `value` is what {@link handOver} was last given (which is then forgotten). */
  takeHandedOver(value: unknown): boolean {
    if (value !== this.#handedOver || value === undefined) return false;
    this.#handedOver = undefined;
    return true;
  }

  parseModel(value: JsonValue | undefined, path = "model"): ModelSpec {
    return this.#host.parseModel(value, path);
  }

  createModel(spec: ModelSpec): LanguageModel {
    return this.#host.createModel(spec);
  }

  drive<T>(run: (sink: TurnSink) => Promise<T>, options: DriveOptions): Promise<T>;
  drive<T>(run: (sink: TurnSink) => T | Promise<T>, options: DriveOptions): T | Promise<T>;
  drive<T>(run: (sink: TurnSink) => T | Promise<T>, options: DriveOptions): T | Promise<T> {
    const sink = new DriveSink(this.#host, this.requestId, options);
    let result: T | Promise<T>;
    try {
      result = run(sink);
    } catch (error) {
      sink.finish();
      throw error;
    }
    if (!(result instanceof Promise)) {
      sink.finish();
      return result;
    }
    return result.finally(() => sink.finish());
  }
}

/** The turn sink of one `drive` run (one object per run; the map of pending tool calls is made on demand). */
class DriveSink implements TurnSink {
  readonly quiet: boolean;
  readonly #host: ContextHost;
  readonly #requestId: RequestId;
  readonly #options: DriveOptions;
  #pending: Map<string, { callId: string; finish: () => void }> | null = null;

  constructor(host: ContextHost, requestId: RequestId, options: DriveOptions) {
    this.quiet = !options.stream;
    this.#host = host;
    this.#requestId = requestId;
    this.#options = options;
  }

  event(event: AgentEvent): void {
    const options = this.#options;
    if (!options.stream) return;
    const wire = options.mapEvent ? options.mapEvent(event) : event as unknown as JsonObject;
    if (wire) {
      this.#host.notify(options.eventMethod, {
        ...options.context,
        requestId: this.#requestId,
        event: wire,
      });
    }
  }

  callClientTool(call: ToolCallInfo, signal: AbortSignal): Promise<ToolOutcome> {
    const host = this.#host;
    const context = this.#options.context;
    const requestId = this.#requestId;
    const calls = this.#pending ??= new Map();
    const request = host.requestClient("tool/call", {
      ...context,
      requestId,
      call: call as unknown as JsonObject,
    });
    const cancel = (reason: string) => {
      if (!calls.delete(request.id)) return;
      request.abandon();
      host.notify("tool/cancel", { ...context, requestId, id: request.id, callId: call.id, reason });
    };
    calls.set(request.id, { callId: call.id, finish: () => cancel(TURN_ENDED_REASON) });
    const onAbort = () => cancel(typeof signal.reason === "string" ? signal.reason : TURN_ENDED_REASON);
    signal.addEventListener("abort", onAbort, { once: true });
    return request.outcome.finally(() => {
      signal.removeEventListener("abort", onAbort);
      calls.delete(request.id);
    });
  }

  /** Sends `tool/cancel` for calls still pending when the run ends (in call id order). */
  finish(): void {
    const pending = this.#pending;
    if (pending === null || pending.size === 0) return;
    const left = [...pending.values()].sort((a, b) => a.callId < b.callId ? -1 : a.callId > b.callId ? 1 : 0);
    for (const p of left) p.finish();
  }
}
