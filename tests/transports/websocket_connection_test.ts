/**
 * serveWebSocket against a scripted socket, for what a real client cannot steer from its side: a client that
 * stops reading (output piling up past the limit), a socket that is closing or whose `send` fails, socket
 * errors, and a server stop racing the client's own close or a client that never completes the close
 * handshake. The engine is a real BridgeEngine; every frame it sends and every close is asserted whole.
 */
import assert from "node:assert/strict";
import { BridgeEngine } from "../../src/composition.ts";
import type { ModelSpec } from "../../src/models/registry.ts";
import type { JsonObject } from "../../src/protocol/json.ts";
import {
  CLOSE_GOING_AWAY,
  CLOSE_NOT_READING,
  serveWebSocket,
  type WebSocketConnection,
  type WebSocketLike,
  type WebSocketServeOptions,
} from "../../src/transports/websocket.ts";
import type { Logger } from "../../src/util/logger.ts";
import { HoldingModel, within } from "../serve/serve_fixture.ts";

type Listener = (event: Event) => void;

/** A WebSocket whose far end the test plays: frames it is sent, closes, and the events it dispatches. */
class ScriptedSocket implements WebSocketLike {
  readyState = 1;
  bufferedAmount = 0;
  /** Frames sent to the client, parsed. */
  readonly sent: JsonObject[] = [];
  /** `close(code, reason)` calls, in order. */
  readonly closes: [number | undefined, string | undefined][] = [];
  /** Whether sent frames stay queued (a client that does not read). */
  reading = true;
  /** Whether the client completes a close handshake the server starts. */
  answersClose = true;
  /** The next `send` fails with this error. */
  failNextSend: Error | null = null;
  readonly #listeners = new Map<string, Listener[]>();

  send(data: string): void {
    // As Deno's WebSocket: sending on a socket that is not open throws.
    if (this.readyState !== 1) throw new DOMException("readyState not OPEN", "InvalidStateError");
    const failure = this.failNextSend;
    this.failNextSend = null;
    if (failure) throw failure;
    this.sent.push(JSON.parse(data));
    if (!this.reading) this.bufferedAmount += new TextEncoder().encode(data).length;
  }

  close(code?: number, reason?: string): void {
    if (this.readyState === 3) throw new DOMException("The connection is closed.", "InvalidStateError");
    this.closes.push([code, reason]);
    this.readyState = 2;
    if (this.answersClose) queueMicrotask(() => this.clientClosed());
  }

  addEventListener(type: "message", listener: (event: MessageEvent) => void): void;
  addEventListener(type: "close" | "error", listener: Listener): void;
  addEventListener(type: string, listener: (event: MessageEvent) => void): void {
    this.#listeners.set(type, [...this.#listeners.get(type) ?? [], listener as Listener]);
  }

  /** The client sends one frame. */
  frame(data: string | ArrayBuffer): void {
    this.#dispatch(new MessageEvent("message", { data }));
  }

  /** The client sends a request. */
  request(message: JsonObject): void {
    this.frame(JSON.stringify({ jsonrpc: "2.0", ...message }));
  }

  /** The connection is closed (the client closed it, or completed the server's close). */
  clientClosed(code = 1000): void {
    if (this.readyState === 3) return;
    this.readyState = 3;
    this.#dispatch(new CloseEvent("close", { code }));
  }

  /** The socket reports an error. */
  error(message?: string): void {
    this.#dispatch(message === undefined ? new Event("error") : new ErrorEvent("error", { message }));
  }

  #dispatch(event: Event): void {
    for (const listener of this.#listeners.get(event.type) ?? []) listener(event);
  }
}

/** A logger that keeps `level: message` lines. */
function recordingLogger(): Logger & { lines: string[] } {
  const lines: string[] = [];
  const at = (level: string) => (message: string) => void lines.push(`${level}: ${message}`);
  return { lines, debug: at("debug"), info: at("info"), warning: at("warning"), error: at("error") };
}

interface Served {
  socket: ScriptedSocket;
  connection: WebSocketConnection;
  logger: ReturnType<typeof recordingLogger>;
  holding: HoldingModel;
  /** How often `onClose` ran. */
  onCloseCalls: () => number;
}

function served(options: WebSocketServeOptions = {}): Served {
  const socket = new ScriptedSocket();
  const logger = recordingLogger();
  const holding = new HoldingModel();
  let onCloseCalls = 0;
  const connection = serveWebSocket(socket, {
    logger,
    ...options,
    onClose: () => onCloseCalls++,
    makeEngine: (send, onShutdown) =>
      new BridgeEngine({
        onShutdown,
        modelFactory: (spec: ModelSpec) => spec.type === "holding" ? holding : undefined,
      }, send),
  });
  return { socket, connection, logger, holding, onCloseCalls: () => onCloseCalls };
}

const PONG = (id: number) => ({ jsonrpc: "2.0", id, result: {} });

Deno.test("a client that stops reading is closed with 1008 once its unread output passes the limit", async () => {
  // Each pong is 36 bytes: the first fills the allowance exactly, the second passes it.
  const { socket, connection, logger, onCloseCalls } = served({ maxBufferedOutputBytes: 36 });
  socket.reading = false;
  socket.request({ id: 1, method: "ping" });
  assert.deepEqual([socket.sent, socket.closes], [[PONG(1)], []]);
  socket.request({ id: 2, method: "ping" });
  await within(connection.closed, "the connection to end");
  assert.deepEqual(socket.sent, [PONG(1), PONG(2)]);
  assert.deepEqual(socket.closes, [[CLOSE_NOT_READING, "The client is not reading its messages."]]);
  assert.deepEqual(logger.lines, [
    "warning: Closing a WebSocket connection: more than 36 bytes of output are waiting; the client is not reading.",
  ]);
  assert.equal(onCloseCalls(), 1);
  // Frames still arriving after the end are not read.
  socket.request({ id: 3, method: "ping" });
  assert.deepEqual(socket.sent, [PONG(1), PONG(2)]);
});

Deno.test("closing the slow client cancels its running turn", async () => {
  const { socket, connection, holding } = served({ maxBufferedOutputBytes: 100 });
  socket.reading = false;
  socket.request({ id: 1, method: "session/create", params: { session: "a", model: { type: "holding" } } });
  socket.request({ id: 2, method: "session/respond", params: { session: "a", prompt: "x", stream: true } });
  await holding.whenStarted(1);
  await holding.whenAborted(1);
  await within(connection.closed, "the connection to end");
  assert.deepEqual(socket.closes, [[CLOSE_NOT_READING, "The client is not reading its messages."]]);
  assert.deepEqual(socket.sent[0], { jsonrpc: "2.0", id: 1, result: { session: "a", warnings: [] } });
  assert.ok(socket.sent.every((m) => m.id !== 2), JSON.stringify(socket.sent));
});

Deno.test("output for a socket that is closing is dropped without an error", async () => {
  const { socket, logger, connection } = served();
  socket.answersClose = false;
  socket.readyState = 2; // the client started the close handshake
  socket.request({ id: 1, method: "ping" });
  assert.deepEqual([socket.sent, logger.lines], [[], []]);
  socket.clientClosed();
  await within(connection.closed, "the connection to end");
});

Deno.test("a failed send is logged and the connection keeps serving", async () => {
  const { socket, logger, connection } = served();
  socket.failNextSend = new Error("broken pipe");
  socket.request({ id: 1, method: "ping" });
  socket.request({ id: 2, method: "ping" });
  assert.deepEqual(socket.sent, [PONG(2)]);
  assert.deepEqual(logger.lines, ["warning: Sending on a WebSocket failed: Error: broken pipe"]);
  socket.clientClosed();
  await within(connection.closed, "the connection to end");
});

Deno.test("socket errors are logged at debug level, with their message when they have one", async () => {
  const { socket, logger, connection } = served();
  socket.error("connection reset");
  socket.error();
  assert.deepEqual(logger.lines, ["debug: WebSocket error: connection reset.", "debug: WebSocket error."]);
  socket.clientClosed();
  await within(connection.closed, "the connection to end");
});

Deno.test("a client that goes away is logged: at info when idle, a warning with the count mid-turn", async () => {
  const idle = served({ name: "/rpc connection 7" });
  idle.socket.request({ id: 1, method: "ping" });
  idle.socket.clientClosed();
  await within(idle.connection.closed, "the idle connection to end");
  assert.deepEqual(idle.logger.lines, [
    "info: /rpc connection 7 ended: the client closed it (close code 1000).",
  ]);

  const busy = served();
  busy.socket.request({
    id: 1,
    method: "session/create",
    params: { session: "a", model: { type: "holding" } },
  });
  busy.socket.request({ id: 2, method: "session/respond", params: { session: "a", prompt: "x" } });
  await busy.holding.whenStarted(1);
  busy.socket.clientClosed(0);
  await within(busy.connection.closed, "the busy connection to end");
  assert.deepEqual(busy.logger.lines, [
    "warning: WebSocket connection dropped in the middle of its work: the connection broke (no close from the " +
    "client); 1 request cancelled.",
  ]);
});

Deno.test("a shutdown notification closes the socket with 1000 and sends nothing", async () => {
  const { socket, connection, logger, onCloseCalls } = served({ name: "/rpc connection 3" });
  socket.frame(JSON.stringify({ jsonrpc: "2.0", method: "shutdown" }));
  await within(connection.closed, "the connection to end");
  assert.deepEqual([socket.sent, socket.closes], [[], [[1000, "The bridge has shut down."]]]);
  assert.equal(onCloseCalls(), 1);
  // The log's "opened" line gets its end, as when the client closes.
  assert.deepEqual(logger.lines, ["info: /rpc connection 3 ended: the client sent shutdown."]);
});

Deno.test("a server stop when the client never completes the close handshake still ends the connection", async () => {
  const { socket, connection, holding, onCloseCalls } = served();
  socket.answersClose = false;
  socket.request({ id: 1, method: "session/create", params: { session: "a", model: { type: "holding" } } });
  socket.request({ id: 2, method: "session/respond", params: { session: "a", prompt: "x" } });
  await holding.whenStarted(1);
  await within(connection.shutdown(), "the shutdown");
  await within(connection.closed, "the connection to end");
  assert.deepEqual(socket.sent, [
    { jsonrpc: "2.0", id: 1, result: { session: "a", warnings: [] } },
    {
      jsonrpc: "2.0",
      id: 2,
      error: { code: -32009, message: "The turn was cancelled.", data: { code: "cancelled" } },
    },
  ]);
  assert.deepEqual(socket.closes, [[CLOSE_GOING_AWAY, "The server is stopping."]]);
  assert.equal(onCloseCalls(), 1);
  // The handshake completing late changes nothing.
  socket.clientClosed();
  assert.equal(onCloseCalls(), 1);
});

Deno.test("a server stop after the client closed neither fails nor ends the connection twice", async () => {
  const { socket, connection, onCloseCalls } = served();
  socket.request({ id: 1, method: "ping" });
  socket.clientClosed();
  await within(connection.closed, "the connection to end");
  await within(connection.shutdown(), "the shutdown");
  await within(connection.shutdown(), "a second shutdown");
  assert.deepEqual([socket.sent, socket.closes], [[PONG(1)], []]);
  assert.equal(onCloseCalls(), 1);
});
