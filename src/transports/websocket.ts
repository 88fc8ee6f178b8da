/**
 * The WebSocket transport: the bridge protocol with one JSON-RPC message per text frame and exactly the stdio
 * semantics (arrival order, streaming, `tool/call` to the client, cancellation), one engine per connection.
 * Closing the socket cancels that connection's work; a `shutdown` request closes the socket after its
 * response.
 * @module
 */
import { decodeLine, MAX_MESSAGE_BYTES } from "../protocol/codec.ts";
import { BridgeError, MESSAGES } from "../protocol/errors.ts";
import type { Logger } from "../util/logger.ts";
import { settledWithin } from "../util/sleep.ts";
import type { EngineCore } from "../engine/engine.ts";

/** The parts of a WebSocket the transport uses (the standard `WebSocket` has them). */
export interface WebSocketLike {
  /** 0 connecting, 1 open, 2 closing, 3 closed. */
  readonly readyState: number;
  /** Bytes queued for sending. */
  readonly bufferedAmount: number;
  /** Sends one text frame. */
  send(data: string): void;
  /** Closes the connection. */
  close(code?: number, reason?: string): void;
  /** Listens for `message`, `close` and `error` events. */
  addEventListener(type: "message", listener: (event: MessageEvent) => void): void;
  /** Listens for `message`, `close` and `error` events. */
  addEventListener(type: "close" | "error", listener: (event: Event) => void): void;
}

/** Default longest message (one text frame), in bytes. */
export const DEFAULT_MAX_MESSAGE_BYTES: number = MAX_MESSAGE_BYTES;
/** Default output a client may leave unread before the connection is closed (bytes). */
export const DEFAULT_MAX_BUFFERED_OUTPUT_BYTES = 64 * 1024 * 1024;

/** Close code when the client stops reading its messages (RFC 6455 "policy violation"). */
export const CLOSE_NOT_READING = 1008;
/** Bound on the wait for a client to complete the close handshake when the server stops (ms). */
export const CLOSE_GRACE_MS = 1000;
/** Close code when the server stops (RFC 6455 "going away"). */
export const CLOSE_GOING_AWAY = 1001;

/** Options of {@link serveWebSocket}. */
export interface WebSocketServeOptions {
  /** Longest accepted message in bytes; a longer one is answered with -32600 and skipped. */
  maxMessageBytes?: number;
  /** Unread output past which the connection is closed (the client stopped reading). */
  maxBufferedOutputBytes?: number;
  /** Where transport problems are logged. */
  logger?: Logger;
  /** Called once, synchronously, when the connection ends (before its work is cancelled). */
  onClose?: () => void;
  /** The connection's name in the log (default "WebSocket connection"). */
  name?: string;
}

/** One served connection. */
export interface WebSocketConnection {
  /** The connection's engine. */
  readonly engine: EngineCore;
  /** Resolves once the socket is closed and the engine has stopped. */
  readonly closed: Promise<void>;
  /**
   * Shuts the connection down (the server is stopping): cancels its work — every request read still gets its
   * response — then closes the socket with 1001.
   */
  shutdown(): Promise<void>;
}

const OPEN = 1;
const encoder = new TextEncoder();

/** UTF-8 length of `text`, computed only when it could pass `max`. */
function overLimit(text: string, max: number): boolean {
  if (text.length * 3 <= max) return false;
  if (text.length > max) return true;
  return encoder.encode(text).length > max;
}

/** A frame whose JSON text is an array (a batch when it parses): "[" after a byte order mark and blanks. */
const ARRAY_START = /^\uFEFF?\s*\[/;

/**
 * The error of a batch over WebSocket: the engine's own (`-32600 invalid_message`, id null) with wording that
 * fits a WebSocket (the engine's says "send one message per line", which is how stdio separates messages).
 */
function batchError(): BridgeError {
  return BridgeError.of(
    "invalid_message",
    "Batch requests are not supported; send each message as a WebSocket message of its own.",
  );
}

/**
 * The number of non-blank lines of a frame that is not one JSON value and has more than one such line (the
 * stdio habit of newline-separated messages), else 0. Only a frame with a line break inside is parsed here.
 */
function severalMessages(text: string): number {
  const trimmed = text.trim();
  if (!trimmed.includes("\n")) return 0;
  const lines = trimmed.split("\n").filter((line) => line.trim() !== "").length;
  if (lines < 2) return 0;
  try {
    JSON.parse(trimmed);
    return 0;
  } catch {
    return lines;
  }
}

/**
 * Serves one WebSocket with an engine made by `makeEngine(send, onShutdown)`.
 *
 * @example
 * ```ts
 * import { serveWebSocket } from "./websocket.ts";
 * import { BridgeEngine } from "../composition.ts";
 * const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (request) => {
 *   const { socket, response } = Deno.upgradeWebSocket(request);
 *   serveWebSocket(socket, { makeEngine: (send, onShutdown) => new BridgeEngine({ onShutdown }, send) });
 *   return response;
 * });
 * await server.shutdown();
 * ```
 */
export function serveWebSocket(
  socket: WebSocketLike,
  options: WebSocketServeOptions & {
    /** Builds the connection's engine around its `send` and `onShutdown`. */
    makeEngine: (send: (line: string) => void, onShutdown: () => void) => EngineCore;
  },
): WebSocketConnection {
  return new SocketConnection(socket, options);
}

/** A served socket: each step of a connection's life (frame in, line out, end, server stop) is a method. */
class SocketConnection implements WebSocketConnection {
  readonly engine: EngineCore;
  readonly closed: Promise<void>;
  readonly #socket: WebSocketLike;
  readonly #maxMessage: number;
  readonly #maxBuffered: number;
  readonly #logger: Logger | undefined;
  readonly #onClose: (() => void) | undefined;
  readonly #name: string;
  /** True once this side closed the socket (a shutdown request, the server stopping, a client not reading). */
  #closedHere = false;
  /** Why this side closed it, for the log line that ends the connection (the client's shutdown request). */
  #closedFor: string | null = null;
  #ended = false;
  #resolveClosed!: () => void;

  constructor(socket: WebSocketLike, options: Parameters<typeof serveWebSocket>[1]) {
    this.#socket = socket;
    this.#maxMessage = options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
    this.#maxBuffered = options.maxBufferedOutputBytes ?? DEFAULT_MAX_BUFFERED_OUTPUT_BYTES;
    this.#logger = options.logger;
    this.#onClose = options.onClose;
    this.#name = options.name ?? "WebSocket connection";
    this.closed = new Promise<void>((resolve) => this.#resolveClosed = resolve);
    // The shutdown response has been sent: the connection ends, as a stdio bridge exits.
    this.engine = options.makeEngine(
      (line) => this.#send(line),
      () =>
        queueMicrotask(() => {
          this.#closedFor = "the client sent shutdown";
          this.#close(1000, MESSAGES.shutDown);
        }),
    );
    socket.addEventListener("message", (event: MessageEvent) => this.#receive(event.data));
    socket.addEventListener("close", (event: Event) => this.#end((event as CloseEvent).code));
    socket.addEventListener("error", (event: Event) => this.#logError(event));
  }

  async shutdown(): Promise<void> {
    if (!this.#ended) await this.engine.shutdown();
    this.#close(CLOSE_GOING_AWAY, "The server is stopping.");
    // Let the close handshake finish (bounded: a client that never answers it).
    await settledWithin(this.closed, { ms: CLOSE_GRACE_MS });
    this.#end();
  }

  /** One frame from the client: a text frame within the limit is a line for the engine. */
  #receive(data: unknown): void {
    if (this.#ended) return;
    if (typeof data !== "string") {
      this.engine.reportInvalid(
        BridgeError.of(
          "invalid_message",
          "Binary frames are not supported: send each JSON-RPC message as one text frame.",
        ),
      );
      return;
    }
    if (overLimit(data, this.#maxMessage)) {
      this.engine.reportInvalid(
        BridgeError.of(
          "invalid_message",
          `The message is longer than the limit of ${this.#maxMessage} bytes.`,
          { limit: this.#maxMessage },
        ),
      );
      return;
    }
    const lines = severalMessages(data);
    if (lines > 1) {
      this.engine.reportInvalid(
        BridgeError.of(
          "parse_error",
          `Invalid JSON: this text frame holds ${lines} lines. Over WebSocket each JSON-RPC message is a text ` +
            "frame of its own; a newline does not separate messages.",
        ),
      );
      return;
    }
    if (ARRAY_START.test(data)) {
      // Only the wording differs from the engine's answer: the same code, the same id null.
      const decoded = decodeLine(data);
      if (decoded.kind === "invalid" && decoded.error.dataCode === "invalid_message") {
        this.engine.reportInvalid(batchError());
        return;
      }
    }
    this.engine.receive(data);
  }

  /** One line from the engine, sent as a text frame while the socket is open. */
  #send(line: string): void {
    if (this.#ended || this.#socket.readyState !== OPEN) return;
    try {
      this.#socket.send(line);
    } catch (error) {
      this.#logger?.warning(`Sending on a WebSocket failed: ${String(error)}`);
      return;
    }
    this.#closeIfNotReading();
  }

  /** Closes the connection when the client leaves more than the allowed output unread. */
  #closeIfNotReading(): void {
    if (this.#socket.bufferedAmount <= this.#maxBuffered) return;
    this.#logger?.warning(
      `Closing a WebSocket connection: more than ${this.#maxBuffered} bytes of output are waiting; the client is not reading.`,
    );
    this.#close(CLOSE_NOT_READING, "The client is not reading its messages.");
  }

  #close(code: number, reason: string): void {
    this.#closedHere = true;
    try {
      this.#socket.close(code, reason);
    } catch {
      // already closed
    }
  }

  /**
   * The connection is over (once): nobody can answer a tool/call or read a response any more. `code` is the
   * close code when the socket reported its close.
   */
  #end(code?: number): void {
    if (this.#ended) return;
    this.#ended = true;
    if (!this.#closedHere) this.#logClientGone(code);
    else if (this.#closedFor !== null) this.#logger?.info(`${this.#name} ended: ${this.#closedFor}.`);
    this.#onClose?.();
    // Cancel everything at once.
    this.engine.markInputClosed("The client closed the connection.");
    this.engine.close();
    this.#resolveClosed();
  }

  /** Logs that the client ended the connection: a warning when that cancels requests in flight. */
  #logClientGone(code: number | undefined): void {
    // No close frame came (a client process that died, a network failure): Deno says 0, RFC 6455 says 1006.
    const how = code === 0 || code === 1006
      ? "the connection broke (no close from the client)"
      : `the client closed it${code === undefined ? "" : ` (close code ${code})`}`;
    const running = this.engine.inFlight;
    if (running === 0) {
      this.#logger?.info(`${this.#name} ended: ${how}.`);
      return;
    }
    const requests = running === 1 ? "1 request" : `${running} requests`;
    this.#logger?.warning(`${this.#name} dropped in the middle of its work: ${how}; ${requests} cancelled.`);
  }

  #logError(event: Event): void {
    const message = (event as ErrorEvent).message;
    this.#logger?.debug(`WebSocket error${message ? `: ${message}` : ""}.`);
  }
}
