/**
 * Reads a request body as text within a size limit and a time limit: a declared length over the limit is
 * refused before reading, a chunked body is cut off as soon as it passes the limit, and a body still arriving
 * at the deadline (a client that trickles it or never ends it) is refused with 408.
 * @module
 */
import { OpenAIError } from "./openai_error.ts";

function tooLarge(limit: number): OpenAIError {
  return new OpenAIError({
    status: 413,
    message:
      `The request body is larger than the limit of ${limit} bytes (${sizeText(limit)}): send a shorter ` +
      "request, or start the server with a larger --max-body-bytes.",
    type: "invalid_request_error",
    code: "malformed_request",
  });
}

/** A byte count as people read it: 4 MiB, 2 KiB, 1536 bytes. */
function sizeText(bytes: number): string {
  for (const [unit, size] of [["GiB", 2 ** 30], ["MiB", 2 ** 20], ["KiB", 2 ** 10]] as const) {
    if (bytes >= size) {
      const value = bytes / size;
      return `${Number.isInteger(value) ? value : value.toFixed(1)} ${unit}`;
    }
  }
  return `${bytes} bytes`;
}

/** 408 for a body that did not arrive within `timeoutMs`. */
function tooSlow(timeoutMs: number): OpenAIError {
  const seconds = timeoutMs / 1000;
  return new OpenAIError({
    status: 408,
    message:
      `The request body did not arrive within ${seconds} second${seconds === 1 ? "" : "s"}: send it whole, ` +
      "or start the server with a larger --timeout (seconds per completion, body included).",
    type: "invalid_request_error",
    code: "request_timeout",
  });
}

/** 400 for a body the connection broke in the middle of (the client went away). */
function cutOff(): OpenAIError {
  return OpenAIError.invalidRequest(
    "The request body ended early: the connection broke.",
    null,
    "malformed_request",
  );
}

/**
 * When a body must have arrived: `deadline` (epoch ms) and the time limit it came from (for the message);
 * `stop` aborts the read when the server stops (a 503 `server_shutting_down`).
 */
export interface BodyDeadline {
  deadline: number;
  timeoutMs: number;
  stop?: AbortSignal;
}

/**
 * The body of `request` as UTF-8 text, or a 413 {@link OpenAIError} past `body.limit` bytes, a 408 when it is
 * still arriving at `body.time.deadline`, a 400 for invalid UTF-8 or a connection that broke in the middle.
 */
export async function readBodyText(
  request: Request,
  body: { limit: number; time?: BodyDeadline },
): Promise<string> {
  const { limit, time } = body;
  const declared = request.headers.get("content-length");
  if (declared !== null && Number(declared) > limit) {
    await request.body?.cancel().catch(() => {});
    throw tooLarge(limit);
  }
  if (request.body === null) return "";
  const reader = request.body.getReader();
  const parts: Uint8Array[] = [];
  let size = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let onStop: (() => void) | undefined;
  const late = time === undefined ? null : new Promise<"late" | "stopping">((resolve) => {
    timer = setTimeout(() => resolve("late"), Math.max(0, time.deadline - Date.now()));
    onStop = () => resolve("stopping");
    if (time.stop?.aborted) onStop();
    else time.stop?.addEventListener("abort", onStop, { once: true });
  });
  try {
    for (;;) {
      let read: ReadableStreamReadResult<Uint8Array> | "late" | "stopping";
      try {
        read = await (late === null ? reader.read() : Promise.race([reader.read(), late]));
      } catch {
        throw cutOff();
      }
      if (read === "late" || read === "stopping") {
        reader.cancel().catch(() => {});
        throw read === "late" ? tooSlow(time!.timeoutMs) : OpenAIError.shuttingDown(503);
      }
      const { value, done } = read;
      if (done) break;
      size += value.length;
      if (size > limit) {
        await reader.cancel().catch(() => {});
        throw tooLarge(limit);
      }
      parts.push(value);
    }
  } finally {
    clearTimeout(timer);
    if (onStop) time?.stop?.removeEventListener("abort", onStop);
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
