/**
 * Requests the bridge sends to the client (`tool/call` with ids `t-1`, `t-2`, …) and their replies. A reply
 * is removed from the pending table before it is applied, so a timeout and a late reply never both count.
 * @module
 */
import type { BridgeError } from "../protocol/errors.ts";
import { isJsonObject, type JsonObject, type JsonValue } from "../protocol/json.ts";
import type { ToolOutcome } from "../agent/types.ts";

/**
 * A pending bridge→client request.
 *
 * @example
 * ```ts
 * import { BridgeEngine, type ClientRequest } from "@open-apple-models/bridge/engine";
 * const sent: string[] = [];
 * const engine = new BridgeEngine({}, (line) => sent.push(line));
 * const call = { id: "call_1", name: "open_gate", arguments: { gate: "north" } };
 * const request: ClientRequest = engine.requestClient("tool/call", { call });
 * request.id; // "t-1", the id of the request in sent[0]
 * engine.receive(`{"jsonrpc":"2.0","id":"${request.id}","result":{"output":"opened"}}`);
 * await request.outcome; // { output: "opened", isError: false }
 * ```
 */
export interface ClientRequest {
  /** The `t-<n>` id. */
  id: string;
  /** Resolves with the tool outcome the reply maps to. */
  outcome: Promise<ToolOutcome>;
  /** Forget the request: a later reply is ignored. */
  abandon(): void;
}

/** Maps a client's reply to a tool outcome (§7 `tool/call` reply table). */
export function replyToOutcome(message: JsonObject): ToolOutcome {
  if (Object.hasOwn(message, "error")) {
    const error = message.error;
    const text = isJsonObject(error) && typeof error.message === "string"
      ? error.message
      : (typeof error === "string" ? error : "The client reported an error.");
    return { output: text, isError: true };
  }
  const result = message.result;
  if (isJsonObject(result) && Object.hasOwn(result, "output")) {
    const output: JsonValue = result.output;
    if (result.isError === true) {
      return { output: typeof output === "string" ? output : JSON.stringify(output), isError: true };
    }
    return { output, isError: false };
  }
  return { output: result ?? null, isError: false };
}

/** The table of pending client requests. */
export class ClientRequestTable {
  #counter = 0;
  readonly #pending = new Map<string, (outcome: ToolOutcome) => void>();

  /** Number of requests waiting for a reply. */
  get size(): number {
    return this.#pending.size;
  }

  /** Registers a new request; the caller sends it with the returned id. */
  open(): ClientRequest {
    const id = `t-${++this.#counter}`;
    let resolve!: (outcome: ToolOutcome) => void;
    const outcome = new Promise<ToolOutcome>((r) => resolve = r);
    this.#pending.set(id, resolve);
    return { id, outcome, abandon: () => this.#pending.delete(id) };
  }

  /** Applies a reply; returns false when the id is unknown or already finished. */
  reply(id: string | number, message: JsonObject): boolean {
    if (typeof id !== "string") return false;
    const resolve = this.#pending.get(id);
    if (!resolve) return false;
    this.#pending.delete(id);
    resolve(replyToOutcome(message));
    return true;
  }

  /** Fails every pending request with `error` (used at shutdown). */
  failAll(error: BridgeError): void {
    for (const [id, resolve] of this.#pending) {
      this.#pending.delete(id);
      resolve({ output: error.message, isError: true });
    }
  }
}
