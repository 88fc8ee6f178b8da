/**
 * What the handles (`Session`, `Npc`, `World`) share: the peer, the client tools, the world subscriptions
 * and the reporting of warnings. Every handle method is one call through here.
 * @module
 */
import { BridgeError } from "../protocol/errors.ts";
import { isJsonObject, type JsonObject, type JsonValue } from "../protocol/json.ts";
import type { WorldChange } from "./game_types.ts";
import type { MethodName, ParamsOf, ResultOf } from "./methods.ts";
import { guardOnError, Peer, type RequestOptions, toError } from "./peer.ts";
import { handOver, takeHandedOver, type Transport } from "./transport.ts";
import { ToolRegistry, workOf } from "./tools.ts";
import type { ToolDefinition, ToolRef } from "./types.ts";

/**
 * Options of a call that runs a turn (`session/respond`, `npc/talk`).
 *
 * @example
 * ```ts
 * import { Bridge } from "@open-apple-models/bridge";
 * await using bridge = await Bridge.open();
 * const slow = await bridge.createSession({ model: { type: "scripted", steps: [{ text: "Zzz.", delayMs: 60_000 }] } });
 * const error = await slow.respond("Wake up.", { timeoutMs: 10 }).catch((e) => e);
 * error.dataCode; // "timeout"
 * ```
 */
export interface TurnOptions {
  /**
   * Aborting cancels the turn on the bridge; the call rejects with `-32009`, or resolves with the reply when
   * the turn had already finished as the cancel arrived (the NPC or session then keeps it in its history).
   * From the abort on, the turn's callbacks (`onLine`, `onEvent`, …) get no more events. The protocol cancels
   * an NPC's (or session's) work as a whole: its running turn and every request queued behind it (a second
   * `talk`, a `state()` save, an `update`) also reject with `-32009`, so abort a turn only when nothing else
   * of that NPC is queued, or send again what you still need. The `-32009` of the aborted call has the
   * signal's reason as its `cause` (`controller.abort(new Error("walked away"))`, an `AbortSignal.timeout`'s
   * `TimeoutError`), so a game with several reasons to give up can tell them apart.
   */
  signal?: AbortSignal;
  /**
   * Cancels the turn after this many milliseconds, as an aborted `signal` does; the call rejects with
   * `-32024 timeout`. No default.
   */
  timeoutMs?: number;
}

/** How to cancel a turn: the notification to send. */
export interface Cancel {
  /** The cancel notification's method (`session/cancel`, `npc/cancel`, …). */
  method: string;
  /** Its params (the session or NPC id). */
  params: JsonObject;
}

/** The options of a request that has none (never changed). */
const NO_OPTIONS: RequestOptions = Object.freeze({});

/**
 * Receives each `world/changed` of a subscription; `T` is the type you expect at the path (see
 * {@link WorldChange}).
 *
 * @example
 * ```ts
 * import { Bridge, type WorldListener } from "@open-apple-models/bridge";
 * const changes: string[] = [];
 * const gold: WorldListener = (change) => changes.push(`gold ${change.oldValue} → ${change.newValue}`);
 * await using bridge = await Bridge.open();
 * const world = await bridge.createWorld({ player: { gold: 60 } });
 * await world.subscribe("player.gold", gold);
 * ```
 */
export type WorldListener<T = JsonValue> = (change: WorldChange<T>) => void;

/**
 * `request`, whose BridgeError gets the stack of the code that awaits it. The error is rebuilt from the
 * bridge's answer where the transport delivers it, so its own stack names only the client's internals (and
 * an uncaught one printed the line `return new BridgeError(…)`, as if the client had failed). Taken again
 * here, after the await, V8's async stack names the awaiting functions: the script's line that made the
 * call. Only a failure pays for it.
 */
async function withCallerStack<T>(request: Promise<T>, explain?: (error: unknown) => unknown): Promise<T> {
  try {
    return await request;
  } catch (caught) {
    const error = explain ? explain(caught) : caught;
    // (Error.captureStackTrace is V8's: Deno and Chromium have it; a browser without it keeps the old stack.)
    if (error instanceof BridgeError && typeof Error.captureStackTrace === "function") {
      Error.captureStackTrace(error, withCallerStack);
    }
    throw error;
  }
}

/**
 * The methods that run after the NPC's or session's current turn (spec §2.3): sent from inside a handler of
 * that turn's tool, they wait for the turn, which waits for the handler.
 */
const QUEUED_METHODS = new Set([
  "npc/talk",
  "npc/update",
  "npc/reset",
  "npc/state",
  "session/respond",
  "session/reset",
  "session/compact",
  "session/setInstructions",
  "session/setContextNote",
  "session/setTools",
]);

/** A request that cancels all the work of the NPC or session it names. */
type EndingMethod = "npc/cancel" | "npc/delete" | "session/cancel" | "session/delete";

/**
 * The requests that cancel all the work of the NPC or session they name, with why its other requests in flight
 * were cancelled when one is sent by hand (null: a cancel, whose `-32009` is the one the game asked for).
 */
const ENDING_METHODS = new Map<string, { why: string | null }>([
  ["npc/cancel", { why: null }],
  ["session/cancel", { why: null }],
  ["npc/delete", { why: "an 'npc/delete' request deleted the NPC." }],
  ["session/delete", { why: "a 'session/delete' request deleted the session." }],
]);

/** What a notification of an ending method says it did (no answer comes, but the work ends all the same). */
const ENDING_NOTIFICATIONS = new Map<string, { why: string | null }>([
  ["npc/cancel", { why: null }],
  ["session/cancel", { why: null }],
  ["npc/delete", { why: "an 'npc/delete' notification deleted the NPC." }],
  ["session/delete", { why: "a 'session/delete' notification deleted the session." }],
]);

/** A turn in flight whose events reach the game's callbacks, under its NPC's or session's key (none: unkeyed). */
interface WatchedTurn {
  silenced: boolean;
  readonly key: string | undefined;
}

/** The shared state of one bridge connection. */
export class Connection {
  /** The JSON-RPC peer. */
  readonly peer: Peer;
  /** The transport under the peer. */
  readonly transport: Transport;
  /** The client tools. */
  readonly tools: ToolRegistry = new ToolRegistry();
  readonly #listeners = new Map<string, WorldListener>();
  readonly #onWarning: (warning: string, method: string) => void;
  /** Set by `Bridge.close()`: its `shutdown` cancels every turn in flight. */
  #closingHere = false;
  /**
   * How many times this client cancelled an NPC's or session's work as a whole for one request's sake (a
   * turn's abort, a restore), which the protocol does to every request of it in flight.
   */
  #cancels = 0;
  /** Per NPC or session (see `workOf`): the number of the last such cancel, and why it was sent. */
  readonly #lastCancel = new Map<string, { number: number; why: string }>();
  /**
   * Per NPC or session (see `workOf`): its turns in flight whose events reach the game's callbacks, each
   * with its `silenced` flag (set by `silence`, when `cancel()`, `delete()` or `npc.restore()` is called).
   */
  readonly #watchedTurns = new Map<string, Set<WatchedTurn>>();

  /** A connection over `transport` (not started yet). */
  constructor(
    transport: Transport,
    options: { onWarning: (warning: string, method: string) => void; onError?: (error: Error) => void },
  ) {
    const peer = new Peer(transport, {
      ...(options.onError ? { onError: options.onError } : {}),
      onResult: (method, result) => this.reportWarnings(method, result),
    });
    this.peer = peer;
    this.transport = transport;
    const onWarning = options.onWarning;
    const onError = guardOnError(options.onError);
    // A callback that throws is the game's bug, not the call's: the call still returns what it made (an NPC
    // created on the bridge keeps its handle) and the error goes where a listener's goes.
    this.#onWarning = (warning, method) => {
      try {
        onWarning(warning, method);
      } catch (error) {
        onError(toError(error));
      }
    };
    this.tools.install(peer, { onBug: (message) => this.#onWarning(message, "tool/call") });
    peer.onNotification("world/changed", (params) => {
      const { subscription, world, path } = params;
      if (typeof subscription !== "string" || typeof world !== "string" || typeof path !== "string") return;
      this.#listeners.get(subscription)?.({ ...params, world, subscription, path });
    });
  }

  /** Calls a protocol method with typed params and result. */
  request<M extends MethodName>(
    method: M,
    params: ParamsOf<M>,
    options?: RequestOptions,
  ): Promise<ResultOf<M>>;
  /** Calls any method (an extension's); `T` is the result type you expect. */
  request<T = JsonValue>(method: string, params?: object, options?: RequestOptions): Promise<T>;
  request(method: string, params?: object, options?: RequestOptions): Promise<unknown> {
    const ending = ENDING_METHODS.get(method);
    if (ending !== undefined) {
      // Sent by hand (bridge.request("npc/delete", …)) as by npc.delete(): the same path, said as it was sent.
      return this.endWork(method as EndingMethod, { params, why: ending.why, options });
    }
    return this.#request(method, params, options, null);
  }

  /**
   * Sends a request that cancels all the work of the NPC or session it names (`npc/cancel`, `npc/delete`,
   * `session/cancel`, `session/delete`): from now on the callbacks of that NPC's or session's turns in flight
   * get none of their events (see `silence`), and with a `why` the `-32009` of its other requests in flight
   * ends with "when " + `why` (see `noteCancel`). Used by `cancel()`, `delete()`, `npc.restore()` and a
   * request of such a method sent by hand.
   */
  endWork<M extends EndingMethod>(
    method: M,
    how: { params: object | undefined; why: string | null; options?: RequestOptions | undefined },
  ): Promise<ResultOf<M>> {
    this.#endingWork(method, how);
    return this.#request(method, how.params, how.options, null) as Promise<ResultOf<M>>;
  }

  /**
   * Sends a notification. One of a method that ends an NPC's or session's work (`npc/cancel`, `npc/delete`,
   * `session/cancel`, `session/delete`) silences that work's turns in flight first, as {@link endWork} does for
   * a request of it, and a delete's `-32009` says a notification deleted it.
   */
  notify(method: string, params?: object): Promise<void> {
    const ending = ENDING_NOTIFICATIONS.get(method);
    if (ending !== undefined) this.#endingWork(method, { params, why: ending.why });
    return this.peer.notify(method, params as JsonObject | undefined);
  }

  /** The client's side of ending the work `method` names in `how.params`: see {@link endWork}. */
  #endingWork(method: string, how: { params: object | undefined; why: string | null }): void {
    const kind = method.slice(0, method.indexOf("/"));
    const id = (how.params as Record<string, unknown> | undefined)?.[kind];
    if (typeof id === "string") {
      const target = { [kind]: id };
      this.silence(target);
      if (how.why !== null) this.noteCancel(target, how.why);
    }
  }

  /**
   * `request`; a `-32009` that a cancel sent for another turn's abort caused (the protocol has no cancel for
   * one request) says so. `own`: the turn whose own abort is not another's.
   */
  #request(
    method: string,
    params: object | undefined,
    options: RequestOptions | undefined,
    own: { aborted: boolean } | null,
  ): Promise<unknown> {
    const before = this.#cancels;
    const sent = this.peer.request(method, params, options);
    if (QUEUED_METHODS.has(method)) {
      const work = workOf(params);
      const settle = (params as { settle?: unknown } | undefined)?.settle;
      const done = work && (method !== "npc/state" || settle !== false)
        ? this.tools.noteQueued(work.key, method)
        : null;
      if (done !== null) sent.then(done, done);
    }
    return withCallerStack(sent, (error) => {
      if (!(error instanceof BridgeError) || error.dataCode !== "cancelled" || own?.aborted) return error;
      const work = this.#cancels === before ? null : workOf(params);
      const cancel = work && this.#lastCancel.get(work.key);
      if (!work || !cancel || cancel.number <= before) {
        if (!this.#closingHere) return error;
        const closed = new BridgeError(
          error.code,
          error.dataCode,
          `${error.message} It was cancelled because this program closed the bridge (close(), or the end of ` +
            "the block or function that opened it with 'await using').",
          error.data,
        );
        closed.cause = error;
        return closed;
      }
      const explained = new BridgeError(
        error.code,
        error.dataCode,
        `${error.message} '${method}' was cancelled with the rest of ${work.words}'s work when ${cancel.why}`,
        error.data,
      );
      explained.cause = error;
      return explained;
    });
  }

  /**
   * Runs a turn: `onNotification` sees its events in wire order before it settles; aborting
   * `options.signal` or passing `options.timeoutMs` sends `cancel` and waits for the bridge's answer.
   * `flat`: `params` were made for this call alone and are flat (they are handed over, see `handOver`).
   */
  turn<T>(
    method: string,
    params: object,
    cancel: Cancel,
    options: TurnOptions,
    onNotification?: (method: string, params: JsonObject) => void,
    flat = false,
  ): Promise<T> {
    const { signal, timeoutMs } = options;
    // Once aborted or its NPC's or session's cancel() called (the player walked away), the turn's callbacks
    // get no more of its events: the events already on their way would otherwise go on typing a line nobody
    // waits for.
    const own = { aborted: false };
    const watched = onNotification === undefined ? null : this.#watch(cancel.params);
    const deliver = onNotification && watched &&
      ((method: string, params: JsonObject) => {
        if (!own.aborted && !watched.silenced) onNotification(method, params);
      });
    // Nothing can abort it without a signal or a timeout: no hook to make.
    const requestOptions: RequestOptions = signal === undefined && timeoutMs === undefined
      ? (deliver ? { onNotification: deliver } : NO_OPTIONS)
      : {
        signal,
        timeoutMs,
        onNotification: deliver ?? undefined,
        onAbort: () => {
          if (own.aborted) return; // a timeout after the abort: the cancel was sent
          own.aborted = true;
          this.noteCancel(
            cancel.params,
            `the signal or timeoutMs of its '${method}' aborted: the protocol cancels the running turn and ` +
              "every request queued behind it together (there is no cancel for one request). Send it again " +
              "if you still need it.",
          );
          this.peer.notify(cancel.method, cancel.params).catch(() => {});
        },
      };
    let sent: Promise<T>;
    if (!flat) sent = this.#request(method, params, requestOptions, own) as Promise<T>;
    else {
      handOver(params);
      sent = this.#request(method, params, requestOptions, own) as Promise<T>;
      takeHandedOver(null); // sent synchronously: a mark no transport took (not in process, not sent) goes
    }
    if (watched === null) return sent;
    const unwatch = () => this.#unwatch(watched);
    sent.then(unwatch, unwatch);
    return sent;
  }

  /** Notes a turn in flight of the NPC or session `params` name, whose callbacks `silence` can stop. */
  #watch(params: object): WatchedTurn {
    const key = workOf(params)?.key;
    const entry = { silenced: false, key };
    if (key === undefined) return entry;
    let turns = this.#watchedTurns.get(key);
    if (turns === undefined) this.#watchedTurns.set(key, turns = new Set());
    turns.add(entry);
    return entry;
  }

  #unwatch(entry: WatchedTurn): void {
    const key = entry.key;
    const turns = key === undefined ? undefined : this.#watchedTurns.get(key);
    if (turns === undefined || key === undefined) return;
    turns.delete(entry);
    if (turns.size === 0) this.#watchedTurns.delete(key);
  }

  /**
   * From now on, the callbacks of the turns in flight of the NPC or session `params` name (`{ npc }` or
   * `{ session }`) get none of their events, also those already on their way: called before its cancel,
   * delete or restore is sent (the player walked away, the NPC died, a save was loaded). The turns still
   * settle (one that had ended gives its reply).
   */
  silence(params: object): void {
    const key = workOf(params)?.key;
    const turns = key === undefined ? undefined : this.#watchedTurns.get(key);
    if (turns !== undefined) { for (const turn of turns) turn.silenced = true; }
  }

  /** Definitions for tool references (undefined stays undefined). */
  definitions(refs: readonly ToolRef[] | undefined): ToolDefinition[] | undefined {
    return refs === undefined ? undefined : this.tools.definitions(refs);
  }

  /** Subscribes; `listener` is registered when the response arrives, before any later message. */
  async subscribe(
    world: string,
    path: string,
    listener: WorldListener,
  ): Promise<ResultOf<"world/subscribe">> {
    return await this.request("world/subscribe", { world, path }, {
      onResult: (result) => {
        if (isJsonObject(result) && typeof result.subscription === "string") {
          this.#listeners.set(result.subscription, listener);
        }
      },
    });
  }

  /** Ends a subscription (the listener is removed at once). */
  async unsubscribe(subscription: string): Promise<void> {
    this.#listeners.delete(subscription);
    await this.request("world/unsubscribe", { subscription });
  }

  /**
   * Notes, before sending it, a request that cancels all the work of the NPC or session that `params` name
   * for one request's sake: the `-32009` of its other requests in flight then end with "when " + `why`. The
   * latest per NPC or session is kept, a few hundred at most.
   */
  noteCancel(params: object, why: string): void {
    const work = workOf(params);
    if (work === null) return;
    const last = this.#lastCancel;
    last.delete(work.key); // to the end of the order
    last.set(work.key, { number: ++this.#cancels, why });
    if (last.size > 256) last.delete(last.keys().next().value!);
  }

  /** Notes that this program is closing the bridge (its turns' `-32009` then say so). */
  closingHere(): void {
    this.#closingHere = true;
  }

  /** Passes a warning of the client's own to `onWarning`, labelled with the call that caused it. */
  warn(warning: string, method: string): void {
    this.#onWarning(warning, method);
  }

  /** Passes a result's warnings to `onWarning` (the peer calls it for every result). */
  reportWarnings(method: string, result: JsonValue): void {
    if (!isJsonObject(result) || !Array.isArray(result.warnings)) return;
    for (const w of result.warnings) if (typeof w === "string") this.#onWarning(w, method);
  }
}
