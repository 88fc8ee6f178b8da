/**
 * The typed client's WebSocket transport as a web page meets it: when the connection cannot be opened the
 * browser gives no reason (a refused origin, a wrong key and a closed port all end with 1006), so the
 * error names what to check, with the page's own origin when there is one.
 */
import assert from "node:assert/strict";
import { Bridge } from "../../src/client/bridge.ts";
import { Peer } from "../../src/client/peer.ts";
import type { ConnectionEnd } from "../../src/client/transport.ts";
import { WebSocketTransport } from "../../src/client/websocket_transport.ts";
import { script, serve } from "../serve/serve_fixture.ts";

/** A WebSocket constructor that sends `origin`, as a browser page on that origin does. */
function fromOrigin(origin: string): new (url: string) => WebSocket {
  return class extends WebSocket {
    constructor(url: string) {
      super(url, { headers: { origin } });
    }
  };
}

async function connectError(transport: WebSocketTransport): Promise<Error> {
  try {
    await transport.start();
  } catch (error) {
    return error as Error;
  }
  await transport.close();
  throw new Error("the transport connected");
}

Deno.test("a connection the server refuses names what to check: the origin to allow, the key, the server's log", async () => {
  await using s = await serve(script(), {
    allowedOrigins: ["http://127.0.0.1:5173"],
    rpc: { engine: {}, maxConnections: 4, maxMessageBytes: 1 << 20 },
  });
  const url = `ws://127.0.0.1:${s.server.port}/rpc`;
  const page = "http://localhost:5173";
  Object.defineProperty(globalThis, "location", { value: { origin: page }, configurable: true });
  try {
    const error = await connectError(new WebSocketTransport(url, { webSocket: fromOrigin(page) }));
    // A browser says code 1006, Deno 0: the rest is the same.
    assert.equal(
      error.message.replace(/\(code \d+;/, "(code N;"),
      `Cannot connect to the bridge at ${url}: the connection closed before it opened (code N; the ` +
        "WebSocket API does not say why). Either no server listens there, or the server refused the " +
        `connection: this page's origin must be allowed ('oam serve --allow-origin ${page}'; http://localhost ` +
        "and http://127.0.0.1 are different origins), and a server with an API key needs the apiKey option. " +
        "The server's log names the reason.",
    );
    assert.equal((error as { code?: number }).code, -32023);
  } finally {
    delete (globalThis as { location?: unknown }).location;
  }
});

Deno.test("outside a page the refused connection's hint names the flag without an origin", async () => {
  await using s = await serve(script(), {
    apiKey: "k",
    rpc: { engine: {}, maxConnections: 4, maxMessageBytes: 1 << 20 },
  });
  const url = `ws://127.0.0.1:${s.server.port}/rpc`;
  const error = await connectError(new WebSocketTransport(url, { apiKey: "wrong" }));
  assert.match(
    error.message,
    /^Cannot connect to the bridge at ws:\/\/127\.0\.0\.1:\d+\/rpc: the connection closed before/,
  );
  assert.match(error.message, /'oam serve --allow-origin <the page's origin>'/);
  assert.doesNotMatch(error.message, /api_key|wrong/);
});

/**
 * A WebSocket server on a free port that completes the handshake and then drops the TCP connection without a
 * close frame (a network failure, a killed server). Resolves with its URL.
 */
function droppingServer(): { url: string; done: Promise<void> } {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const done = (async () => {
    const conn = await listener.accept();
    listener.close();
    const buffer = new Uint8Array(4096);
    let request = "";
    while (!request.includes("\r\n\r\n")) {
      const n = await conn.read(buffer);
      if (n === null) break;
      request += new TextDecoder().decode(buffer.subarray(0, n));
    }
    const key = /sec-websocket-key: *(\S+)/i.exec(request)![1];
    const digest = await crypto.subtle.digest(
      "SHA-1",
      new TextEncoder().encode(`${key}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`),
    );
    const accept = btoa(String.fromCharCode(...new Uint8Array(digest)));
    await conn.write(
      new TextEncoder().encode(
        "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
          `Sec-WebSocket-Accept: ${accept}\r\n\r\n`,
      ),
    );
    conn.close();
  })();
  return { url: `ws://127.0.0.1:${(listener.addr as Deno.NetAddr).port}/rpc`, done };
}

Deno.test("the transport's onclose says how the socket closed: the bridge's code and reason, or a broken connection", async () => {
  await using s = await serve(script(), { rpc: { engine: {}, maxConnections: 4, maxMessageBytes: 1 << 20 } });
  const stopping = new WebSocketTransport(`ws://127.0.0.1:${s.server.port}/rpc`);
  const closes: unknown[][] = [];
  stopping.onclose = (...args) => closes.push(args.map((a) => a instanceof Error ? a.message : a));
  await stopping.start();
  await s.server.stop();
  await stopping.close();
  assert.deepEqual(closes, [[
    "The bridge closed the connection (code 1001: The server is stopping).",
    { code: 1001, reason: "The server is stopping.", network: false },
  ]]);

  const dropping = droppingServer();
  const broken = new WebSocketTransport(dropping.url);
  const brokenCloses: unknown[][] = [];
  broken.onclose = (...args) => brokenCloses.push(args.map((a) => a instanceof Error ? a.message : a));
  await broken.start();
  await dropping.done;
  await broken.close();
  assert.deepEqual(brokenCloses, [[
    "The connection to the bridge broke (code 1006).",
    { code: 1006, reason: "", network: true },
  ]]);
});

/** `end` with its error as its message, to compare whole. */
function plain(end: ConnectionEnd): Record<string, unknown> {
  return end.error ? { ...end, error: end.error.message } : { ...end };
}

Deno.test("bridge.closeInfo says why the connection ended: closed here, the server stopping, a broken connection", async () => {
  await using s = await serve(script(), { rpc: { engine: {}, maxConnections: 4, maxMessageBytes: 1 << 20 } });
  const url = `ws://127.0.0.1:${s.server.port}/rpc`;

  const closedHere = await Bridge.connect(new WebSocketTransport(url));
  assert.equal(closedHere.closeInfo, null);
  await closedHere.close();
  await closedHere.done;
  assert.deepEqual(plain(closedHere.closeInfo!), {
    by: "client",
    code: 1000,
    reason: "The bridge has shut down.",
  });

  const inProcess = await Bridge.open();
  await inProcess.close();
  await inProcess.done;
  assert.deepEqual(inProcess.closeInfo, { by: "client" });

  const stopped = await Bridge.connect(new WebSocketTransport(url));
  await s.server.stop();
  await stopped.done;
  assert.deepEqual(plain(stopped.closeInfo!), {
    by: "server",
    code: 1001,
    reason: "The server is stopping.",
    error: "The bridge closed the connection (code 1001: The server is stopping).",
  });
  // Closing it afterwards does not change why it ended.
  await stopped.close();
  assert.equal(stopped.closeInfo?.by, "server");

  const dropping = droppingServer();
  const peer = new Peer(new WebSocketTransport(dropping.url));
  await peer.start();
  await dropping.done;
  await peer.done;
  assert.deepEqual(plain(peer.closeInfo!), {
    by: "network",
    code: 1006,
    reason: "",
    error: "The connection to the bridge broke (code 1006).",
  });
  await peer.close();
});

Deno.test("an endpoint that is not a WebSocket URL is refused with what to write, not 'Invalid URL'", async () => {
  // Before: "TypeError: Failed to construct 'URL': Invalid URL" (a browser) or "Invalid URL: '…'" (Deno),
  // thrown by start() itself, not the bridge's -32023.
  for (const url of ["127.0.0.1:1976/rpc", "localhost:1976/rpc", "/rpc", "ftp://127.0.0.1:1976/rpc"]) {
    const transport = new WebSocketTransport(url, {
      webSocket: class {
        constructor() {
          throw new Error("no socket may be made");
        }
      } as unknown as new (url: string) => WebSocket,
    });
    let closes = 0;
    transport.onclose = () => closes++;
    const error = await connectError(transport);
    assert.equal(
      error.message,
      `Cannot connect to the bridge at ${url}: this is not a WebSocket URL. Write the endpoint as oam serve's ` +
        "banner prints it: ws://<host>:<port>/rpc (in a page, a path such as /rpc is resolved against the " +
        "page's address).",
    );
    assert.equal((error as { code?: number }).code, -32023);
    assert.equal(closes, 1);
  }
});

Deno.test("in a page, a path such as /rpc and an http:// URL reach the page's server, as with a WebSocket", async () => {
  await using s = await serve(script(), { rpc: { engine: {}, maxConnections: 4, maxMessageBytes: 1 << 20 } });
  const page = `http://127.0.0.1:${s.server.port}/game/index.html`;
  const opened: string[] = [];
  const recording = class extends WebSocket {
    constructor(url: string) {
      opened.push(url);
      super(url);
    }
  };
  Object.defineProperty(globalThis, "location", {
    value: { href: page, origin: new URL(page).origin },
    configurable: true,
  });
  try {
    for (const url of ["/rpc", "../rpc", `http://127.0.0.1:${s.server.port}/rpc`]) {
      await using bridge = await Bridge.connect(new WebSocketTransport(url, { webSocket: recording }));
      await bridge.ping();
    }
  } finally {
    delete (globalThis as { location?: unknown }).location;
  }
  assert.deepEqual(opened, Array(3).fill(`ws://127.0.0.1:${s.server.port}/rpc`));
});
