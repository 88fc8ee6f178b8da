/**
 * The typed client's WebSocket transport as a web page meets it: when the connection cannot be opened the
 * browser gives no reason (a refused origin, a wrong key and a closed port all end with 1006), so the
 * error names what to check, with the page's own origin when there is one.
 */
import assert from "node:assert/strict";
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
