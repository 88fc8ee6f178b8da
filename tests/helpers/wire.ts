/**
 * The wire-level test harness: raw JSON-RPC lines in, every message the bridge sends kept in order, and waits
 * and selectors to assert on them. {@link WireConnection} works over any line transport (stdio, WebSocket);
 * {@link WireClient} is one over an in-process engine whose output is recorded synchronously. Deliberately
 * not a JSON-RPC client (that is the typed client's peer): tests send malformed lines, reuse ids and answer
 * `tool/call`s by hand, and assert on exactly what came back.
 */
import { BridgeEngine } from "../../src/composition.ts";
import type { BridgeConfiguration } from "../../src/engine/configuration.ts";
import type { JsonObject, JsonValue } from "../../src/protocol/json.ts";
import { DEADLINE_MS } from "./deadline.ts";

/** How a transport-independent case reaches the bridge. */
export interface WireTransport {
  /** Name in test titles. */
  name: string;
  /** Opens a fresh bridge connection. */
  open(): Promise<WireConnection>;
}

/** A client of one bridge connection, at the level of lines. */
export class WireConnection {
  /** Every message the bridge sent, in order. */
  readonly messages: JsonObject[] = [];
  /** The raw lines the bridge sent. */
  readonly lines: string[] = [];
  /** Resolves when the bridge ended the connection. */
  readonly ended: Promise<void>;
  readonly #write: (line: string) => void;
  readonly #close: () => Promise<void>;
  #waiters: Array<() => void> = [];
  #nextId = 1000;

  /** A connection writing lines with `write`; `close` ends it from the client side. */
  constructor(write: (line: string) => void, close: () => Promise<void>, ended: Promise<void>) {
    this.#write = write;
    this.#close = close;
    this.ended = ended;
  }

  /** Hands one line from the bridge to the client (it must be exactly one JSON message). */
  deliver(line: string): void {
    if (line.includes("\n")) throw new Error(`embedded newline in ${line}`);
    this.lines.push(line);
    this.messages.push(JSON.parse(line));
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const w of waiters) w();
  }

  /** Sends a raw line (one message). */
  sendLine(line: string): void {
    this.#write(line);
  }

  /** Sends a JSON-RPC message object (`jsonrpc` added). */
  send(message: JsonObject): void {
    this.#write(JSON.stringify({ jsonrpc: "2.0", ...message }));
  }

  /** Sends a request and returns its id (a fresh one from 1000 on unless given). */
  request(method: string, params?: JsonObject, id?: string | number): string | number {
    const rid = id ?? this.#nextId++;
    this.send({ id: rid, method, ...(params === undefined ? {} : { params }) });
    return rid;
  }

  /** Waits until `predicate` matches a message (searching from the start); returns it. */
  async waitFor(predicate: (m: JsonObject) => boolean, timeoutMs = DEADLINE_MS): Promise<JsonObject> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      // Register before checking: creating a timer may let queued work run and send messages.
      let wake!: () => void;
      const woken = new Promise<void>((resolve) => wake = resolve);
      this.#waiters.push(wake);
      const found = this.messages.find(predicate);
      const left = deadline - Date.now();
      if (found || left <= 0) {
        this.#waiters = this.#waiters.filter((w) => w !== wake);
        if (found) return found;
        throw new Error(`timed out waiting; messages so far:\n${this.lines.join("\n")}`);
      }
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([woken, new Promise<void>((resolve) => timer = setTimeout(resolve, left))]);
      clearTimeout(timer);
      this.#waiters = this.#waiters.filter((w) => w !== wake);
    }
  }

  /** Waits for the response to request `id`. */
  response(id: JsonValue, timeoutMs = DEADLINE_MS): Promise<JsonObject> {
    return this.waitFor((m) => m.id === id && ("result" in m || "error" in m) && !("method" in m), timeoutMs);
  }

  /** Sends a request and waits for its result (throws on an error response). */
  async call(method: string, params?: JsonObject): Promise<JsonObject> {
    const id = this.request(method, params);
    const r = await this.response(id);
    if ("error" in r) throw new Error(`${method} failed: ${JSON.stringify(r.error)}`);
    return r.result as JsonObject;
  }

  /** Waits for the `tool/call` request number `n` (1-based, in arrival order). */
  async toolCall(n = 1, timeoutMs = DEADLINE_MS): Promise<JsonObject> {
    await this.waitFor(() => this.messages.filter((m) => m.method === "tool/call").length >= n, timeoutMs);
    return this.messages.filter((m) => m.method === "tool/call")[n - 1];
  }

  /** Answers a bridge request (`tool/call`) with a result. */
  reply(id: JsonValue, result: JsonValue): void {
    this.send({ id: id as string, result });
  }

  /** Messages related to request `id`: its notifications (by requestId), tool/calls and response, in order. */
  related(id: JsonValue): JsonObject[] {
    return this.messages.filter((m) => {
      const p = m.params as JsonObject | undefined;
      return m.id === id && !("method" in m) || (p !== undefined && p.requestId === id);
    });
  }

  /** Closes the connection from the client side and waits until it has ended. */
  async close(): Promise<void> {
    await this.#close();
  }

  /** A short kind label of a message, for order assertions: "event:text", "npc:emotion", "tool/call", … */
  static kind(m: JsonObject): string {
    if (m.method === "session/event" || m.method === "npc/event") {
      return `${m.method === "npc/event" ? "npc" : "event"}:${
        ((m.params as JsonObject).event as JsonObject).type
      }`;
    }
    if (typeof m.method === "string") return m.method;
    return "error" in m ? "error" : "response";
  }
}

/**
 * A {@link WireConnection} to an in-process engine: lines go in through `engine.receive`, and what the engine
 * writes is recorded at once (synchronously, as its writer sends it).
 */
export class WireClient extends WireConnection {
  readonly engine: BridgeEngine;

  constructor(config: Partial<BridgeConfiguration> = {}) {
    const box: { engine?: BridgeEngine } = {};
    super((line) => box.engine!.receive(line), () => box.engine!.shutdown(), Promise.resolve());
    this.engine = box.engine = new BridgeEngine(config, (line) => this.deliver(line));
  }
}

/** A scripted model spec. */
export function scripted(...steps: JsonValue[]): JsonObject {
  return { type: "scripted", steps };
}
