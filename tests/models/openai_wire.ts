/**
 * A minimal in-process JSON-RPC client of a BridgeEngine for the OpenAI backend's engine-level tests.
 * @module
 */
import { BridgeEngine } from "../../src/composition.ts";
import assert from "node:assert/strict";
import type { JsonObject } from "../../src/protocol/json.ts";

/** A minimal wire client: every line the engine sends is parsed and kept. */
export class Wire {
  readonly messages: JsonObject[] = [];
  readonly engine: BridgeEngine;
  #wake: (() => void)[] = [];

  constructor() {
    this.engine = new BridgeEngine({}, (line) => {
      this.messages.push(JSON.parse(line));
      for (const wake of this.#wake.splice(0)) wake();
    });
  }

  /** Sends a message (`jsonrpc` added). */
  send(message: JsonObject): void {
    this.engine.receive(JSON.stringify({ jsonrpc: "2.0", ...message }));
  }

  /** Waits (up to `timeoutMs`) for the first message matching `predicate`. */
  async waitFor(predicate: (m: JsonObject) => boolean, timeoutMs = 10_000): Promise<JsonObject> {
    const deadline = Date.now() + timeoutMs;
    while (true) {
      const found = this.messages.find(predicate);
      if (found !== undefined) return found;
      if (Date.now() > deadline) throw new Error(`timed out; got ${JSON.stringify(this.messages)}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 200);
        this.#wake.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /**
   * Creates session "s" on an `openai` model at `baseURL` (request id 1) with `params` added; asserts it was
   * created and returns its result (its `warnings`).
   */
  async openaiSession(baseURL: string, params: JsonObject = {}): Promise<JsonObject> {
    this.send({
      id: 1,
      method: "session/create",
      params: { session: "s", model: { type: "openai", baseURL, model: "mock-model" }, ...params },
    });
    const created = await this.response(1);
    assert.ok("result" in created, JSON.stringify(created));
    return created.result as JsonObject;
  }

  /** Waits for the response to request `id`. */
  response(id: number): Promise<JsonObject> {
    return this.waitFor((m) => m.id === id && !("method" in m));
  }
}
