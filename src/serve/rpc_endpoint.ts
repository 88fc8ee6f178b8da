/**
 * The `/rpc` endpoint: the bridge protocol over WebSocket, one BridgeEngine per connection (see
 * src/transports/websocket.ts), with a bound on open connections.
 * @module
 */
import { BridgeEngine } from "../composition.ts";
import type { Logger } from "../util/logger.ts";
import { serveWebSocket, type WebSocketConnection } from "../transports/websocket.ts";
import { OpenAIError } from "./openai_error.ts";
import type { RpcSettings } from "./server_config.ts";

/**
 * Upgrades requests to bridge connections and keeps track of them.
 *
 * @example
 * ```ts
 * import { RpcEndpoint } from "./rpc_endpoint.ts";
 * import { silentLogger } from "../util/logger.ts";
 * const rpc = new RpcEndpoint({ engine: {}, maxConnections: 8, maxMessageBytes: 1 << 20 }, silentLogger);
 * const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (request) => rpc.upgrade(request));
 * await server.shutdown();
 * ```
 */
export class RpcEndpoint {
  readonly #settings: RpcSettings;
  readonly #logger: Logger;
  readonly #connections = new Set<WebSocketConnection>();
  /** Connections opened so far (each is named by its number in the log). */
  #opened = 0;

  /** An endpoint serving connections with `settings`. */
  constructor(settings: RpcSettings, logger: Logger) {
    this.#settings = settings;
    this.#logger = logger;
  }

  /** Open connections. */
  get connections(): number {
    return this.#connections.size;
  }

  /** Upgrades `request` (a GET with `Upgrade: websocket`) to a bridge connection. */
  upgrade(request: Request): Response {
    if ((request.headers.get("upgrade") ?? "").toLowerCase() !== "websocket") {
      throw new OpenAIError({
        status: 426,
        message:
          "The /rpc endpoint speaks the bridge protocol over WebSocket: send a WebSocket upgrade request.",
        type: "invalid_request_error",
        code: "upgrade_required",
      });
    }
    if (this.#connections.size >= this.#settings.maxConnections) {
      throw new OpenAIError({
        status: 503,
        message: `Too many open bridge connections (${this.#settings.maxConnections}): each one (a game ` +
          "room, a browser tab) keeps its own. Retry once one has closed, or start the server with a higher " +
          "--max-connections.",
        type: "server_error",
        code: "too_many_connections",
        retryAfter: 1,
      });
    }
    const { socket, response } = Deno.upgradeWebSocket(request);
    const name = `/rpc connection ${++this.#opened}`;
    const connection: WebSocketConnection = serveWebSocket(socket, {
      makeEngine: (send, onShutdown) => new BridgeEngine({ ...this.#settings.engine, onShutdown }, send),
      maxMessageBytes: this.#settings.maxMessageBytes,
      logger: this.#logger,
      onClose: () => this.#connections.delete(connection),
      name,
    });
    this.#connections.add(connection);
    this.#logger.info(`${name} opened (${this.#connections.size} open).`);
    return response;
  }

  /** Shuts every connection down (each request read gets its response, then the socket closes). */
  async stop(): Promise<void> {
    await Promise.all([...this.#connections].map((c) => c.shutdown()));
  }
}
