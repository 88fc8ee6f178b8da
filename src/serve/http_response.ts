/**
 * The builders of every HTTP response the server makes: JSON bodies, OpenAI error responses, event streams
 * and bodiless answers. Each carries `X-Content-Type-Options: nosniff` from the moment it is built (a header
 * added to a finished response would be one more place to forget), so a browser never guesses another type
 * than the one the server names.
 * @module
 */
import { compactJson, type JsonValue } from "../protocol/json.ts";
import type { OpenAIError } from "./openai_error.ts";

/** The headers every response carries: a browser takes its `content-type` as given. */
export const COMMON_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  "x-content-type-options": "nosniff",
});

/** `body` (null for none) with the {@link COMMON_HEADERS} and `headers`. */
export function plainResponse(
  body: BodyInit | null,
  options: { status?: number; headers?: Record<string, string> } = {},
): Response {
  const { status = 200, headers = {} } = options;
  return new Response(body, { status, headers: { ...COMMON_HEADERS, ...headers } });
}

/** `body` as compact JSON with `content-type: application/json` (status 200 unless given). */
export function jsonResponse(
  body: JsonValue,
  options: { status?: number; headers?: Record<string, string> } = {},
): Response {
  const { status = 200, headers = {} } = options;
  return plainResponse(compactJson(body), {
    status,
    headers: { "content-type": "application/json", ...headers },
  });
}

/** A stream of server-sent events (status 200), unbuffered by proxies. */
export function eventStreamResponse(body: ReadableStream<Uint8Array>): Response {
  return plainResponse(body, {
    headers: {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache",
      "x-accel-buffering": "no",
    },
  });
}

const errors = new WeakMap<Response, OpenAIError>();

/** The response of an error: its status, its body and its `Retry-After`. */
export function errorResponse(error: OpenAIError, headers: Record<string, string> = {}): Response {
  const response = jsonResponse(error.toJson(), {
    status: error.status,
    headers: { ...error.headers(), ...headers },
  });
  errors.set(response, error);
  return response;
}

/** The error a response made by {@link errorResponse} answers with (null for any other response). */
export function errorOf(response: Response): OpenAIError | null {
  return errors.get(response) ?? null;
}
