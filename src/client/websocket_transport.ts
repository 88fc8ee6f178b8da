/**
 * The client side of the bridge over WebSocket: one JSON-RPC message per text frame to and from an
 * `oam serve` `/rpc` endpoint. It has the shape of the typed client's transports (`start`/`send`/`close` and
 * the `onmessage`/`onclose`/`onerror` callbacks), so the same client classes run over it; it works in Deno
 * and in browsers (the API key travels as `?api_key=`, since browsers cannot set headers on a WebSocket). A
 * page gets the client with `deno bundle --platform browser --code-splitting mod.ts` (the in-process engine
 * then stays in a chunk of its own, loaded only by `Bridge.open()`), and its origin must be allowed by the
 * server (`oam serve --allow-origin <origin>`); see the README's `oam serve` section.
 * @module
 */
import { encodeClientMessage, MAX_MESSAGE_BYTES } from "../protocol/codec.ts";
import { BridgeError } from "../protocol/errors.ts";
import type { JsonValue } from "../protocol/json.ts";
import { messageTooLong, type Transport, type TransportClose } from "./transport.ts";

/**
 * Options of a {@link WebSocketTransport}.
 *
 * @example
 * ```ts
 * import { WebSocketTransport, type WebSocketTransportOptions } from "@open-apple-models/bridge";
 * const options: WebSocketTransportOptions = { apiKey: "secret" };
 * const transport = new WebSocketTransport("ws://127.0.0.1:1976/rpc", options);
 * transport.url; // "ws://127.0.0.1:1976/rpc" (the key is added when it connects)
 * ```
 */
export interface WebSocketTransportOptions {
  /** The server's API key, if it requires one (sent as the `api_key` query parameter). */
  apiKey?: string;
  /** The WebSocket constructor to use (default: the global `WebSocket`). */
  webSocket?: new (url: string) => WebSocket;
  /**
   * The longest message the server reads, in bytes (default 16 MiB, `oam serve`'s). A longer message is
   * refused before it is sent, with `-32600 invalid_message`.
   */
  maxMessageBytes?: number;
}

const OPEN = 1;
/** The close code of a connection that broke without a close frame (RFC 6455: never sent on the wire). */
const CLOSE_ABNORMAL = 1006;

/** The origin of the page this runs in, or null outside a page (Deno without `--location`, a worker…). */
function pageOrigin(): string | null {
  const origin = (globalThis as { location?: { origin?: unknown } }).location?.origin;
  return typeof origin === "string" && origin !== "null" && origin !== "" ? origin : null;
}

/** The URL of the page this runs in, or null outside a page. */
function pageHref(): string | null {
  const href = (globalThis as { location?: { href?: unknown } }).location?.href;
  return typeof href === "string" && href !== "" ? href : null;
}

/** WebSocket URL schemes, and the HTTP ones a WebSocket URL may be written with (`http:` is `ws:`). */
const SOCKET_SCHEMES: Record<string, string> = {
  "ws:": "ws:",
  "wss:": "wss:",
  "http:": "ws:",
  "https:": "wss:",
};

/**
 * The socket's URL: `url` resolved against the page's (a page may give a path such as `/rpc`, as to a
 * `WebSocket`), with `http(s):` as `ws(s):`; null when it is not such a URL.
 */
function socketUrl(url: string): URL | null {
  let target: URL;
  try {
    target = new URL(url, pageHref() ?? undefined);
  } catch {
    return null;
  }
  const scheme = SOCKET_SCHEMES[target.protocol];
  if (scheme === undefined) return null;
  target.protocol = scheme;
  return target;
}

/**
 * Why a connection closed before it opened, as far as can be told: a WebSocket API gives no reason for a
 * refused handshake (a browser says 1006, the same as for a port nobody listens on), so the detail names what
 * to check.
 */
function refusedDetail(code: number, reason: string): string {
  const origin = pageOrigin();
  const allow = origin === null
    ? "a browser page's origin must be allowed ('oam serve --allow-origin <the page's origin>')"
    : `this page's origin must be allowed ('oam serve --allow-origin ${origin}'; http://localhost and ` +
      "http://127.0.0.1 are different origins)";
  const said = reason.replace(/\.+$/, ""); // no full stop before the semicolon
  return `the connection closed before it opened (code ${code}${said ? `: ${said}` : ""}; the WebSocket ` +
    `API does not say why). Either no server listens there, or the server refused the connection: ${allow}, ` +
    "and a server with an API key needs the apiKey option. The server's log names the reason";
}

/**
 * A transport to a bridge served over WebSocket. `onmessage` gets each message in the order the bridge sent
 * it (never from inside `send`); `onclose` is called exactly once, with the reason when the connection ended
 * without `close()`; a frame that is not JSON goes to `onerror` and the transport stays open.
 *
 * @example With the typed client (a bridge served by `oam serve` on its `/rpc` endpoint)
 * ```ts
 * import { Bridge, WebSocketTransport } from "@open-apple-models/bridge";
 * async function pingServer(url = "ws://127.0.0.1:1976/rpc"): Promise<void> {
 *   await using bridge = await Bridge.connect(new WebSocketTransport(url));
 *   await bridge.ping();
 * }
 * ```
 *
 * @example Raw messages
 * ```ts
 * import { WebSocketTransport } from "@open-apple-models/bridge";
 * async function pingRaw(url = "ws://127.0.0.1:1976/rpc"): Promise<void> {
 *   const transport = new WebSocketTransport(url);
 *   const received: unknown[] = [];
 *   transport.onmessage = (message) => received.push(message);
 *   await transport.start();
 *   await transport.send({ jsonrpc: "2.0", id: 1, method: "ping" });
 *   await transport.close();
 * }
 * ```
 */
export class WebSocketTransport implements Transport {
  /** Receives each incoming message (parsed JSON). */
  onmessage?: (message: JsonValue) => void;
  /**
   * Called once when the connection has closed; `reason` says why when it was not `close()`, and `close`
   * gives the socket's close code and reason once it had opened.
   */
  onclose?: (reason?: Error, close?: TransportClose) => void;
  /** Called for a frame that is not JSON (the connection stays open). */
  onerror?: (error: Error) => void;
  /** The endpoint, without the API key. */
  readonly url: string;
  readonly #options: WebSocketTransportOptions;
  #socket: WebSocket | null = null;
  #closing = false;
  #closed = false;
  #resolveClosed!: () => void;
  readonly #closedPromise: Promise<void> = new Promise((resolve) => this.#resolveClosed = resolve);

  /**
   * A transport to `url` (`ws://host:port/rpc`; `http(s):` counts as `ws(s):`, and in a page a path such as
   * `/rpc` is resolved against the page's address). Nothing connects before `start()`.
   */
  constructor(url: string | URL, options: WebSocketTransportOptions = {}) {
    this.url = String(url);
    this.#options = options;
  }

  /** Connects. Rejects with `-32023 shut_down` when the connection cannot be opened. */
  start(): Promise<void> {
    if (this.#socket || this.#closed) {
      return Promise.reject(new Error("The WebSocket transport was already started."));
    }
    const target = socketUrl(this.url);
    if (target === null) {
      this.#finish();
      return Promise.reject(
        this.#cannotConnect(
          "this is not a WebSocket URL. Write the endpoint as oam serve's banner prints it: " +
            "ws://<host>:<port>/rpc (in a page, a path such as /rpc is resolved against the page's address)",
        ),
      );
    }
    if (this.#options.apiKey !== undefined) target.searchParams.set("api_key", this.#options.apiKey);
    const Socket = this.#options.webSocket ?? WebSocket;
    let socket: WebSocket;
    try {
      socket = new Socket(target.href);
    } catch (error) {
      this.#finish();
      return Promise.reject(this.#cannotConnect(error instanceof Error ? error.message : String(error)));
    }
    this.#socket = socket;
    return new Promise<void>((resolve, reject) => {
      let opened = false;
      socket.addEventListener("open", () => {
        opened = true;
        resolve();
      });
      socket.addEventListener("message", (event) => this.#receive(event.data));
      socket.addEventListener("close", (event) => {
        if (!opened) {
          reject(this.#cannotConnect(refusedDetail(event.code, event.reason)));
          this.#finish();
          return;
        }
        // No close frame came: browsers say 1006, Deno 0.
        const network = event.code === CLOSE_ABNORMAL || event.code === 0;
        const code = network ? CLOSE_ABNORMAL : event.code;
        const close: TransportClose = { code, reason: event.reason, network };
        if (this.#closing) {
          this.#finish(undefined, close);
          return;
        }
        // The reason's own full stop would end up inside the brackets, before the sentence's: "(…: stopping.)."
        const reason = event.reason.replace(/\.+$/, "");
        const detail = `code ${code}${reason ? `: ${reason}` : ""}`;
        this.#finish(
          BridgeError.of(
            "shut_down",
            network
              ? `The connection to the bridge broke (${detail}).`
              : `The bridge closed the connection (${detail}).`,
          ),
          close,
        );
      });
    });
  }

  /** Sends one message as a text frame. Rejects when the connection is not open. */
  send(message: object): Promise<void> {
    const socket = this.#socket;
    if (!socket || this.#closing || this.#closed || socket.readyState !== OPEN) {
      return Promise.reject(
        BridgeError.of("shut_down", "The WebSocket connection to the bridge is not open."),
      );
    }
    try {
      const text = encodeClientMessage(message);
      const limit = this.#options.maxMessageBytes ?? MAX_MESSAGE_BYTES;
      // Three UTF-8 bytes per UTF-16 unit at most: only a long text needs counting.
      if (text.length * 3 > limit) {
        const bytes = new TextEncoder().encode(text).length;
        if (bytes > limit) {
          const method = (message as { method?: unknown }).method;
          throw messageTooLong({
            bytes,
            limit,
            option: "maxMessageBytes",
            ...(typeof method === "string" ? { method } : {}),
          });
        }
      }
      socket.send(text);
    } catch (error) {
      return Promise.reject(error);
    }
    return Promise.resolve();
  }

  /** Closes the connection (the bridge cancels this connection's work); resolves once `onclose` ran. */
  close(): Promise<void> {
    if (this.#closed) return Promise.resolve();
    this.#closing = true;
    const socket = this.#socket;
    if (!socket) {
      this.#finish();
      return Promise.resolve();
    }
    try {
      socket.close(1000, "The client closed the connection.");
    } catch {
      // already closing
    }
    return this.#closedPromise;
  }

  #receive(data: unknown): void {
    if (typeof data !== "string") {
      this.onerror?.(new Error("The bridge sent a binary frame; messages are text frames."));
      return;
    }
    let message: JsonValue;
    try {
      message = JSON.parse(data);
    } catch (error) {
      this.onerror?.(new Error(`The bridge sent a frame that is not JSON: ${(error as Error).message}`));
      return;
    }
    try {
      this.onmessage?.(message);
    } catch (error) {
      this.onerror?.(error instanceof Error ? error : new Error(String(error)));
    }
  }

  #cannotConnect(detail: string): BridgeError {
    return BridgeError.of("shut_down", `Cannot connect to the bridge at ${this.url}: ${detail}.`);
  }

  #finish(reason?: Error, close?: TransportClose): void {
    if (this.#closed) return;
    this.#closed = true;
    this.onclose?.(reason, close);
    this.#resolveClosed();
  }
}
