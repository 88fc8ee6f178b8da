/**
 * Maps the plugin's error events (`{code, message, detail}`) to protocol BridgeErrors (PROTOCOL.md §8).
 * @module
 */
import { AGENT_ERROR_CODES, BridgeError, type ErrorName } from "../protocol/errors.ts";
import type { JsonObject } from "../protocol/json.ts";

const DEFAULT_MESSAGES: Record<string, string> = {
  model_unavailable: "The system model is unavailable.",
  guardrail_violation: "The request tripped the model's safety guardrails.",
  refusal: "The model refused to respond.",
  context_size_exceeded: "The conversation exceeds the model's context size.",
  rate_limited: "The system model is rate limited.",
  unsupported_language: "The prompt's language is not supported by the model.",
  invalid_schema: "The schema cannot be used by the model.",
  invalid_request: "The model rejected the request.",
  busy: "The model session was busy.",
  generation_failed: "The model failed.",
  tool_failed: "A tool failed.",
};

function nonNegativeInt(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) && value >= 0 ? Math.ceil(value) : undefined;
}

/** `data.retryAfter` (ISO 8601) and `data.retryAfterSeconds` (integer, rounded up) from either one. */
export function retryAfterData(detail: Record<string, unknown>, now = Date.now()): JsonObject {
  const data: JsonObject = {};
  let seconds = nonNegativeInt(detail.retryAfterSeconds);
  let iso: string | undefined;
  if (typeof detail.retryAfter === "string") {
    const at = Date.parse(detail.retryAfter);
    if (Number.isFinite(at)) {
      iso = new Date(at).toISOString();
      if (seconds === undefined) seconds = Math.max(0, Math.ceil((at - now) / 1000));
    }
  }
  if (iso === undefined && seconds !== undefined) iso = new Date(now + seconds * 1000).toISOString();
  if (iso !== undefined) data.retryAfter = iso;
  if (seconds !== undefined) data.retryAfterSeconds = seconds;
  return data;
}

/**
 * The BridgeError for a plugin error. Unknown codes become `generation_failed`; the plugin-only code
 * `unsupported` (an op or capability this OS lacks) becomes `invalid_request`.
 */
export function pluginErrorToBridge(
  code: string,
  error: { message: string; detail?: Record<string, unknown> },
): BridgeError {
  const { message, detail = {} } = error;
  if (code === "cancelled") return BridgeError.cancelled();
  if (code === "unsupported") {
    return BridgeError.of("invalid_request", message || "The system model does not support this request.");
  }
  const known = (AGENT_ERROR_CODES as readonly string[]).includes(code);
  const name = (known ? code : "generation_failed") as ErrorName;
  const text = message || DEFAULT_MESSAGES[name] || "The model failed.";
  const data: JsonObject = {};
  switch (name) {
    case "model_unavailable":
      if (typeof detail.reason === "string") data.reason = detail.reason;
      break;
    case "context_size_exceeded": {
      const contextSize = nonNegativeInt(detail.contextSize);
      const tokenCount = nonNegativeInt(detail.tokenCount);
      if (contextSize !== undefined) data.contextSize = contextSize;
      if (tokenCount !== undefined) data.tokenCount = tokenCount;
      break;
    }
    case "rate_limited":
      Object.assign(data, retryAfterData(detail));
      break;
    case "invalid_schema":
      if (typeof detail.path === "string") data.path = detail.path;
      if (typeof detail.schemaPath === "string") data.schemaPath = detail.schemaPath;
      break;
  }
  return BridgeError.of(name, text, data);
}

/** What a turn on a device that cannot run the on-device model can do instead. */
const ELSEWHERE =
  "Apple's on-device model runs on Apple silicon Macs with Apple Intelligence only; give the session, NPC, " +
  `decision or generation another model: {"type": "scripted", …}, "openai" or "llama".`;

/**
 * `-32001 model_unavailable` naming the reason (and the load problem, when there was one; on a device that
 * cannot run the model, what to use instead).
 */
export function modelUnavailableError(reason: string, detail?: string): BridgeError {
  const said = detail ?? (reason === "device_not_eligible" ? ELSEWHERE : undefined);
  const suffix = said ? ` ${said}` : "";
  return BridgeError.of("model_unavailable", `The system model is unavailable (${reason}).${suffix}`, {
    reason,
  });
}
