/**
 * The transport interface: moves JSON-RPC messages, nothing else. Implementations: {@link InProcessTransport}
 * (an engine in this process), {@link StdioTransport} (a spawned `oam stdio`). The peer above it does the
 * request bookkeeping.
 * @module
 */
import { BridgeError } from "../protocol/errors.ts";
import type { JsonValue } from "../protocol/json.ts";
import type { JsonRpcMessage, RequestId } from "./messages.ts";

/**
 * What `send()` may return when the message was handed over at once and nothing can fail later (the
 * in-process transport does): the peer then attaches no handler to it.
 *
 * @example
 * ```ts
 * import { SENT, type Transport } from "./transport.ts";
 * const sink: unknown[] = [];
 * const inMemory: Transport = {
 *   start: () => Promise.resolve(),
 *   send(message) {
 *     sink.push(message);
 *     return SENT;
 *   },
 *   close: () => Promise.resolve(),
 * };
 * await inMemory.send({ jsonrpc: "2.0", method: "ping" });
 * ```
 */
export const SENT: Promise<void> = Promise.resolve();

/**
 * The `-32600 invalid_message` error of a message longer than the bridge reads. A transport refuses such a
 * message before sending it: the bridge would skip it and answer with id null, so the request would never
 * settle. `method`, the message's, adds how to load a world in parts to a `world/create`, `world/set` or
 * `world/merge`.
 *
 * @example
 * ```ts
 * import { messageTooLong } from "./transport.ts";
 * const error = messageTooLong({ bytes: 20_000_000, limit: 16_777_216, option: "maxLineBytes" });
 * error.dataCode; // "invalid_message"
 * // A saved world's state: the message says how to load it in parts.
 * messageTooLong({ bytes: 20_000_000, limit: 16_777_216, option: "maxLineBytes", method: "world/create" });
 * ```
 */
export function messageTooLong(
  { bytes, limit, option, method }: { bytes: number; limit: number; option: string; method?: string },
): BridgeError {
  return BridgeError.of(
    "invalid_message",
    `The message is ${bytes} bytes, longer than the ${limit} bytes the bridge reads; it was not sent ` +
      `(a bridge started with a higher limit needs the transport's '${option}' option too).` +
      (method !== undefined && WORLD_WRITES.has(method) ? WORLD_IN_PARTS : ""),
    { limit },
  );
}

/** The methods that carry a world's state, most often a saved one being loaded. */
const WORLD_WRITES = new Set(["world/create", "world/set", "world/merge"]);
const WORLD_IN_PARTS = " A world's state this large loads in parts: world/create with part of it, then " +
  "world/merge the rest, a few keys at a time (docs/PROTOCOL.md §6, 'Saving a world').";

/** The params object of the request being sent, when {@link handOver} marked it; else null. */
let handedOver: object | null = null;

/**
 * Marks `params` as made for the request that is sent next, synchronously, and held by nothing else (the
 * typed handles build their params this way), and as flat JSON that the bridge reads as it is: members that
 * are strings without a lone surrogate, finite numbers other than -0, booleans or null, and no `undefined`
 * member. A transport in this process may then give the object itself to the bridge instead of a copy.
 * Never mark an object the caller passed in. (One mark at a time: a mark is replaced by the next, and used
 * up by {@link takeHandedOver}.)
 *
 * @example
 * ```ts
 * import { handOver, takeHandedOver } from "./transport.ts";
 * const params = handOver({ npc: "gorm", line: "Hello." });
 * takeHandedOver(params); // true (and the mark is used up)
 * takeHandedOver(params); // false
 * ```
 */
export function handOver<T extends object>(params: T): T {
  handedOver = params;
  return params;
}

/**
 * True for a value that a flat params object may hold as it is (see {@link handOver}): a string without a
 * lone surrogate, a finite number other than -0, a boolean or null.
 *
 * @example
 * ```ts
 * import { isFlatValue } from "./transport.ts";
 * isFlatValue("Hello."); // true
 * isFlatValue({ mood: "grim" }); // false
 * ```
 */
export function isFlatValue(value: unknown): boolean {
  if (typeof value === "string") return value.isWellFormed();
  if (typeof value === "number") return Number.isFinite(value) && (value !== 0 || 1 / value > 0);
  return typeof value === "boolean" || value === null;
}

/** True when `params` carries the current {@link handOver} mark, which it uses up (any mark is cleared). */
export function takeHandedOver(params: unknown): boolean {
  const marked = handedOver;
  handedOver = null;
  return marked !== null && marked === params;
}

/**
 * How a WebSocket connection closed, as a transport reports it to `onclose` (see {@link ConnectionEnd}).
 *
 * @example
 * ```ts
 * import type { TransportClose } from "@open-apple-models/bridge";
 * const stopping: TransportClose = { code: 1001, reason: "The server is stopping.", network: false };
 * ```
 */
export interface TransportClose {
  /** The close code (1000 normal, 1001 the server is stopping, 1006 the connection broke, …). */
  code: number;
  /** The close reason the other side sent ("" when none). */
  reason: string;
  /** True when the connection broke without a close from the other side (a network error: code 1006). */
  network: boolean;
}

/**
 * Why a connection to the bridge ended: `bridge.closeInfo` (and `peer.closeInfo`) once `done` resolved.
 *
 * - `"client"`: this side closed it (`bridge.close()`, `await using`, `peer.close()`).
 * - `"server"`: the bridge ended it: the server is stopping (WebSocket close code 1001), it closed a client
 *   that stopped reading (1008), it answered a `shutdown` request sent by hand, or the bridge process exited.
 * - `"network"`: the connection broke without a close from the bridge (WebSocket close code 1006: the
 *   network, a proxy, a server that was killed).
 *
 * @example Telling a player why the game lost its bridge
 * ```ts
 * import { Bridge, type ConnectionEnd, WebSocketTransport } from "@open-apple-models/bridge";
 * function describe(end: ConnectionEnd): string {
 *   if (end.by === "client") return "Disconnected.";
 *   if (end.by === "network") return "Connection lost: check the network, then reconnect.";
 *   return end.code === 1001 ? "The server is restarting: reconnect in a moment." : `Server closed: ${end.reason}`;
 * }
 * async function play(url = "ws://127.0.0.1:1976/rpc"): Promise<string> {
 *   const bridge = await Bridge.connect(new WebSocketTransport(url));
 *   await bridge.done;
 *   return describe(bridge.closeInfo!); // show it in the game's UI
 * }
 * ```
 */
export interface ConnectionEnd {
  /** Who ended the connection. */
  by: "client" | "server" | "network";
  /** The WebSocket close code, when the connection was a WebSocket that had opened. */
  code?: number;
  /** The WebSocket close reason (`"The server is stopping."`), when the connection was a WebSocket. */
  reason?: string;
  /**
   * Why it ended when this side did not close it, as the transport said (requests still waiting were rejected
   * with `-32023` naming it); absent for `"client"`.
   */
  error?: Error;
}

/**
 * A bidirectional message channel to the bridge.
 *
 * Contract: `start()` once before `send()`; messages reach `onmessage` in the order the bridge sent them,
 * never re-entrantly from inside `send()`; `onclose` is called exactly once, whether the transport was
 * closed with `close()` or ended on its own (then with the reason); `onerror` reports problems that do not
 * end the transport (e.g. an unreadable line).
 *
 * @example A transport that echoes nothing and closes at once
 * ```ts
 * import type { Transport } from "@open-apple-models/bridge";
 * const idle: Transport = {
 *   start: () => Promise.resolve(),
 *   send: () => Promise.resolve(),
 *   close() {
 *     this.onclose?.();
 *     return Promise.resolve();
 *   },
 * };
 * await idle.start();
 * await idle.close();
 * ```
 */
export interface Transport {
  /** Starts moving messages (spawns the process, creates the engine…). */
  start(): Promise<void>;
  /** Sends one message. Rejects when the transport is closed. */
  send(message: JsonRpcMessage): Promise<void>;
  /** Closes the transport; resolves when it is closed and `onclose` has been called. */
  close(): Promise<void>;
  /**
   * Told by the peer that it no longer waits for the response to its request `id` (it gave up: an abort or
   * timeout, or a bridge that did not answer the cancel). A transport that keeps this program alive while
   * answers are due (a child process) stops counting this one. Optional.
   */
  abandoned?(id: RequestId): void;
  /**
   * True when `close()` still delivers the bridge's answers to what was sent before it: a spawned bridge
   * reads the end of its input after every message before it, answers them and exits, and its output is read
   * to the end. `Bridge.close()` then closes the transport right after sending `shutdown`, instead of waiting
   * for its answer first (a stopped or busy bridge answers late, or never). Optional.
   */
  readonly drainsOnClose?: boolean;
  /** Receives each incoming message (parsed JSON; the peer validates its shape). */
  onmessage?: (message: JsonValue) => void;
  /**
   * Called once when the transport has closed; `reason` says why when it was not `close()`. A WebSocket
   * transport also passes how the socket closed (`close`), which `bridge.closeInfo` reports.
   */
  onclose?: (reason?: Error, close?: TransportClose) => void;
  /** Called for a problem that does not close the transport. */
  onerror?: (error: Error) => void;
}
