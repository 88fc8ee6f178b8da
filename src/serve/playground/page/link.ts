/// <reference lib="dom" />
/**
 * The page's connection to the bridge: the typed client's `Connection` (peer, client tools, world
 * subscriptions) over its `WebSocketTransport` to this server's `/rpc`, wrapped so the raw log sees every
 * message. A closed socket is reported once; `connect()` opens a fresh connection (the bridge keeps one
 * engine per connection, so NPCs and worlds of the old one are gone).
 * @module
 */
import { Connection } from "../../../client/connection.ts";
import type { InitializeResult, ModelAvailability } from "../../../client/types.ts";
import { WebSocketTransport } from "../../../client/websocket_transport.ts";
import { BridgeError } from "../../../protocol/errors.ts";
import { PROTOCOL_VERSION } from "../../../protocol/version.ts";
import { LoggingTransport, type RpcEntry } from "./rpc_log.ts";

/**
 * The connection's state: `waiting` is a socket already open whose `initialize` has no answer yet (the bridge
 * answers it once its model has said whether it can run: a GGUF model is loaded first, seconds or more).
 */
export type LinkState = "connecting" | "waiting" | "open" | "closed";

/** What the page knows about the server (`/playground/info.json`). */
export interface ServerInfo {
  /** The bridge's version. */
  version: string;
  /** What `"system"` means on this server; `script`: a scripted model's file, as it was named. */
  model: { name: string; label: string; script?: string };
}

/** Callbacks of a {@link Link}. */
export interface LinkEvents {
  /** The state changed; `detail` says why a connection closed or failed. */
  onState(state: LinkState, detail?: string): void;
  /** A message crossed the wire. */
  onEntry(entry: RpcEntry): void;
  /** A result carried warnings. */
  onWarning(warning: string, method: string): void;
  /** A problem that did not close the connection (a listener threw, an unreadable message). */
  onProblem(error: Error): void;
}

/** The bridge connection of the page. */
/** The WebSocket close code of a server that is stopping. */
const CLOSE_SERVER_STOPPING = 1001;

export class Link {
  /** The live connection, or null while there is none. */
  connection: Connection | null = null;
  /** The `initialize` result of the live connection. */
  server: InitializeResult | null = null;
  /** The current state. */
  state: LinkState = "closed";
  /** Counts connections made (a new one invalidates NPC and world handles of the old). */
  generation = 0;
  /**
   * The last connection closed because the server is stopping (close code 1001: Ctrl-C, a restart), which
   * cancels every turn just before it closes; false while connected, or when it closed another way.
   */
  serverStopped = false;
  readonly #url: string;
  readonly #events: LinkEvents;
  /** A connection closed, or could not be made, and none has been open since. */
  #lost = false;
  /** Who waits in {@link opened} for the connection being made. */
  #waiters: { resolve(): void; reject(error: Error): void }[] = [];

  /** A link to `url` (`ws://host:port/rpc`). */
  constructor(url: string, events: LinkEvents) {
    this.#url = url;
    this.#events = events;
  }

  /** The connection, or a clear error when the bridge is not connected. */
  require(): Connection {
    if (this.pending) {
      throw BridgeError.of(
        "shut_down",
        this.state === "waiting"
          ? "The bridge has not answered yet (it may be loading its model): try again once the top bar says " +
            "Connected to the bridge."
          : "The page is still connecting to the bridge: try again once the top bar says Connected to the bridge.",
      );
    }
    if (this.connection === null || this.state !== "open") {
      throw BridgeError.of(
        "shut_down",
        "The page is not connected to the bridge. Use Reconnect (is `oam playground` still running?).",
      );
    }
    return this.connection;
  }

  /**
   * A connection is being made: `connecting`, `waiting`, or the page's first one not asked for yet (the page
   * reads the server's info first).
   */
  get pending(): boolean {
    return this.state === "connecting" || this.state === "waiting" || this.generation === 0;
  }

  /**
   * The bridge is not there: a connection closed (or could not be made) and none has been answered since,
   * though the page may be trying again (`connecting`); false while the socket is open (`waiting` for the
   * bridge to answer, which may be loading its model) and before the page's first connection failed.
   */
  get gone(): boolean {
    return this.#lost && this.state !== "waiting" && this.state !== "open";
  }

  /**
   * Resolves once the connection being made is open (at once when it is); rejects when it fails, or when
   * there is none being made (the error says what {@link require} says).
   *
   * For example (not a doc test: this module needs the DOM):
   *   if (link.state === "waiting") await link.opened(); // the bridge is loading its model
   */
  opened(): Promise<void> {
    if (this.state === "open") return Promise.resolve();
    if (!this.pending) {
      try {
        this.require();
      } catch (error) {
        return Promise.reject(error);
      }
    }
    return new Promise((resolve, reject) => this.#waiters.push({ resolve, reject }));
  }

  /** Opens a new connection and sends `initialize`. */
  async connect(): Promise<void> {
    if (this.state === "connecting" || this.state === "waiting") return;
    this.serverStopped = false;
    this.#set("connecting");
    const generation = ++this.generation;
    const transport = new LoggingTransport(new WebSocketTransport(this.#url), (e) => this.#events.onEntry(e));
    const connection = new Connection(transport, {
      onWarning: (warning, method) => this.#events.onWarning(warning, method),
      onError: (error) => this.#events.onProblem(error),
    });
    // Until it is open, a failure is the catch's below (one report, with the reason that says what to do).
    let opened = false;
    connection.peer.onclose = (reason) => {
      if (this.generation !== generation || !opened) return;
      this.connection = null;
      this.server = null;
      this.serverStopped = connection.peer.closeInfo?.code === CLOSE_SERVER_STOPPING;
      this.#set("closed", reason?.message ?? "The connection was closed.");
    };
    try {
      await connection.peer.start().catch((error) => {
        // The page came from this server, so its origin and key are right: the server is not there.
        throw new Error(
          `Could not reach the playground's server at ${
            new URL(this.#url).host
          }: is \`oam playground\` still ` +
            "running? Start it again on the same port.",
          { cause: error },
        );
      });
      if (this.generation !== generation) return;
      this.#set("waiting");
      const server = await connection.request("initialize", {
        client: { name: "oam playground", version: "1" },
        protocolVersion: PROTOCOL_VERSION,
      });
      if (this.generation !== generation) return;
      this.connection = connection;
      this.server = server;
      opened = true;
      this.#set("open");
    } catch (error) {
      await connection.peer.close().catch(() => {});
      if (this.generation !== generation) return;
      this.connection = null;
      this.#set("closed", error instanceof Error ? error.message : String(error));
    }
  }

  /** The system model's availability now (null when not connected). */
  async availability(): Promise<ModelAvailability | null> {
    const connection = this.connection;
    if (!connection) return null;
    return await connection.request("model/availability", {});
  }

  #set(state: LinkState, detail?: string): void {
    this.state = state;
    if (state === "open") this.#lost = false;
    else if (state === "closed") this.#lost = true;
    this.#events.onState(state, detail);
    if (state !== "open" && state !== "closed") return;
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const waiter of waiters) {
      if (state === "open") waiter.resolve();
      else {waiter.reject(
          new Error(`The page could not connect to the bridge: ${detail ?? "the connection closed"}`),
        );}
    }
  }
}

/** Reads what the server says about itself (its model and version). */
export async function fetchServerInfo(): Promise<ServerInfo | null> {
  try {
    const response = await fetch("/playground/info.json", { cache: "no-store" });
    if (!response.ok) return null;
    return await response.json() as ServerInfo;
  } catch {
    return null;
  }
}
