/**
 * Request-field compatibility across OpenAI-compatible servers. Optional sampling fields are sent "where
 * supported": when a server answers HTTP 400 naming one of them as unknown or unsupported, the field is
 * dropped (or `max_tokens` is renamed to `max_completion_tokens`, which OpenAI's reasoning models demand)
 * and the request is sent again. A refused `tool_choice` makes the steps send only their callable tools
 * ({@link FieldCompatibility.narrowTools}). What was learned is remembered per model instance, so later
 * steps do not pay for the failed round trip again.
 * @module
 */
import type { JsonObject } from "../protocol/json.ts";
import type { ServerErrorInfo } from "./openai_errors.ts";

/** Fields the backend may drop when a server does not support them. */
export const OPTIONAL_FIELDS = ["top_k", "seed", "top_p", "stream_options"] as const;

const UNSUPPORTED =
  /unrecogni[sz]ed|unsupported|not supported|unknown|not permitted|not allowed|extra (inputs|fields)/i;

/** What a model instance learned about its server's accepted fields. */
export class FieldCompatibility {
  /** Fields the server rejected. */
  readonly dropped = new Set<string>();
  /** Whether the server wants `max_completion_tokens` instead of `max_tokens`. */
  useMaxCompletionTokens = false;
  /**
   * Whether the server refused a `tool_choice` (`"none"` with tools present, or a named tool): each step then
   * sends only its callable tools, as servers without tool choices expect (the prompt's tool list then
   * changes from step to step).
   */
  narrowTools = false;

  /** Applies what was learned to a request body (in place) and returns it. */
  apply(body: JsonObject): JsonObject {
    if (this.useMaxCompletionTokens && Object.hasOwn(body, "max_tokens")) {
      body.max_completion_tokens = body.max_tokens;
      delete body.max_tokens;
    }
    for (const field of this.dropped) delete body[field];
    return body;
  }

  /**
   * Learns from an HTTP 400 answer to `body`. Returns true when the request should be sent again (the
   * body was adjusted), false when the error is not about an optional field.
   */
  learn(body: JsonObject, info: ServerErrorInfo): boolean {
    const { message, param } = info;
    if (
      Object.hasOwn(body, "max_tokens") && !this.useMaxCompletionTokens &&
      (/max_completion_tokens/.test(message) || (param === "max_tokens" && UNSUPPORTED.test(message)))
    ) {
      this.useMaxCompletionTokens = true;
      this.apply(body);
      return true;
    }
    if (
      Object.hasOwn(body, "tool_choice") && !this.narrowTools &&
      (param === "tool_choice" || /tool_choice/.test(message))
    ) {
      this.narrowTools = true;
      return true;
    }
    if (!UNSUPPORTED.test(message)) return false;
    for (const field of OPTIONAL_FIELDS) {
      if (!Object.hasOwn(body, field) || this.dropped.has(field)) continue;
      if (param === field || new RegExp(`(^|[^A-Za-z0-9_])${field}([^A-Za-z0-9_]|$)`).test(message)) {
        this.dropped.add(field);
        this.apply(body);
        return true;
      }
    }
    return false;
  }
}
