/**
 * Maps failures of an OpenAI-compatible server onto the protocol's error codes (PROTOCOL.md §8).
 *
 * | Server answer | `data.code` |
 * |---|---|
 * | 401, 403 | `model_unavailable` (`data.reason: "auth"`) |
 * | 404 | `model_unavailable` (`data.reason: "not_found"`) |
 * | 429 | `rate_limited`, `data.retryAfterSeconds` / `data.retryAfter` from `Retry-After` |
 * | 503 | `model_unavailable` (server loading or overloaded; `Retry-After` copied when sent) |
 * | 400/413 about the context length | `context_size_exceeded` |
 * | other 4xx, 5xx, 408/504 | `generation_failed` |
 * | connection refused / DNS failure | `model_unavailable` |
 * | inactivity timeout | `generation_failed` |
 * | `finish_reason: "content_filter"` | `guardrail_violation` |
 * | `message.refusal` | `refusal` |
 *
 * `data` always carries what the server said: `status` (HTTP status, when there was one), `serverMessage`,
 * and `serverCode` / `serverType` / `serverParam` from the OpenAI error envelope when present.
 * @module
 */
import { BridgeError } from "../protocol/errors.ts";
import { isJsonObject, type JsonObject, type JsonValue } from "../protocol/json.ts";
import { fetchFailure } from "../util/fetch_failure.ts";
import { truncateText } from "../util/text.ts";

const MAX_SERVER_MESSAGE = 1000;

/** Message, code and type of an OpenAI error envelope `{"error": {message, type, code}}` or a raw body. */
export interface ServerErrorInfo {
  /** The server's message (or its raw body), cut to 1000 characters. */
  message: string;
  /** `error.code` (e.g. `context_length_exceeded`, or llama.cpp's HTTP status number as text). */
  code?: string;
  /** `error.type` (e.g. `exceed_context_size_error`). */
  type?: string;
  /** `error.param`: the request field the error is about (OpenAI). */
  param?: string;
}

function cut(text: string): string {
  const trimmed = text.trim();
  return truncateText(trimmed, MAX_SERVER_MESSAGE);
}

/** Reads the error envelope from a parsed body (`{"error": {...}}`, `{"error": "..."}`, `{"message": ...}`). */
export function serverErrorInfo(body: JsonValue | undefined, rawText = ""): ServerErrorInfo {
  let node: JsonValue | undefined = body;
  if (isJsonObject(node) && Object.hasOwn(node, "error")) node = node.error;
  if (typeof node === "string") return { message: cut(node) };
  if (isJsonObject(node)) {
    const info: ServerErrorInfo = {
      message: typeof node.message === "string" ? cut(node.message) : cut(rawText),
    };
    if (Object.hasOwn(node, "code") && (typeof node.code === "string" || typeof node.code === "number")) {
      info.code = String(node.code);
    }
    if (Object.hasOwn(node, "type") && typeof node.type === "string") info.type = node.type;
    if (Object.hasOwn(node, "param") && typeof node.param === "string") info.param = node.param;
    return info;
  }
  return { message: cut(rawText) };
}

function infoData(info: ServerErrorInfo, status?: number): JsonObject {
  const data: JsonObject = {};
  if (status !== undefined) data.status = status;
  data.serverMessage = info.message;
  if (info.code !== undefined) data.serverCode = info.code;
  if (info.type !== undefined) data.serverType = info.type;
  if (info.param !== undefined) data.serverParam = info.param;
  return data;
}

const CONTEXT_PATTERN =
  /context[ _-]?(length|size|window)|maximum context|exceeds? the (available )?context|too many tokens|prompt is too long|input is too long/i;

/** True when a server error is about the prompt not fitting into the context window. */
export function isContextError(info: ServerErrorInfo): boolean {
  return info.type === "exceed_context_size_error" || info.code === "context_length_exceeded" ||
    CONTEXT_PATTERN.test(info.message);
}

/**
 * Parses a `Retry-After` header (delay-seconds or an HTTP date) into whole seconds (rounded up) and an ISO
 * 8601 timestamp. Returns `null` when absent or unparsable.
 */
export function parseRetryAfter(
  header: string | null,
  now: number = Date.now(),
): { seconds: number; at: string } | null {
  if (header === null) return null;
  const text = header.trim();
  let seconds: number;
  if (/^\d+(\.\d+)?$/.test(text)) {
    seconds = Math.ceil(Number(text));
  } else {
    const date = Date.parse(text);
    if (Number.isNaN(date)) return null;
    seconds = Math.max(0, Math.ceil((date - now) / 1000));
  }
  if (!Number.isFinite(seconds)) return null;
  return { seconds, at: new Date(now + seconds * 1000).toISOString() };
}

/** Maps an HTTP error answer to a BridgeError. */
export function httpError(
  status: number,
  context: { info: ServerErrorInfo; model: string; url: string; retryAfter: string | null },
): BridgeError {
  const { info } = context;
  const data = infoData(info, status);
  const said = info.message === "" ? "" : `: ${info.message}`;
  if (status === 401 || status === 403) {
    data.reason = "auth";
    return BridgeError.of(
      "model_unavailable",
      `The model server rejected the credentials (HTTP ${status})${said}`,
      data,
    );
  }
  if (status === 404) {
    data.reason = "not_found";
    return BridgeError.of(
      "model_unavailable",
      `The model server has no model '${context.model}' or no endpoint ${context.url} (HTTP 404)${said}`,
      data,
    );
  }
  const retry = parseRetryAfter(context.retryAfter);
  if (retry !== null) {
    data.retryAfterSeconds = retry.seconds;
    data.retryAfter = retry.at;
  }
  if (status === 429) {
    return BridgeError.of(
      "rate_limited",
      `The model server is rate limiting requests (HTTP 429)${said}`,
      data,
    );
  }
  if (status === 503) {
    return BridgeError.of("model_unavailable", `The model server is unavailable (HTTP 503)${said}`, data);
  }
  if ((status === 400 || status === 413 || status === 422) && isContextError(info)) {
    return BridgeError.of(
      "context_size_exceeded",
      `The conversation exceeds the model's context size${said}`,
      data,
    );
  }
  return BridgeError.of("generation_failed", `The model server answered HTTP ${status}${said}`, data);
}

/** The server's error back from the `data` of a BridgeError made by {@link httpError}. */
export function infoFromData(data: JsonObject): ServerErrorInfo {
  const info: ServerErrorInfo = { message: typeof data.serverMessage === "string" ? data.serverMessage : "" };
  if (typeof data.serverCode === "string") info.code = data.serverCode;
  if (typeof data.serverType === "string") info.type = data.serverType;
  if (typeof data.serverParam === "string") info.param = data.serverParam;
  return info;
}

/** Maps an `{"error": …}` object received inside an SSE stream (after the 200 status). */
export function streamError(info: ServerErrorInfo): BridgeError {
  const data = infoData(info);
  const said = info.message === "" ? "" : `: ${info.message}`;
  if (isContextError(info)) {
    return BridgeError.of(
      "context_size_exceeded",
      `The conversation exceeds the model's context size${said}`,
      data,
    );
  }
  return BridgeError.of(
    "generation_failed",
    `The model server reported an error while streaming${said}`,
    data,
  );
}

/** A malformed answer (bad JSON, bad SSE, missing fields). */
export function malformed(what: string, data: JsonObject = {}): BridgeError {
  return BridgeError.of("generation_failed", `The model server sent a malformed answer: ${what}`, data);
}

/**
 * Maps a network failure of `fetch` (connection refused, DNS, TLS, reset) of `at.url`. Deno's refusal of a
 * network grant this process lacks ("Requires net access to "<host>", run again with the --allow-net flag")
 * is said with `at.advice` for that host instead, when it has some.
 */
export function networkError(
  error: unknown,
  at: { url: string; advice?: ((host: string) => string | null) | undefined },
): BridgeError {
  const { url, advice } = at;
  const message = fetchFailure(error);
  const host = /Requires net access to "([^"]+)"/.exec(message)?.[1];
  const said = host === undefined || advice === undefined ? null : advice(host);
  return BridgeError.of(
    "model_unavailable",
    `Cannot reach the model server at ${url}: ${said ?? cut(message)}`,
    {
      reason: "unreachable",
      serverMessage: cut(message),
    },
  ).withCause(error);
}

/** The inactivity timeout fired. */
export function timeoutError(timeoutMs: number, phase: string): BridgeError {
  return BridgeError.of(
    "generation_failed",
    `Timed out: the model server sent nothing for ${timeoutMs / 1000} s (${phase}).`,
    { reason: "timeout", timeoutMs },
  );
}
