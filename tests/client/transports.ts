/**
 * The transports the typed client's suite runs over: the in-process engine, the real `cli.ts stdio`
 * process, and the WebSocket endpoint of an `oam serve` server started for the case. Each case opens its own
 * bridge; closing it stops what was started for it.
 */
import {
  Bridge,
  type BridgeOptions,
  type JsonRpcMessage,
  StdioTransport,
  type Transport,
  WebSocketTransport,
} from "../../mod.ts";
import { OpenAIServer } from "../../src/serve/openai_server.ts";
import { ScriptedModel } from "../../src/models/scripted.ts";

/** Path of cli.ts. */
export const CLI = new URL("../../cli.ts", import.meta.url).pathname;

/** The argv of a real bridge process (the stdio task's permissions). */
export function stdioCommand(args: string[] = []): string[] {
  return [
    Deno.execPath(),
    "run",
    "--quiet",
    "--no-prompt",
    "--allow-read",
    "--allow-env",
    "--allow-ffi",
    CLI,
    "stdio",
    ...args,
  ];
}

/** A WebSocket transport to a server of its own, which its close() stops. */
class ServedWebSocket implements Transport {
  readonly #server: OpenAIServer;
  readonly #socket: WebSocketTransport;

  constructor(server: OpenAIServer) {
    this.#server = server;
    this.#socket = new WebSocketTransport(`ws://127.0.0.1:${server.port}/rpc`);
  }

  set onmessage(handler: Transport["onmessage"]) {
    this.#socket.onmessage = handler;
  }
  set onclose(handler: Transport["onclose"]) {
    this.#socket.onclose = handler;
  }
  set onerror(handler: Transport["onerror"]) {
    this.#socket.onerror = handler;
  }

  start(): Promise<void> {
    return this.#socket.start();
  }

  send(message: JsonRpcMessage): Promise<void> {
    return this.#socket.send(message);
  }

  async close(): Promise<void> {
    await this.#socket.close();
    await this.#server.stop();
  }
}

/** A way to open a bridge. */
export interface TransportKind {
  /** "in-process", "stdio" or "websocket". */
  name: string;
  /** Opens a bridge with `options`. */
  open(options?: BridgeOptions): Promise<Bridge>;
}

/** Every transport. */
export const TRANSPORTS: TransportKind[] = [
  { name: "in-process", open: (options = {}) => Bridge.open(options) },
  {
    name: "stdio",
    open: (options = {}) =>
      Bridge.connect(new StdioTransport({ command: stdioCommand(), stderr: "piped" }), options),
  },
  {
    name: "websocket",
    open: async (options = {}) => {
      const server = new OpenAIServer({
        port: 0,
        models: new Map([["system", new ScriptedModel({ steps: [] })]]),
      });
      await server.start();
      return Bridge.connect(new ServedWebSocket(server), options);
    },
  },
];

/** Options that collect warnings instead of printing them. */
export function collecting(): { warnings: string[]; options: BridgeOptions } {
  const warnings: string[] = [];
  return { warnings, options: { onWarning: (w) => warnings.push(w) } };
}
