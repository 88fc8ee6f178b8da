/**
 * Test harness: drives a BridgeEngine through the wire (JSON lines in, JSON messages out) and lets tests
 * wait for and assert on every message, in order.
 */
import { BridgeEngine } from "../../src/composition.ts";
import type { BridgeConfiguration } from "../../src/engine/configuration.ts";
import type { JsonObject, JsonValue } from "../../src/protocol/json.ts";

/** A wire-level test client of an in-process engine. */
export class WireClient {
  readonly engine: BridgeEngine;
  /** Every message the bridge sent, in order. */
  readonly messages: JsonObject[] = [];
  /** Raw lines the bridge sent. */
  readonly lines: string[] = [];
  #waiters: Array<() => void> = [];
  #nextId = 1000;

  constructor(config: Partial<BridgeConfiguration> = {}) {
    this.engine = new BridgeEngine(config, (line) => {
      if (line.includes("\n")) throw new Error(`embedded newline in ${line}`);
      this.lines.push(line);
      this.messages.push(JSON.parse(line));
      const waiters = this.#waiters;
      this.#waiters = [];
      for (const w of waiters) w();
    });
  }

  /** Sends a raw line. */
  sendLine(line: string): void {
    this.engine.receive(line);
  }

  /** Sends a JSON-RPC message object (jsonrpc added). */
  send(message: JsonObject): void {
    this.engine.receive(JSON.stringify({ jsonrpc: "2.0", ...message }));
  }

  /** Sends a request and returns its id. */
  request(method: string, params?: JsonObject, id?: string | number): string | number {
    const rid = id ?? this.#nextId++;
    this.send({ id: rid, method, ...(params === undefined ? {} : { params }) });
    return rid;
  }

  /** Waits until `predicate` matches a message (searching from the start); returns it. */
  async waitFor(predicate: (m: JsonObject) => boolean, timeoutMs = 5000): Promise<JsonObject> {
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
  response(id: JsonValue, timeoutMs = 5000): Promise<JsonObject> {
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
  async toolCall(n = 1, timeoutMs = 5000): Promise<JsonObject> {
    await this.waitFor(() => this.messages.filter((m) => m.method === "tool/call").length >= n, timeoutMs);
    return this.messages.filter((m) => m.method === "tool/call")[n - 1];
  }

  /** Answers a `tool/call` with a result. */
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

  /** A short kind label of a message, for order assertions: "event:text", "tool/call", "response", … */
  static kind(m: JsonObject): string {
    if (m.method === "session/event" || m.method === "npc/event") {
      return `${m.method === "npc/event" ? "npc" : "event"}:${
        ((m.params as JsonObject).event as JsonObject).type
      }`;
    }
    if (typeof m.method === "string") return m.method;
    return "error" in m ? "error" : "response";
  }

  /** Shuts the engine down (for test cleanup). */
  async close(): Promise<void> {
    await this.engine.shutdown();
  }
}

/** A scripted model spec. */
export function scripted(...steps: JsonValue[]): JsonObject {
  return { type: "scripted", steps };
}
