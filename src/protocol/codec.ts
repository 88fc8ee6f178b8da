/**
 * Line codec: turns one incoming line into a classified JSON-RPC message (§1) and encodes outgoing messages
 * as compact one-line JSON. For a client in the same process, the copies that stand for a line: values
 * equal to what the line would give, made without the text.
 * @module
 */
import { BridgeError } from "./errors.ts";
import { isJsonObject, type JsonObject, type JsonValue } from "./json.ts";
import { jsonErrorAt } from "./json_error_at.ts";

/**
 * A JSON-RPC id: a string or a number of magnitude ≤ 2^53-1.
 *
 * @example
 * ```ts
 * import type { RequestId } from "@open-apple-models/bridge/engine";
 * const ids: RequestId[] = [1, "t-7", 9007199254740991];
 * ```
 */
export type RequestId = string | number;

/** Largest numeric id that can be echoed exactly. */
export const MAX_SAFE_ID = 9007199254740991;
/** Deepest nesting accepted in an incoming message. */
export const MAX_DEPTH = 100;
/**
 * Default longest message a bridge reads, in bytes: `oam stdio`'s line limit and the WebSocket `/rpc` frame
 * limit. Clients refuse a longer message before sending it (the bridge would answer it with id null).
 */
export const MAX_MESSAGE_BYTES = 16 * 1024 * 1024;

/** A classified incoming line. */
export type Incoming =
  | { kind: "blank" }
  | { kind: "request"; id: RequestId; method: string; params: JsonValue | undefined }
  | { kind: "notification"; method: string; params: JsonValue | undefined }
  | { kind: "response"; id: RequestId; message: JsonObject }
  | { kind: "invalid"; id: RequestId | null; error: BridgeError };

/** True when `id` is a valid JSON-RPC id for this bridge. */
export function isValidId(id: unknown): id is RequestId {
  if (typeof id === "string") return true;
  return typeof id === "number" && Number.isFinite(id) && Math.abs(id) <= MAX_SAFE_ID;
}

function idError(id: unknown): BridgeError {
  if (typeof id === "number") {
    return BridgeError.of(
      "invalid_message",
      "A numeric 'id' must be finite and at most 2^53-1 (9007199254740991) in magnitude so it can be echoed exactly; use a string id.",
    );
  }
  return BridgeError.of("invalid_message", "'id' must be a string or a number.");
}

/** Nesting depth of a parsed value, computed iteratively (never overflows the stack). */
export function exceedsDepth(value: JsonValue, limit: number): boolean {
  const stack: Array<[JsonValue, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [v, d] = stack.pop()!;
    if (typeof v !== "object" || v === null) continue;
    if (d > limit) return true;
    if (Array.isArray(v)) {
      for (const c of v) if (typeof c === "object" && c !== null) stack.push([c, d + 1]);
    } else {for (const k in v) {
        const c = v[k];
        if (typeof c === "object" && c !== null) stack.push([c, d + 1]);
      }}
  }
  return false;
}

function parseError(line: string, error: unknown): BridgeError {
  const text = error instanceof Error ? error.message : String(error);
  const m = /position (\d+)/.exec(text);
  // V8 names no position for an unexpected token: the scan finds the character (-1 cannot happen after a
  // failed parse; the end of the line is the fallback).
  const scanned = m ? -1 : jsonErrorAt(line);
  const at = m ? Number(m[1]) : scanned === -1 ? line.length : scanned;
  const byte = new TextEncoder().encode(line.slice(0, at)).length;
  const reason = text.replace(/\s*(in JSON )?at position \d+.*$/s, "").replace(/^JSON\.parse: /, "");
  return BridgeError.of("parse_error", `Invalid JSON at byte ${byte}: ${reason}`);
}

const HIGH = (c: number) => c >= 0xd800 && c <= 0xdbff;
const LOW = (c: number) => c >= 0xdc00 && c <= 0xdfff;

/**
 * Index (UTF-16) of the first unpaired surrogate in `text`, raw or written as a `\uXXXX` escape inside a JSON
 * string, or -1. Only called when a quick check found a surrogate or a surrogate escape.
 */
function unpairedSurrogateAt(text: string): number {
  const hexAt = (i: number) =>
    text[i] === "\\" && text[i + 1] === "u" ? parseInt(text.slice(i + 2, i + 6), 16) : -1;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (HIGH(c)) {
      if (!LOW(text.charCodeAt(i + 1))) return i;
      i++;
      continue;
    }
    if (LOW(c)) return i;
    if (c === 0x22) inString = !inString;
    else if (inString && c === 0x5c) {
      const u = hexAt(i);
      if (u === -1) {
        i++; // a two-character escape such as \" or \\
        continue;
      }
      if (HIGH(u)) {
        if (!LOW(hexAt(i + 6))) return i;
        i += 11;
      } else if (LOW(u)) return i;
      else i += 5;
    }
  }
  return -1;
}

const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/;

/**
 * Classifies one line. Never throws: every problem becomes an `invalid` result carrying the spec's error.
 *
 * @example
 * ```ts
 * import { decodeLine } from "./codec.ts";
 * const msg = decodeLine('{"jsonrpc":"2.0","id":1,"method":"ping"}');
 * // msg.kind === "request"
 * ```
 */
export function decodeLine(line: string): Incoming {
  let text = line;
  const first = text.charCodeAt(0);
  if (first === 0xfeff) text = text.slice(1);
  // Fast path: a line starting with "{" is not blank; otherwise check for whitespace only.
  if (first !== 123 && text.trim() === "") return { kind: "blank" };
  const value = parseLineJson(text);
  if (value instanceof BridgeError) return { kind: "invalid", id: null, error: value };
  return classifyMessage(value);
}

/** The JSON value of a line, or the `-32700 parse_error` it gets (bad JSON, a lone surrogate, too deep). */
function parseLineJson(text: string): JsonValue | BridgeError {
  let value: JsonValue;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return parseError(text, error);
  }
  if (!text.isWellFormed() || (text.includes("\\u") && SURROGATE_ESCAPE.test(text))) {
    const at = unpairedSurrogateAt(text);
    if (at !== -1) {
      const byte = new TextEncoder().encode(text.slice(0, at)).length;
      return BridgeError.of(
        "parse_error",
        `Invalid JSON at byte ${byte}: unpaired UTF-16 surrogate in a string`,
      );
    }
  }
  // A line shorter than 2*MAX_DEPTH characters cannot nest deeper than MAX_DEPTH.
  if (text.length > 2 * MAX_DEPTH && exceedsDepth(value, MAX_DEPTH)) {
    return BridgeError.of("parse_error", `Invalid JSON: nesting deeper than ${MAX_DEPTH} levels.`);
  }
  return value;
}

/** A message with the `-32600 invalid_message` error `message` (answered with `id` when it had a valid one). */
function invalidMessage(id: RequestId | null, message: string): Incoming {
  return { kind: "invalid", id, error: BridgeError.of("invalid_message", message) };
}

/**
 * Classifies a parsed line: request, notification, response, or invalid with the spec's error.
 *
 * @example
 * ```ts
 * import { classifyMessage } from "./codec.ts";
 * const msg = classifyMessage({ jsonrpc: "2.0", id: 1, method: "ping" });
 * // msg.kind === "request"
 * ```
 */
export function classifyMessage(value: JsonValue): Incoming {
  if (Array.isArray(value)) {
    return invalidMessage(null, "Batch requests are not supported; send one message per line.");
  }
  if (!isJsonObject(value)) return invalidMessage(null, "A JSON-RPC message must be an object.");
  const hasId = Object.hasOwn(value, "id");
  const rawId = value.id;
  const idOk = hasId && isValidId(rawId);
  if (hasId && !idOk) return { kind: "invalid", id: null, error: idError(rawId) };
  const id = idOk ? rawId as RequestId : null;
  if (value.jsonrpc !== "2.0") {
    return invalidMessage(id, `Missing or unsupported 'jsonrpc' version; expected "2.0".`);
  }
  if (Object.hasOwn(value, "method")) {
    const method = value.method;
    if (typeof method !== "string" || method === "") {
      return invalidMessage(id, "'method' must be a non-empty string.");
    }
    const params = Object.hasOwn(value, "params") ? value.params : undefined;
    return id === null ? { kind: "notification", method, params } : { kind: "request", id, method, params };
  }
  if (id !== null && (Object.hasOwn(value, "result") || Object.hasOwn(value, "error"))) {
    return { kind: "response", id, message: value };
  }
  return invalidMessage(
    id,
    "A message needs 'method' (request or notification) or 'result'/'error' (response).",
  );
}

/** Thrown inside a copy at a value whose JSON text is not a plain copy of it. */
const NOT_PLAIN: unique symbol = Symbol("not plain JSON");

/**
 * A copy of one value (see {@link copyMessage}); throws {@link NOT_PLAIN}. `depth` is its nesting level;
 * `decoded`: also throw where {@link decodeLine} would reject the line (a lone surrogate in a string or a key).
 */
function copyValue(value: unknown, depth: number, decoded: boolean): JsonValue {
  if (typeof value !== "object") {
    if (typeof value === "string") {
      if (decoded && !value.isWellFormed()) throw NOT_PLAIN;
      return value;
    }
    if (typeof value === "number") {
      if (!Number.isFinite(value)) throw NOT_PLAIN; // NaN and ±Infinity are written as null
      return value === 0 ? 0 : value; // -0 is written as 0
    }
    if (typeof value === "boolean") return value;
    throw NOT_PLAIN; // a BigInt (the encoder throws); undefined, functions and symbols are handled by the caller
  }
  if (value === null) return null;
  if (depth > MAX_DEPTH) throw NOT_PLAIN; // the decoder's limit (and where a cycle ends)
  // Dates, Maps, boxed primitives, class instances and toJSON methods have JSON texts of their own.
  const proto = Object.getPrototypeOf(value);
  if (Array.isArray(value)) {
    if (proto !== Array.prototype || (value as { toJSON?: unknown }).toJSON !== undefined) throw NOT_PLAIN;
    const n = value.length;
    const out: JsonValue[] = new Array(n);
    for (let i = 0; i < n; i++) {
      const item: unknown = value[i];
      // Holes, undefined, functions and symbols are written as null in an array.
      out[i] = item === undefined || typeof item === "function" || typeof item === "symbol"
        ? null
        : copyValue(item, depth + 1, decoded);
    }
    return out;
  }
  if (
    (proto !== Object.prototype && proto !== null) || (value as { toJSON?: unknown }).toJSON !== undefined
  ) {
    throw NOT_PLAIN;
  }
  const source = value as Record<string, unknown>;
  const out: JsonObject = {};
  // Own keys only: the callers made sure that Object.prototype has no enumerable key.
  for (const key in source) {
    const item = source[key];
    // Members that are undefined, functions or symbols are left out.
    if (item === undefined || typeof item === "function" || typeof item === "symbol") continue;
    if (key === "__proto__" || (decoded && !key.isWellFormed())) throw NOT_PLAIN;
    out[key] = copyValue(item, depth + 1, decoded);
  }
  return out;
}

/** The copy, or null (see {@link copyMessage}). */
function copyOf(message: unknown, decoded: boolean): JsonValue | null {
  // An enumerable key on Object.prototype would show up in the copy's `for…in` (never in JSON).
  for (const _ in Object.prototype) return null;
  try {
    return copyValue(message, 1, decoded);
  } catch {
    return null; // NOT_PLAIN, or a getter that threw: the line path does (and reports) it as before
  }
}

/**
 * A copy of a message that equals `JSON.parse` of its {@link encodeMessage} line (what a client reads),
 * made without the text and sharing nothing with `message`; `null` when the message holds anything whose
 * JSON text is not a plain copy of it (a `toJSON` method, a Date or other class instance, a number that is
 * not finite, a BigInt, a `__proto__` key, nesting deeper than {@link MAX_DEPTH}, a cycle, a getter that
 * throws): use its line then, and get exactly the line's behavior.
 *
 * @example
 * ```ts
 * import { copyMessage } from "./codec.ts";
 * const result = { line: "Welcome!", playerOptions: ["Buy", "Leave"], note: undefined };
 * const copy = copyMessage({ jsonrpc: "2.0", id: 1, result });
 * // copy: {"jsonrpc":"2.0","id":1,"result":{"line":"Welcome!","playerOptions":["Buy","Leave"]}}, nothing shared
 * copyMessage({ jsonrpc: "2.0", method: "log", params: { at: new Date() } }); // null: use the line
 * ```
 */
export function copyMessage(message: object): JsonObject | null {
  return copyOf(message, false) as JsonObject | null;
}

/**
 * A number as `JSON.parse` of its JSON text gives it back: -0 becomes 0, NaN and ±Infinity become null.
 *
 * @example
 * ```ts
 * import { jsonNumber } from "./codec.ts";
 * [jsonNumber(-0), jsonNumber(1.5), jsonNumber(NaN)]; // [0, 1.5, null]
 * ```
 */
export function jsonNumber(value: number): number | null {
  return Number.isFinite(value) ? value + 0 : null;
}

/**
 * A copy of a value that equals `JSON.parse` of its JSON text and shares nothing with it: made like
 * {@link copyMessage} when it can be, else through the text (`JSON.stringify` of a value that is not JSON
 * at all throws, as it does when that value is sent).
 *
 * @example
 * ```ts
 * import { copyJson } from "./codec.ts";
 * const args = { path: "player.gold", value: 45 };
 * copyJson(args) !== args; // true: an equal object of its own
 * copyJson(-0); // 0
 * ```
 */
export function copyJson<T extends JsonValue>(value: T): T {
  if (typeof value === "string" || typeof value === "boolean" || value === null) return value;
  return (copyOf(value, false) ?? JSON.parse(JSON.stringify(value) ?? "null")) as T;
}

/**
 * A copy of a message that equals what {@link decodeLine} makes of its {@link encodeMessage} line (what
 * the engine reads), like {@link copyMessage}; also `null` where the decoder rejects the line (a lone
 * surrogate in a string or a key).
 *
 * @example
 * ```ts
 * import { copyIncoming } from "./codec.ts";
 * const params = { npc: "gorm", line: "Hello.", context: undefined };
 * const copy = copyIncoming({ jsonrpc: "2.0", id: 1, method: "npc/talk", params });
 * // copy: {"jsonrpc":"2.0","id":1,"method":"npc/talk","params":{"npc":"gorm","line":"Hello."}}
 * copyIncoming({ jsonrpc: "2.0", id: 2, method: "npc/talk", params: { line: "\ud800" } }); // null
 * ```
 */
export function copyIncoming(message: object): JsonObject | null {
  return copyOf(message, true) as JsonObject | null;
}

/**
 * Encodes a message a client sends to the bridge as one compact JSON line (no trailing newline). Throws a
 * TypeError for a message the bridge could not read: what `JSON.stringify` throws for (a BigInt, a cycle),
 * a string or key holding an unpaired UTF-16 surrogate, and arrays and objects nested deeper than
 * {@link MAX_DEPTH} levels (the error names the param that holds them, e.g. `params.schema`). The bridge refuses such a line as a whole with
 * `-32700` and id null, so no response could ever name the request; a client refuses to send it instead.
 *
 * @example
 * ```ts
 * import { encodeClientMessage } from "./codec.ts";
 * encodeClientMessage({ jsonrpc: "2.0", id: 1, method: "ping" }); // '{"jsonrpc":"2.0","id":1,"method":"ping"}'
 * const half = "🙂".slice(0, 1); // half of a surrogate pair
 * try {
 *   encodeClientMessage({ jsonrpc: "2.0", id: 2, method: "npc/talk", params: { line: half } });
 * } catch (error) {
 *   error instanceof TypeError; // true
 * }
 * ```
 */
export function encodeClientMessage(message: object): string {
  const text = JSON.stringify(message);
  // A line shorter than 2*MAX_DEPTH characters cannot nest deeper than MAX_DEPTH (the decoder's shortcut).
  if (text.length > 2 * MAX_DEPTH && exceedsDepth(message as JsonValue, MAX_DEPTH)) {
    const where = tooDeepPath(message as JsonValue);
    throw new TypeError(
      `${
        where ? `'${where}'` : "The message"
      } nests arrays and objects deeper than the ${MAX_DEPTH} levels the ` +
        "bridge reads; flatten it.",
    );
  }
  // JSON.stringify writes a lone surrogate as a \uXXXX escape: only a line holding one needs the scan.
  if (text.includes("\\u") && SURROGATE_ESCAPE.test(text)) {
    if (unpairedSurrogateAt(text) !== -1) {
      const where = malformedStringPath(message, "", 0);
      throw new TypeError(
        `${where ? `'${where}'` : "A string of the message"} holds an unpaired UTF-16 surrogate, which the ` +
          "bridge cannot read; cut text at code point boundaries (for example with Array.from(text)).",
      );
    }
  }
  return text;
}

/**
 * The path of the outermost member of `message` that holds nesting deeper than {@link MAX_DEPTH} (counting
 * from the message itself): `params.schema` rather than the hundred keys below it, or "".
 */
function tooDeepPath(message: JsonValue): string {
  let value = message;
  let path = "";
  for (let depth = 1; typeof value === "object" && value !== null; depth++) {
    const entries: [string, JsonValue][] = Array.isArray(value)
      ? value.map((v, i) => [`${path}[${i}]`, v])
      : Object.entries(value).map(([k, v]) => [path ? `${path}.${k}` : k, v]);
    const deep = entries.find(([, v]) =>
      typeof v === "object" && v !== null && exceedsDepth(v, MAX_DEPTH - depth)
    );
    if (deep === undefined) return path;
    [path, value] = deep;
    if (path.includes(".")) return path; // params.<name>: deep enough to name it
  }
  return path;
}

/** The path (`params.line`, `params.tags[2]`) of the first string or key that is not well-formed, or "". */
function malformedStringPath(value: unknown, path: string, depth: number): string {
  if (typeof value === "string") return value.isWellFormed() ? "" : path;
  if (typeof value !== "object" || value === null || depth > MAX_DEPTH) return "";
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = malformedStringPath(value[i], `${path}[${i}]`, depth + 1);
      if (found) return found;
    }
    return "";
  }
  for (const [key, item] of Object.entries(value)) {
    const at = path ? `${path}.${key}` : key;
    if (!key.isWellFormed()) return at;
    const found = malformedStringPath(item, at, depth + 1);
    if (found) return found;
  }
  return "";
}

const HAS_LINE_SEPARATOR = /[\u2028\u2029]/;
const LINE_SEPARATORS = /[\u2028\u2029]/g;

/** Encodes one outgoing message as a single compact JSON line (no trailing newline). */
export function encodeMessage(message: JsonObject): string {
  const text = JSON.stringify(message);
  return HAS_LINE_SEPARATOR.test(text)
    ? text.replace(LINE_SEPARATORS, (c) => c === "\u2028" ? "\\u2028" : "\\u2029")
    : text;
}
