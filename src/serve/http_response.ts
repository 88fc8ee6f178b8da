/**
 * Small builders of HTTP responses: JSON bodies and OpenAI error responses.
 * @module
 */
import { compactJson, type JsonValue } from "../protocol/json.ts";
import type { OpenAIError } from "./openai_error.ts";

/** `body` as compact JSON with `content-type: application/json` (status 200 unless given). */
export function jsonResponse(
  body: JsonValue,
  options: { status?: number; headers?: Record<string, string> } = {},
): Response {
  const { status = 200, headers = {} } = options;
  return new Response(compactJson(body), {
    status,
    headers: { "content-type": "application/json", ...headers },
  });
}

/** The response of an error: its status, its body and its `Retry-After`. */
export function errorResponse(error: OpenAIError, headers: Record<string, string> = {}): Response {
  return jsonResponse(error.toJson(), { status: error.status, headers: { ...error.headers(), ...headers } });
}
