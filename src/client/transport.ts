/**
 * The transport interface: moves JSON-RPC messages, nothing else. Implementations: {@link InProcessTransport}
 * (an engine in this process), {@link StdioTransport} (a spawned `oam stdio`). The peer above it does the
 * request bookkeeping.
 * @module
 */
import type { JsonValue } from "../protocol/json.ts";
import type { JsonRpcMessage } from "./messages.ts";

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
 * import type { Transport } from "./transport.ts";
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
