/**
 * Reads a request body as text within a size limit: a declared length over the limit is refused before
 * reading, and a chunked body is cut off as soon as it passes the limit.
 * @module
 */
import { OpenAIError } from "./openai_error.ts";

function tooLarge(limit: number): OpenAIError {
  return new OpenAIError({
    status: 413,
    message: `The request body is larger than the limit of ${limit} bytes.`,
    type: "invalid_request_error",
    code: "malformed_request",
  });
}

/**
 * The body of `request` as UTF-8 text, or a 413 {@link OpenAIError} past `limit` bytes (400 for invalid
 * UTF-8).
 */
export async function readBodyText(request: Request, limit: number): Promise<string> {
  const declared = request.headers.get("content-length");
  if (declared !== null && Number(declared) > limit) {
    await request.body?.cancel().catch(() => {});
    throw tooLarge(limit);
  }
  if (request.body === null) return "";
  const reader = request.body.getReader();
  const parts: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    size += value.length;
    if (size > limit) {
      await reader.cancel().catch(() => {});
      throw tooLarge(limit);
    }
    parts.push(value);
  }
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const part of parts) {
    bytes.set(part, offset);
    offset += part.length;
  }
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw OpenAIError.invalidRequest("The request body is not valid UTF-8.", null, "invalid_json");
  }
}
