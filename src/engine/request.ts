/**
 * One request being handled: its id, params, the engine, and `drive`, which streams an agent run as
 * `<namespace>/event` notifications and routes client tools through `tool/call`.
 * @module
 */
import type { RequestId } from "../protocol/codec.ts";
import type { JsonObject } from "../protocol/json.ts";
import type { Params } from "../protocol/params.ts";
import type { AgentEvent, ToolCallInfo, ToolOutcome, TurnSink } from "../agent/types.ts";
import type { EngineCore } from "./engine.ts";

/** Reason given in `tool/cancel` for calls still pending when their turn ends. */
export const TURN_ENDED_REASON = "The turn ended before the tool finished.";

/** Options of {@link BridgeRequest.drive}. */
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
 * A request as seen by a handler.
 *
 * @example
 * ```ts
 * import type { BridgeRequest } from "./request.ts";
 * function handler(request: BridgeRequest) {
 *   const id = request.params.string("quest");
 *   return { quest: id };
 * }
 * ```
 */
export class BridgeRequest {
  /** The client's id, or null for a notification. */
  readonly id: RequestId | null;
  /** The id used as `requestId` in notifications and `tool/call` (the id, or `local-<n>`). */
  readonly requestId: RequestId;
  /** Method name. */
  readonly method: string;
  /** Typed params. */
  readonly params: Params;
  /** The engine serving the request. */
  readonly engine: EngineCore;
  readonly #lifetime: AbortSignal;
  #signal: AbortSignal | null = null;

  /** @internal */
  constructor(
    id: RequestId | null,
    requestId: RequestId,
    method: string,
    params: Params,
    engine: EngineCore,
    signal: AbortSignal,
  ) {
    this.id = id;
    this.requestId = requestId;
    this.method = method;
    this.params = params;
    this.engine = engine;
    this.#lifetime = signal;
  }

  /**
   * Aborted when the bridge shuts down or closes. Each request has its own signal (made on first use and
   * following the engine's): listeners added to one shared signal by thousands of concurrent requests would
   * make each new listener slower to add than the last.
   */
  get signal(): AbortSignal {
    return this.#signal ??= AbortSignal.any([this.#lifetime]);
  }

  /**
   * Runs `run` with a turn sink that streams events as `eventMethod` notifications (when `stream`) and sends
   * client tool calls as `tool/call` requests with `{...context, requestId, call}`. Calls still pending when
   * the run ends get `tool/cancel`. When `run` returns its result directly (a turn that needed no waiting,
   * see `Agent.runTurnNow`), so does `drive`.
   */
  drive<T>(run: (sink: TurnSink) => Promise<T>, options: DriveOptions): Promise<T>;
  /** {@link BridgeRequest.drive} for a run that may finish synchronously. */
  drive<T>(run: (sink: TurnSink) => T | Promise<T>, options: DriveOptions): T | Promise<T>;
  drive<T>(run: (sink: TurnSink) => T | Promise<T>, options: DriveOptions): T | Promise<T> {
    const sink = new DriveSink(this.engine, this.requestId, options);
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
  readonly #engine: EngineCore;
  readonly #requestId: RequestId;
  readonly #options: DriveOptions;
  #pending: Map<string, { callId: string; finish: () => void }> | null = null;

  constructor(engine: EngineCore, requestId: RequestId, options: DriveOptions) {
    this.quiet = !options.stream;
    this.#engine = engine;
    this.#requestId = requestId;
    this.#options = options;
  }

  event(event: AgentEvent): void {
    const options = this.#options;
    if (!options.stream) return;
    const wire = options.mapEvent ? options.mapEvent(event) : event as unknown as JsonObject;
    if (wire) {
      this.#engine.notify(options.eventMethod, {
        ...options.context,
        requestId: this.#requestId,
        event: wire,
      });
    }
  }

  callClientTool(call: ToolCallInfo, signal: AbortSignal): Promise<ToolOutcome> {
    const engine = this.#engine;
    const context = this.#options.context;
    const requestId = this.#requestId;
    const calls = this.#pending ??= new Map();
    const request = engine.requestClient("tool/call", {
      ...context,
      requestId,
      call: call as unknown as JsonObject,
    });
    const cancel = (reason: string) => {
      if (!calls.delete(request.id)) return;
      request.abandon();
      engine.notify("tool/cancel", { ...context, requestId, id: request.id, callId: call.id, reason });
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
