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
