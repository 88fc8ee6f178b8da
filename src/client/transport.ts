/**
 * The transport interface: moves JSON-RPC messages, nothing else. Implementations: {@link InProcessTransport}
 * (an engine in this process), {@link StdioTransport} (a spawned `oam stdio`). The peer above it does the
 * request bookkeeping.
 * @module
 */
import { BridgeError } from "../protocol/errors.ts";
import type { JsonValue } from "../protocol/json.ts";
import type { JsonRpcMessage } from "./messages.ts";

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
 * settle.
 *
 * @example
 * ```ts
 * import { messageTooLong } from "./transport.ts";
 * const error = messageTooLong({ bytes: 20_000_000, limit: 16_777_216, option: "maxLineBytes" });
 * error.dataCode; // "invalid_message"
 * ```
 */
export function messageTooLong(
  { bytes, limit, option }: { bytes: number; limit: number; option: string },
): BridgeError {
  return BridgeError.of(
    "invalid_message",
    `The message is ${bytes} bytes, longer than the ${limit} bytes the bridge reads; it was not sent ` +
      `(a bridge started with a higher limit needs the transport's '${option}' option too).`,
    { limit },
  );
}

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
  /** Receives each incoming message (parsed JSON; the peer validates its shape). */
  onmessage?: (message: JsonValue) => void;
  /** Called once when the transport has closed; `reason` says why when it was not `close()`. */
  onclose?: (reason?: Error) => void;
  /** Called for a problem that does not close the transport. */
  onerror?: (error: Error) => void;
}
