/**
 * The in-process transport: a bridge engine in this process, reached through its wire entry points, so
 * arrival-order dispatch, the ordered writer and the message classification run exactly as they do for a
 * stdio client. Messages cross as values, not text (`EngineCore.connectInProcess`), and each side gets
 * objects of its own, equal to what `JSON.parse` makes of the message's line: neither side can change the
 * other's objects.
 *
 * - Client to engine: a copy (`copyIncoming`), kept by the engine; params that a typed handle made for
 *   that one request and that hold primitives only are handed over as they are (`handOver`).
 * - Engine to client: a copy (`copyMessage`); a result or notification params that a method made fresh
 *   for that one message are handed over as they are (`HandlerContext.handOver`).
 * - A message whose JSON text is not a plain copy of it (a Date, a `toJSON`, a lone surrogate…) goes as
 *   its line (`engine.receive(line)` in, the engine's `send` out), with exactly the line's behavior; so
 *   does everything with an engine that only takes lines.
 * @module
 */
import { copyIncoming, encodeClientMessage } from "../protocol/codec.ts";
import type { JsonObject, JsonValue } from "../protocol/json.ts";
import { BridgeError } from "../protocol/errors.ts";
import type { JsonRpcMessage } from "./messages.ts";
import { SENT, takeHandedOver, type Transport } from "./transport.ts";

/**
 * What the in-process transport needs from an engine (`BridgeEngine` and `EngineCore` have it).
 *
 * @example
 * ```ts
 * import { Bridge, type InProcessEngine } from "@open-apple-models/bridge";
 * import { BridgeEngine } from "@open-apple-models/bridge/engine";
 * await using bridge = await Bridge.open({
 *   engine: (send, onShutdown): InProcessEngine => new BridgeEngine({ onShutdown }, send),
 * });
 * ```
 */
export interface InProcessEngine {
  /** Handles one incoming line. */
  receive(line: string): void;
  /** Stops at once: cancels everything and never sends again. */
  close(): void;
  /**
   * Optional: switches to messages as values (see `EngineCore.connectInProcess`); returns the entry for
   * incoming messages, or null to stay on lines.
   */
  connectInProcess?(
    send: (line: string) => void,
    deliver: (message: JsonObject) => void,
  ): ((message: JsonObject) => void) | null;
}

/**
 * Creates the engine: `send` receives each outgoing line, `onShutdown` must be called after the engine has
 * answered `shutdown` (pass it as `BridgeConfiguration.onShutdown`).
 *
 * @example
 * ```ts
 * import { Bridge, type EngineFactory } from "@open-apple-models/bridge";
 * import { BridgeEngine } from "@open-apple-models/bridge/engine";
 * const quick: EngineFactory = (send, onShutdown) => new BridgeEngine({ toolTimeoutSeconds: 5, onShutdown }, send);
 * await using bridge = await Bridge.open({ engine: quick });
 * ```
 */
export type EngineFactory = (send: (line: string) => void, onShutdown: () => void) => InProcessEngine;

/**
 * The default engine: every standard method set and model type. Loaded when a transport without a factory
 * starts, so a program that only connects over WebSocket or stdio does not carry the engine (a bundler puts
 * it in a chunk of its own, loaded only by `Bridge.open()`).
 */
async function defaultEngine(): Promise<EngineFactory> {
  const { BridgeEngine } = await import("../composition.ts");
  return (send, onShutdown) => new BridgeEngine({ onShutdown }, send);
}

/**
 * A transport to an engine in this process. Outgoing lines are delivered to `onmessage` on a microtask, in
 * order, so client code never runs inside the engine's writer (as with a real process). After the engine
 * has answered `shutdown`, the transport closes itself.
 *
 * @example
 * ```ts
 * import { Bridge, InProcessTransport } from "@open-apple-models/bridge";
 * import { BridgeEngine } from "@open-apple-models/bridge/engine";
 * const transport = new InProcessTransport((send, onShutdown) =>
 *   new BridgeEngine({ toolTimeoutSeconds: 5, onShutdown }, send)
 * );
 * await using bridge = await Bridge.connect(transport);
 * ```
 */
export class InProcessTransport implements Transport {
  /** Receives each message from the engine. */
  onmessage?: (message: JsonValue) => void;
  /** Called once when closed. */
  onclose?: (reason?: Error) => void;
  /** Called for a line that is not JSON (an engine bug). */
  onerror?: (error: Error) => void;
  readonly #factory: EngineFactory | null;
  #engine: InProcessEngine | null = null;
  /** The engine's entry for messages as values (null: it takes lines only). */
  #receive: ((message: JsonObject) => void) | null = null;
  /** Lines and message values from the engine, in the order it sent them. */
  #outbox: Array<string | JsonObject> = [];
  #started = false;
  #scheduled = false;
  #delivering = false;
  #closed = false;

  /** A transport for the engine `factory` makes (default: a `BridgeEngine` with every default). */
  constructor(factory?: EngineFactory) {
    this.#factory = factory ?? null;
  }

  /** Creates the engine (the default one is loaded first). */
  async start(): Promise<void> {
    if (this.#started || this.#closed) throw new Error("The in-process transport was already started.");
    this.#started = true;
    const factory = this.#factory ?? await defaultEngine();
    if (this.#closed) return; // closed while the engine loaded
    const send = (line: string) => this.#enqueue(line);
    const engine = factory(send, () => this.#closeSoon());
    this.#engine = engine;
    this.#receive = engine.connectInProcess?.(send, (message) => this.#enqueue(message)) ?? null;
  }

  /** Hands one message to the engine: a copy of it, or its line. */
  send(message: JsonRpcMessage): Promise<void> {
    const engine = this.#engine;
    if (engine === null || this.#closed) {
      return Promise.reject(BridgeError.of("shut_down", "The in-process bridge is closed."));
    }
    const receive = this.#receive;
    if (receive !== null) {
      // Params the client made for this request alone, holding only primitives: nothing to copy.
      if (takeHandedOver((message as { params?: unknown }).params)) {
        receive(message as unknown as JsonObject);
        return SENT;
      }
      const copy = copyIncoming(message);
      if (copy !== null) {
        receive(copy);
        return SENT;
      }
    }
    let line: string;
    try {
      line = encodeClientMessage(message);
    } catch (error) {
      return Promise.reject(error); // e.g. a BigInt or a lone surrogate in the params: nothing was sent
    }
    engine.receive(line);
    return SENT;
  }

  /** Closes the engine at once (it sends nothing more) and reports the close. */
  close(): Promise<void> {
    this.#finish();
    return Promise.resolve();
  }

  #enqueue(item: string | JsonObject): void {
    if (this.#closed) return;
    this.#outbox.push(item);
    if (!this.#scheduled) {
      this.#scheduled = true;
      queueMicrotask(() => this.#deliver());
    }
  }

  #deliver(): void {
    if (this.#delivering) return;
    this.#delivering = true;
    try {
      // Messages the handlers cause while this batch is delivered join the outbox and are delivered in turn.
      for (let i = 0; i < this.#outbox.length && !this.#closed; i++) {
        const item = this.#outbox[i];
        let message: JsonValue;
        try {
          message = typeof item === "string" ? JSON.parse(item) : item;
        } catch (error) {
          this.onerror?.(new Error(`The engine sent a line that is not JSON: ${String(error)}`));
          continue;
        }
        try {
          this.onmessage?.(message);
        } catch (error) {
          this.onerror?.(error instanceof Error ? error : new Error(String(error)));
        }
      }
    } finally {
      this.#outbox = [];
      this.#delivering = false;
      this.#scheduled = false;
    }
  }

  /** After `shutdown` was answered: deliver what is queued (its response), then close. */
  #closeSoon(): void {
    queueMicrotask(() => this.#finish());
  }

  #finish(): void {
    if (this.#closed) return;
    // Deliver what the engine already wrote before reporting the close (unless this is inside a delivery).
    if (this.#outbox.length > 0) this.#deliver();
    this.#closed = true;
    this.#outbox = [];
    this.#engine?.close();
    this.onclose?.();
  }
}
