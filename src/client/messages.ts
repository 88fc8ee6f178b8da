/**
 * JSON-RPC 2.0 message shapes as they travel between a client and the bridge (PROTOCOL.md §1), and the
 * classification of an incoming message.
 * @module
 */
import { isJsonObject, type JsonObject, type JsonValue } from "../protocol/json.ts";

/**
 * A JSON-RPC id: a string or a safe integer.
 *
 * @example
 * ```ts
 * import { type RequestId } from "@open-apple-models/bridge";
 * const ids: RequestId[] = [1, "t-1", "talk-7"];
 * ```
 */
export type RequestId = string | number;

/**
 * A request: expects exactly one response with the same `id`.
 *
 * @example
 * ```ts
 * import { type JsonRpcRequest } from "@open-apple-models/bridge";
 * const ping: JsonRpcRequest = { jsonrpc: "2.0", id: 1, method: "ping" };
 * ```
 */
export interface JsonRpcRequest {
  /** Always `"2.0"`. */
  jsonrpc: "2.0";
  /** Echoed back in the response. */
  id: RequestId;
  /** The method name, e.g. `"npc/talk"`. */
  method: string;
  /** Parameters by name (absent means `{}`). */
  params?: object;
}

/**
 * A notification: no `id`, no response.
 *
 * @example
 * ```ts
 * import { type JsonRpcNotification } from "@open-apple-models/bridge";
 * const cancel: JsonRpcNotification = { jsonrpc: "2.0", method: "session/cancel", params: { session: "guard" } };
 * ```
 */
export interface JsonRpcNotification {
  /** Always `"2.0"`. */
  jsonrpc: "2.0";
  /** The method name, e.g. `"session/cancel"`. */
  method: string;
  /** Parameters by name. */
  params?: object;
}

/**
 * The `error` member of an error response (§8).
 *
 * @example
 * ```ts
 * import { type JsonRpcErrorObject } from "@open-apple-models/bridge";
 * const notFound: JsonRpcErrorObject = {
 *   code: -32050,
 *   message: "No NPC 'gorm'.",
 *   data: { code: "npc_not_found", npc: "gorm" },
 * };
 * ```
 */
export interface JsonRpcErrorObject {
  /** The JSON-RPC number, e.g. `-32020`. */
  code: number;
  /** A human-readable message. */
  message: string;
  /** `{code: "<data.code>", …}`: the stable string code and details. */
  data?: JsonValue;
}

/**
 * A successful response.
 *
 * @example
 * ```ts
 * import { type JsonRpcResult } from "@open-apple-models/bridge";
 * const answer: JsonRpcResult = { jsonrpc: "2.0", id: 1, result: {} };
 * ```
 */
export interface JsonRpcResult {
  /** Always `"2.0"`. */
  jsonrpc: "2.0";
  /** The id of the request answered. */
  id: RequestId | null;
  /** The method's result (its shape is the method's; see `BridgeMethods`). */
  result: JsonValue;
}

/**
 * An error response.
 *
 * @example
 * ```ts
 * import { type JsonRpcError } from "@open-apple-models/bridge";
 * const failure: JsonRpcError = {
 *   jsonrpc: "2.0",
 *   id: 7,
 *   error: { code: -32009, message: "The turn was cancelled.", data: { code: "cancelled" } },
 * };
 * ```
 */
export interface JsonRpcError {
  /** Always `"2.0"`. */
  jsonrpc: "2.0";
  /** The id of the request answered (`null` when the bridge could not read it). */
  id: RequestId | null;
  /** What went wrong. */
  error: JsonRpcErrorObject;
}

/**
 * Any message in either direction.
 *
 * @example
 * ```ts
 * import { type JsonRpcMessage } from "@open-apple-models/bridge";
 * const reply: JsonRpcMessage = { jsonrpc: "2.0", id: "t-1", result: { output: "The gate opened." } };
 * ```
 */
export type JsonRpcMessage = JsonRpcRequest | JsonRpcNotification | JsonRpcResult | JsonRpcError;

/** An incoming message, classified. */
export type Classified =
  | { kind: "request"; id: RequestId; method: string; params: JsonObject }
  | { kind: "notification"; method: string; params: JsonObject }
  | { kind: "result"; id: RequestId | null; result: JsonValue }
  | { kind: "error"; id: RequestId | null; error: JsonRpcErrorObject }
  | { kind: "invalid"; reason: string };

function isId(value: JsonValue | undefined): value is RequestId {
  return typeof value === "string" || typeof value === "number";
}

function errorObject(value: JsonValue | undefined): JsonRpcErrorObject {
  const e = isJsonObject(value) ? value : {};
  const out: JsonRpcErrorObject = {
    code: typeof e.code === "number" ? e.code : -32603,
    message: typeof e.message === "string" ? e.message : "The bridge sent a malformed error.",
  };
  if (e.data !== undefined) out.data = e.data;
  return out;
}

/**
 * Classifies a parsed message: a request or notification (params default to `{}`), a result or error
 * response, or invalid (with the reason).
 *
 * @example
 * ```ts
 * import { classify } from "./messages.ts";
 * classify({ jsonrpc: "2.0", id: 1, result: {} }).kind; // "result"
 * ```
 */
export function classify(message: JsonValue): Classified {
  if (!isJsonObject(message) || message.jsonrpc !== "2.0") {
    return { kind: "invalid", reason: "not a JSON-RPC 2.0 object" };
  }
  const id = message.id;
  if (typeof message.method === "string") {
    const params = isJsonObject(message.params) ? message.params : {};
    if (id === undefined) return { kind: "notification", method: message.method, params };
    if (isId(id)) return { kind: "request", id, method: message.method, params };
    return { kind: "invalid", reason: `request '${message.method}' has an invalid id` };
  }
  if (id !== null && !isId(id)) return { kind: "invalid", reason: "response without a valid id" };
  if (Object.hasOwn(message, "error")) return { kind: "error", id, error: errorObject(message.error) };
  if (Object.hasOwn(message, "result")) return { kind: "result", id, result: message.result };
  return { kind: "invalid", reason: "neither a request, a notification nor a response" };
}
