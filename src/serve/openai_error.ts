/**
 * Errors of the OpenAI-compatible server in OpenAI's envelope, `{"error": {message, type, param, code}}`, with
 * the HTTP status each one is answered with, and the mapping from the bridge's agent errors.
 * @module
 */
import { type BridgeError, toBridgeError } from "../protocol/errors.ts";
import type { JsonObject } from "../protocol/json.ts";

/**
 * Reasons a model stays unavailable however long a client waits: the on-device model's
 * `device_not_eligible` and `apple_intelligence_not_enabled`, an OpenAI-compatible backend's `auth` and
 * `not_found`.
 */
const PERMANENTLY_UNAVAILABLE = new Set([
  "device_not_eligible",
  "apple_intelligence_not_enabled",
  "auth",
  "not_found",
]);

/** Fields of an {@link OpenAIError}. */
export interface OpenAIErrorInit {
  /** HTTP status. */
  status: number;
  /** Human-readable message. */
  message: string;
  /** OpenAI error type: `invalid_request_error`, `server_error`, `rate_limit_error`, … */
  type: string;
  /** The request field at fault (`messages[1].tool_calls[0].id`), or null. */
  param?: string | null;
  /** A stable code (`invalid_value`, `model_not_found`, …), or null. */
  code?: string | null;
  /** Seconds after which a retry may succeed (`Retry-After`). */
  retryAfter?: number;
  /** False: a retry cannot succeed (`x-should-retry: false`, which OpenAI's SDKs obey). */
  retryable?: boolean;
}

/**
 * An error answered in OpenAI's shape.
 *
 * @example
 * ```ts
 * import { OpenAIError } from "./openai_error.ts";
 * const error = OpenAIError.invalidRequest("'n' must be 1.", "n", "invalid_value");
 * error.status; // 400
 * error.toJson(); // {error: {message: "'n' must be 1.", type: "invalid_request_error", param: "n", code: "invalid_value"}}
 * ```
 */
export class OpenAIError extends Error {
  /** HTTP status. */
  readonly status: number;
  /** OpenAI error type. */
  readonly type: string;
  /** The request field at fault, or null. */
  readonly param: string | null;
  /** A stable code, or null. */
  readonly code: string | null;
  /** Seconds for `Retry-After`, if any. */
  readonly retryAfter: number | undefined;
  /** False when a retry cannot succeed. */
  readonly retryable: boolean;

  /** Creates an error. */
  constructor(init: OpenAIErrorInit) {
    super(init.message);
    this.name = "OpenAIError";
    this.status = init.status;
    this.type = init.type;
    this.param = init.param ?? null;
    this.code = init.code ?? null;
    this.retryAfter = init.retryAfter;
    this.retryable = init.retryable ?? true;
  }

  /** A 400 `invalid_request_error`. */
  static invalidRequest(
    message: string,
    param: string | null = null,
    code: string | null = null,
  ): OpenAIError {
    return new OpenAIError({ status: 400, message, type: "invalid_request_error", param, code });
  }

  /** A 500 `server_error`. */
  static server(message: string, code: string | null = null): OpenAIError {
    return new OpenAIError({ status: 500, message, type: "server_error", code });
  }

  /**
   * `server_shutting_down`: the server is stopping (503 for the completions it cancels, 500 for a request
   * that arrives meanwhile). With `x-should-retry: false`: an SDK's retry would only meet the closed port
   * and report a connection error instead of this message.
   */
  static shuttingDown(status: 500 | 503): OpenAIError {
    return new OpenAIError({
      status,
      message: "The server is shutting down.",
      type: "server_error",
      code: "server_shutting_down",
      retryable: false,
    });
  }

  /** The 500 `cancelled` that ends a completion whose client closed the connection. */
  static clientGone(): OpenAIError {
    return OpenAIError.server("The client closed the connection.", "cancelled");
  }

  /** A 504 `timeout` after `seconds` ("1 second", "0.5 seconds", "120 seconds"). */
  static timeout(seconds: number): OpenAIError {
    return new OpenAIError({
      status: 504,
      message: `The request did not finish within ${seconds} second${seconds === 1 ? "" : "s"}.`,
      type: "server_error",
      code: "timeout",
    });
  }

  /**
   * The 429 `rate_limited` of a request that finds the queue full (`limit` completions run at once,
   * `maxQueued` wait), with what to change.
   */
  static queueFull(limit: number, maxQueued: number): OpenAIError {
    return new OpenAIError({
      status: 429,
      message: `Too many requests are waiting for the model: ${running(limit)} at a time and ${maxQueued} ` +
        "may wait. Retry shortly, or start the server with a higher --max-queued (or --max-concurrent).",
      type: "rate_limit_error",
      code: "rate_limited",
      retryAfter: 1,
    });
  }

  /**
   * The 504 `timeout` of a request that waited its whole time limit (`seconds`) in the queue and never
   * started, with what to change (`limit` completions run at once).
   */
  static queueTimeout(seconds: number, limit: number): OpenAIError {
    const runs = running(limit);
    return new OpenAIError({
      status: 504,
      message:
        `The request waited ${seconds} second${seconds === 1 ? "" : "s"} for a free slot and did not ` +
        `start: ${runs} at a time and the time limit includes the wait. Retry later, or start the server ` +
        "with a higher --max-concurrent or --timeout.",
      type: "server_error",
      code: "timeout",
    });
  }

  /** The body: `{"error": {message, type, param, code}}`. */
  toJson(): JsonObject {
    return { error: { message: this.message, type: this.type, param: this.param, code: this.code } };
  }

  /**
   * `503 model_unavailable`. Waiting cannot help when the `reason` is permanent (a device that cannot run
   * the model, Apple Intelligence turned off, credentials or a model id the backend refuses): then no
   * `Retry-After` and `x-should-retry: false`, so an SDK fails at once instead of retrying for a minute.
   * Otherwise `Retry-After` is the backend's own (`retryAfterSeconds`) or 30 seconds.
   */
  static modelUnavailable(message: string, reason: unknown, retryAfterSeconds?: unknown): OpenAIError {
    const init = { status: 503, message, type: "server_error", code: "model_unavailable" };
    if (typeof reason === "string" && PERMANENTLY_UNAVAILABLE.has(reason)) {
      return new OpenAIError({ ...init, retryable: false });
    }
    const after = typeof retryAfterSeconds === "number" && retryAfterSeconds >= 0
      ? Math.max(1, Math.ceil(retryAfterSeconds))
      : 30;
    return new OpenAIError({ ...init, retryAfter: after });
  }

  /** Headers this error adds (`Retry-After`, `x-should-retry`). */
  headers(): Record<string, string> {
    const headers: Record<string, string> = {};
    if (this.retryAfter !== undefined) headers["retry-after"] = String(this.retryAfter);
    if (!this.retryable) headers["x-should-retry"] = "false";
    return headers;
  }
}

/** "1 completion runs", "4 completions run". */
function running(limit: number): string {
  return limit === 1 ? "1 completion runs" : `${limit} completions run`;
}

/**
 * Maps a failure of a turn (a BridgeError from the agent or a model, or anything thrown) to the closest
 * OpenAI error. Never exposes a stack trace.
 */
export function fromAgentError(error: unknown): OpenAIError {
  if (error instanceof OpenAIError) return error;
  const e: BridgeError = toBridgeError(error);
  const mapped = openAIErrorOf(e);
  mapped.cause = e;
  return mapped;
}

function openAIErrorOf(e: BridgeError): OpenAIError {
  const message = e.message;
  const request = (code: string | null, param: string | null = null) =>
    new OpenAIError({ status: 400, message, type: "invalid_request_error", param, code });
  switch (e.dataCode) {
    case "model_unavailable":
      return OpenAIError.modelUnavailable(message, e.data.reason, e.data.retryAfterSeconds);
    case "guardrail_violation":
      return new OpenAIError({
        status: 400,
        message: `The request was blocked by the model's safety guardrails. ${message}`,
        type: "invalid_request_error",
        param: "messages",
        code: "content_filter",
      });
    case "refusal":
      return request("refusal");
    case "context_size_exceeded":
      return request("context_length_exceeded", "messages");
    case "unsupported_language":
      return request("unsupported_language", "messages");
    case "invalid_schema":
      return request("invalid_schema");
    case "invalid_request":
    case "invalid_params":
      return request(null);
    case "rate_limited": {
      const after = typeof e.data.retryAfterSeconds === "number" ? e.data.retryAfterSeconds : 1;
      return new OpenAIError({
        status: 429,
        message,
        type: "rate_limit_error",
        code: "rate_limited",
        retryAfter: Math.max(1, Math.ceil(after)),
      });
    }
    case "busy":
      return new OpenAIError({ status: 503, message, type: "server_error", code: "busy", retryAfter: 1 });
    case "timeout":
      return new OpenAIError({ status: 504, message, type: "server_error", code: "timeout" });
    case "tool_failed":
      return OpenAIError.server(message, "tool_failed");
    case "generation_failed": {
      // An answer that is not JSON or misses the response schema (a backend's or a script's invalid answer).
      const json = typeof e.data.problem === "string" &&
        /response schema|not valid JSON/.test(e.data.problem);
      // Invalid answers the backend already asked for again (each time saying what was wrong): an SDK's retry
      // would only run the same attempts again, so `x-should-retry: false`. A scripted error stays retryable.
      const retried = typeof e.data.attempts === "number" && e.data.attempts > 1;
      return new OpenAIError({
        status: 500,
        message,
        type: "server_error",
        code: json ? "invalid_json_output" : null,
        retryable: !retried,
      });
    }
    case "cancelled":
    case "shut_down":
      return OpenAIError.server(message, "cancelled");
    default:
      return OpenAIError.server(message);
  }
}
