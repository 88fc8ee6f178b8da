/**
 * What is particular to the bridge over WebSocket (the shared protocol cases run in websocket_wire_test.ts):
 * closing the socket cancels the connection's work, binary and oversized frames are answered, the endpoint's
 * screening (origin, API key, upgrade, connection limit), a server stop, and the client-side
 * WebSocketTransport.
 */
import assert from "node:assert/strict";
import { WebSocketTransport } from "../../src/client/websocket_transport.ts";
import type { ModelSpec } from "../../src/models/registry.ts";
import type { JsonObject, JsonValue } from "../../src/protocol/json.ts";
import type { RpcSettings } from "../../src/serve/server_config.ts";
import { HoldingModel, script, serve, within } from "../serve/serve_fixture.ts";

function rpcWith(holding: HoldingModel, settings: Partial<RpcSettings> = {}): RpcSettings {
  return {
    engine: { modelFactory: (spec: ModelSpec) => spec.type === "holding" ? holding : undefined },
    maxConnections: 64,
    maxMessageBytes: 1 << 20,
    ...settings,
  };
}

/** A raw WebSocket client that collects parsed messages and lets a test wait for the n-th one. */
class Socket {
  readonly messages: JsonObject[] = [];
  readonly closed: Promise<CloseEvent>;
  readonly ws: WebSocket;
  #waiters: Array<() => void> = [];

  private constructor(ws: WebSocket) {
    this.ws = ws;
    this.closed = new Promise((resolve) => ws.addEventListener("close", resolve));
    ws.addEventListener("message", (event) => {
      this.messages.push(JSON.parse(event.data));
      for (const w of this.#waiters.splice(0)) w();
    });
  }

  static async open(url: string): Promise<Socket> {
    const socket = new Socket(new WebSocket(url));
    await new Promise<void>((resolve, reject) => {
      socket.ws.addEventListener("open", () => resolve());
      socket.ws.addEventListener("error", () => reject(new Error(`could not open ${url}`)));
    });
    return socket;
  }

  send(message: JsonValue): void {
    this.ws.send(typeof message === "string" ? message : JSON.stringify(message));
  }

  nth(n: number): Promise<JsonObject> {
    return within(
      (async () => {
        while (this.messages.length < n) await new Promise<void>((resolve) => this.#waiters.push(resolve));
        return this.messages[n - 1];
      })(),
      `message ${n}`,
    );
  }
}

Deno.test("closing the socket cancels the connection's running turn and frees the connection", async () => {
  const holding = new HoldingModel();
  await using s = await serve(script(), { rpc: rpcWith(holding) });
  const socket = await Socket.open(`ws://127.0.0.1:${s.server.port}/rpc`);
  socket.send({
    jsonrpc: "2.0",
    id: 1,
    method: "session/create",
    params: { session: "a", model: { type: "holding" } },
  });
  socket.send({ jsonrpc: "2.0", id: 2, method: "session/respond", params: { session: "a", prompt: "x" } });
  await holding.whenStarted(1);
  assert.equal(s.server.rpcConnections, 1);
  socket.ws.close();
  await holding.whenAborted(1);
  assert.equal(s.server.rpcConnections, 0);
  await socket.closed;
  assert.deepEqual(socket.messages, [{ jsonrpc: "2.0", id: 1, result: { session: "a", warnings: [] } }]);
});

/** The `rpc_connections` that `GET /health` reports. */
async function healthRpcConnections(base: string): Promise<number> {
  const response = await fetch(`${base}/health`);
  return (await response.json()).rpc_connections;
}

Deno.test("/health counts the open /rpc connections as sockets open and close", async () => {
  const holding = new HoldingModel();
  await using s = await serve(script(), { rpc: rpcWith(holding) });
  assert.equal(await healthRpcConnections(s.base), 0);
  const url = `ws://127.0.0.1:${s.server.port}/rpc`;
  const sockets = [await Socket.open(url), await Socket.open(url)];
  // Each socket runs a turn, so that its close is seen on the server when the turn is cancelled.
  for (const [i, socket] of sockets.entries()) {
    socket.send({
      jsonrpc: "2.0",
      id: 1,
      method: "session/create",
      params: { session: "a", model: { type: "holding" } },
    });
    socket.send({ jsonrpc: "2.0", id: 2, method: "session/respond", params: { session: "a", prompt: "x" } });
    await holding.whenStarted(i + 1);
  }
  assert.equal(await healthRpcConnections(s.base), 2);
  sockets[0].ws.close();
  await holding.whenAborted(1);
  assert.equal(await healthRpcConnections(s.base), 1);
  sockets[1].ws.close();
  await holding.whenAborted(2);
  assert.equal(await healthRpcConnections(s.base), 0);
  await Promise.all(sockets.map((socket) => socket.closed));
});

Deno.test("a client that drops mid-turn is logged with its connection and the requests cancelled", async () => {
  const holding = new HoldingModel();
  const lines: string[] = [];
  const at = (level: string) => (message: string) => {
    if (message.startsWith("/rpc connection")) lines.push(`${level}: ${message}`);
  };
  const logger = { debug: at("debug"), info: at("info"), warning: at("warning"), error: at("error") };
  await using s = await serve(script(), { rpc: rpcWith(holding), logger });
  const url = `ws://127.0.0.1:${s.server.port}/rpc`;
  const idle = await Socket.open(url);
  const busy = await Socket.open(url);
  busy.send({
    jsonrpc: "2.0",
    id: 1,
    method: "session/create",
    params: { session: "a", model: { type: "holding" } },
  });
  for (const id of [2, 3]) {
    busy.send({ jsonrpc: "2.0", id, method: "session/respond", params: { session: "a", prompt: "x" } });
  }
  await holding.whenStarted(1);
  busy.ws.close();
  await holding.whenAborted(1);
  await busy.closed;
  // A server stop closes the idle connection: not a client that went away.
  await s.server.stop();
  await idle.closed;
  assert.deepEqual(lines, [
    "info: /rpc connection 1 opened (1 open).",
    "info: /rpc connection 2 opened (2 open).",
    "warning: /rpc connection 2 dropped in the middle of its work: the client closed it (close code 1005); " +
    "2 requests cancelled.",
  ]);
});

Deno.test("binary and oversized frames are answered with -32600 and the connection keeps serving", async () => {
  await using s = await serve(script(), { rpc: rpcWith(new HoldingModel(), { maxMessageBytes: 1024 }) });
  const socket = await Socket.open(`ws://127.0.0.1:${s.server.port}/rpc`);
  socket.ws.send(new Uint8Array([123, 125]));
  socket.send(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping", params: { pad: "x".repeat(2000) } }));
  socket.send({ jsonrpc: "2.0", id: 2, method: "ping" });
  await socket.nth(3);
  assert.deepEqual(socket.messages, [
    {
      jsonrpc: "2.0",
      id: null,
      error: {
        code: -32600,
        message: "Binary frames are not supported: send each JSON-RPC message as one text frame.",
        data: { code: "invalid_message" },
      },
    },
    {
      jsonrpc: "2.0",
      id: null,
      error: {
        code: -32600,
        message: "The message is longer than the limit of 1024 bytes.",
        data: { code: "invalid_message", limit: 1024 },
      },
    },
    { jsonrpc: "2.0", id: 2, result: {} },
  ]);
  socket.ws.close();
  await socket.closed;
});

Deno.test("the message limit counts UTF-8 bytes and includes the limit itself", async () => {
  await using s = await serve(script(), { rpc: rpcWith(new HoldingModel(), { maxMessageBytes: 1024 }) });
  const socket = await Socket.open(`ws://127.0.0.1:${s.server.port}/rpc`);
  // A ping of exactly `bytes` UTF-8 bytes padded with `unit` (é is 2 bytes, so fewer characters than bytes).
  const ping = (id: number, bytes: number, unit: string) => {
    const head = `{"jsonrpc":"2.0","id":${id},"method":"ping","params":{"pad":"`;
    const size = (text: string) => new TextEncoder().encode(text).length;
    let pad = unit.repeat(Math.floor((bytes - size(head) - 3) / size(unit)));
    while (size(head + pad) + 3 < bytes) pad += "x";
    const text = `${head}${pad}"}}`;
    assert.equal(size(text), bytes);
    return text;
  };
  socket.send(ping(1, 1024, "x"));
  socket.send(ping(2, 1025, "x"));
  socket.send(ping(3, 1024, "é"));
  socket.send(ping(4, 1025, "é"));
  await socket.nth(4);
  const tooLong = {
    jsonrpc: "2.0",
    id: null,
    error: {
      code: -32600,
      message: "The message is longer than the limit of 1024 bytes.",
      data: { code: "invalid_message", limit: 1024 },
    },
  };
  assert.deepEqual(socket.messages, [
    { jsonrpc: "2.0", id: 1, result: {} },
    tooLong,
    { jsonrpc: "2.0", id: 3, result: {} },
    tooLong,
  ]);
  socket.ws.close();
  await socket.closed;
});

Deno.test("one message per text frame: two in a frame are a parse error, blank frames are skipped", async () => {
  await using s = await serve(script(), { rpc: rpcWith(new HoldingModel()) });
  const socket = await Socket.open(`ws://127.0.0.1:${s.server.port}/rpc`);
  const ping = (id: number) => JSON.stringify({ jsonrpc: "2.0", id, method: "ping" });
  socket.send(`${ping(1)}\n${ping(2)}`);
  socket.send("");
  socket.send(" \t ");
  socket.send(`${ping(3)}\r\n`);
  socket.send(ping(4));
  // A newline inside one message is only whitespace.
  socket.send('{"jsonrpc": "2.0",\n "id": 5,\n "method": "ping"}');
  await socket.nth(4);
  assert.deepEqual(socket.messages, [
    {
      jsonrpc: "2.0",
      id: null,
      error: {
        code: -32700,
        message:
          "Invalid JSON: this text frame holds 2 lines. Over WebSocket each JSON-RPC message is a text frame " +
          "of its own; a newline does not separate messages.",
        data: { code: "parse_error" },
      },
    },
    { jsonrpc: "2.0", id: 3, result: {} },
    { jsonrpc: "2.0", id: 4, result: {} },
    { jsonrpc: "2.0", id: 5, result: {} },
  ]);
  socket.ws.close();
  await socket.closed;
});

Deno.test("a batch (a JSON array) is -32600 with id null and says to send one message per WebSocket message", async () => {
  await using s = await serve(script(), { rpc: rpcWith(new HoldingModel()) });
  const socket = await Socket.open(`ws://127.0.0.1:${s.server.port}/rpc`);
  socket.send('[{"jsonrpc":"2.0","id":1,"method":"ping"}]');
  socket.send(" [] ");
  socket.send("\uFEFF[1, 2]");
  // Not JSON: the parse error, as for any frame that is not JSON.
  socket.send("[1,");
  socket.send({ jsonrpc: "2.0", id: 2, method: "ping" });
  await socket.nth(5);
  const batch = {
    jsonrpc: "2.0",
    id: null,
    error: {
      code: -32600,
      message: "Batch requests are not supported; send each message as a WebSocket message of its own.",
      data: { code: "invalid_message" },
    },
  };
  assert.deepEqual(socket.messages.slice(0, 3), [batch, batch, batch]);
  assert.deepEqual(
    [socket.messages[3].id, (socket.messages[3].error as JsonObject).code, socket.messages[4]],
    [null, -32700, { jsonrpc: "2.0", id: 2, result: {} }],
  );
  socket.ws.close();
  await socket.closed;
});

Deno.test("the /rpc endpoint is screened like the API: origin, API key, upgrade, connection limit, --no-rpc", async () => {
  await using s = await serve(script(), {
    apiKey: "k",
    allowedOrigins: ["http://game.local"],
    rpc: rpcWith(new HoldingModel(), { maxConnections: 1 }),
  });
  const base = `127.0.0.1:${s.server.port}`;
  const get = (headers: Record<string, string>, query = "") =>
    fetch(`http://${base}/rpc${query}`, { headers });
  const evil = await get({ origin: "http://evil.example", authorization: "Bearer k" });
  assert.deepEqual([evil.status, (await evil.json()).error.code], [403, "origin_not_allowed"]);
  const noKey = await get({});
  assert.deepEqual([noKey.status, (await noKey.json()).error.code], [401, "invalid_api_key"]);
  const plain = await get({ authorization: "Bearer k" });
  assert.deepEqual([plain.status, (await plain.json()).error.code], [426, "upgrade_required"]);
  const wrongQuery = await get({}, "?api_key=nope");
  assert.equal(wrongQuery.status, 401);
  await wrongQuery.body?.cancel();
  // A WebSocket with the key in the query (what a browser can do) connects; a second one is over the limit.
  const first = await Socket.open(`ws://${base}/rpc?api_key=k`);
  const second = await Socket.open(`ws://${base}/rpc?api_key=k`).then(() => "open", (e) => e.message);
  assert.match(second, /could not open/);
  first.send({ jsonrpc: "2.0", id: 1, method: "ping" });
  assert.deepEqual(await first.nth(1), { jsonrpc: "2.0", id: 1, result: {} });
  first.ws.close();
  await first.closed;

  await using off = await serve(script(), { rpc: null });
  const none = await fetch(`http://127.0.0.1:${off.server.port}/rpc`);
  assert.deepEqual([none.status, (await none.json()).error.code], [404, "unknown_url"]);
});

Deno.test("a server stop answers the connection's requests with -32009, then closes the socket with 1001", async () => {
  const holding = new HoldingModel();
  const s = await serve(script(), { rpc: rpcWith(holding) });
  const socket = await Socket.open(`ws://127.0.0.1:${s.server.port}/rpc`);
  socket.send({
    jsonrpc: "2.0",
    id: 1,
    method: "session/create",
    params: { session: "a", model: { type: "holding" } },
  });
  socket.send({ jsonrpc: "2.0", id: 2, method: "session/respond", params: { session: "a", prompt: "x" } });
  await holding.whenStarted(1);
  await s.server.stop();
  const close = await socket.closed;
  assert.deepEqual([close.code, close.reason], [1001, "The server is stopping."]);
  assert.deepEqual(socket.messages[1], {
    jsonrpc: "2.0",
    id: 2,
    error: { code: -32009, message: "The turn was cancelled.", data: { code: "cancelled" } },
  });
});

Deno.test("WebSocketTransport: messages in order, a tool/call answered through it, close calls onclose once", async () => {
  await using s = await serve(script(), { apiKey: "k" });
  const transport = new WebSocketTransport(`ws://127.0.0.1:${s.server.port}/rpc`, { apiKey: "k" });
  const received: JsonValue[] = [];
  const closes: Array<Error | undefined> = [];
  let wake = () => {};
  transport.onmessage = (message) => {
    received.push(message);
    wake();
  };
  transport.onclose = (reason) => closes.push(reason);
  const next = async (n: number) => {
    while (received.length < n) await new Promise<void>((resolve) => wake = resolve);
    return received[n - 1] as JsonObject;
  };
  await transport.start();
  await transport.send({
    jsonrpc: "2.0",
    id: 1,
    method: "session/create",
    params: {
      session: "g",
      tools: [{ name: "open_gate", description: "Opens the gate." }],
      model: {
        type: "scripted",
        steps: [{ toolCalls: [{ name: "open_gate" }] }, { template: "Gate: {toolOutput}" }],
      },
    },
  });
  await transport.send({
    jsonrpc: "2.0",
    id: 2,
    method: "session/respond",
    params: { session: "g", prompt: "open" },
  });
  assert.deepEqual(await next(1), { jsonrpc: "2.0", id: 1, result: { session: "g", warnings: [] } });
  const call = await next(2);
  assert.equal(call.method, "tool/call");
  await transport.send({ jsonrpc: "2.0", id: call.id as string, result: { output: "opened" } });
  assert.equal(((await next(3)).result as JsonObject).text, "Gate: opened");
  await transport.close();
  await transport.close();
  assert.deepEqual(closes, [undefined]);
  await assert.rejects(() => transport.send({ jsonrpc: "2.0", id: 3, method: "ping" }), /not open/);
});

Deno.test("WebSocketTransport: a wrong key cannot connect; a shutdown from the bridge closes with a reason", async () => {
  await using s = await serve(script(), { apiKey: "k" });
  const url = `ws://127.0.0.1:${s.server.port}/rpc`;
  const rejected = new WebSocketTransport(url, { apiKey: "wrong" });
  const closed: Array<Error | undefined> = [];
  rejected.onclose = (reason) => closed.push(reason);
  await assert.rejects(
    () => rejected.start(),
    /Cannot connect to the bridge at ws:\/\/127\.0\.0\.1:\d+\/rpc/,
  );
  assert.equal(closed.length, 1);

  const transport = new WebSocketTransport(url, { apiKey: "k" });
  const reasons: Array<Error | undefined> = [];
  let closedNow!: () => void;
  const ended = new Promise<void>((resolve) => closedNow = resolve);
  transport.onclose = (reason) => {
    reasons.push(reason);
    closedNow();
  };
  const messages: JsonValue[] = [];
  transport.onmessage = (m) => messages.push(m);
  await transport.start();
  await transport.send({ jsonrpc: "2.0", id: 1, method: "shutdown" });
  await ended;
  assert.deepEqual(messages, [{ jsonrpc: "2.0", id: 1, result: {} }]);
  assert.equal(reasons.length, 1);
  assert.equal(
    reasons[0]?.message,
    "The bridge closed the connection (code 1000: The bridge has shut down).",
  );
});
