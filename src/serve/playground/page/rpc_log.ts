/**
 * A transport that records every JSON-RPC message going out and coming in, around the typed client's
 * WebSocket transport: the page's raw log shows exactly what crossed the wire, in order.
 * @module
 */
import type { JsonValue } from "../../../protocol/json.ts";
import type { JsonRpcMessage } from "../../../client/messages.ts";
import type { Transport, TransportClose } from "../../../client/transport.ts";

/** One message on the wire. */
export interface RpcEntry {
  /** `out`: page → bridge; `in`: bridge → page. */
  direction: "out" | "in";
  /** When it was sent or received (`performance.now()` ms). */
  at: number;
  /** The message. */
  message: JsonValue;
}

/**
 * Wraps a transport and reports each message to `record` (before it is sent, or before the peer sees it).
 *
 * @example
 * ```ts
 * import { InProcessTransport } from "../../../client/in_process.ts";
 * import { Peer } from "../../../client/peer.ts";
 * const seen: string[] = [];
 * const peer = new Peer(new LoggingTransport(new InProcessTransport(), (e) => seen.push(e.direction)));
 * await peer.start();
 * await peer.request("ping");
 * await peer.close();
 * seen; // ["out", "in"]
 * ```
 */
export class LoggingTransport implements Transport {
  /** Receives each incoming message. */
  onmessage?: (message: JsonValue) => void;
  /** Called once when the transport has closed (with the WebSocket's close code, as the inner one says). */
  onclose?: (reason?: Error, close?: TransportClose) => void;
  /** Called for problems that do not close the transport. */
  onerror?: (error: Error) => void;
  readonly #inner: Transport;
  readonly #record: (entry: RpcEntry) => void;

  /** Records the messages of `inner`. */
  constructor(inner: Transport, record: (entry: RpcEntry) => void) {
    this.#inner = inner;
    this.#record = record;
  }

  /** Starts the inner transport. */
  start(): Promise<void> {
    this.#inner.onmessage = (message) => {
      this.#record({ direction: "in", at: performance.now(), message });
      this.onmessage?.(message);
    };
    this.#inner.onclose = (reason, close) => this.onclose?.(reason, close);
    this.#inner.onerror = (error) => this.onerror?.(error);
    return this.#inner.start();
  }

  /** Records and sends. */
  send(message: JsonRpcMessage): Promise<void> {
    this.#record({ direction: "out", at: performance.now(), message: message as unknown as JsonValue });
    return this.#inner.send(message);
  }

  /** Closes the inner transport. */
  close(): Promise<void> {
    return this.#inner.close();
  }
}
