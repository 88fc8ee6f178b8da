/**
 * The shared wire cases (wire_cases.ts) over WebSocket: each case opens its own connection to the `/rpc`
 * endpoint of a listening server (one BridgeEngine per connection), one JSON-RPC message per text frame.
 */
import { OpenAIServer } from "../../src/serve/openai_server.ts";
import { ScriptedModel } from "../../src/models/scripted.ts";
import { runWireCases } from "./wire_cases.ts";
import { WireConnection } from "../helpers/wire.ts";

let server: OpenAIServer | null = null;
let users = 0;

/** The server is started by the first case and stopped after the last one closed its connection. */
async function acquire(): Promise<OpenAIServer> {
  users++;
  if (server === null) {
    server = new OpenAIServer({ port: 0, models: new Map([["system", new ScriptedModel({ steps: [] })]]) });
    await server.start();
  }
  return server;
}

async function release(): Promise<void> {
  if (--users === 0 && server !== null) {
    const s = server;
    server = null;
    await s.stop();
  }
}

runWireCases({
  name: "websocket",
  async open() {
    const s = await acquire();
    const socket = new WebSocket(`ws://127.0.0.1:${s.port}/rpc`);
    const ended = new Promise<void>((resolve) => socket.addEventListener("close", () => resolve()));
    socket.addEventListener("message", (event) => connection.deliver(event.data as string));
    await new Promise<void>((resolve, reject) => {
      socket.addEventListener("open", () => resolve());
      socket.addEventListener("error", () => reject(new Error("the WebSocket did not open")));
    });
    const connection: WireConnection = new WireConnection(
      (line) => socket.send(line),
      async () => {
        socket.close();
        await ended;
        await release();
      },
      ended,
    );
    return connection;
  },
});
