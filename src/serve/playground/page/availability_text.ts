/**
 * How the page says whether the bridge's model can answer (the model pill, the Model tab): in words, not the
 * protocol's reason values (`unknown`, `device_not_eligible`, …), which stay on the wire. Pure: no DOM.
 * @module
 */
import type { ModelAvailability } from "../../../client/types.ts";

/** Why the model is unavailable, in words, for the protocol's reasons (`unknown` has none: the detail says). */
const WHY: Record<string, string> = {
  device_not_eligible: "this device cannot run Apple Intelligence",
  apple_intelligence_not_enabled: "Apple Intelligence is turned off (System Settings)",
  model_not_ready: "the model is still downloading",
};

/**
 * How the model's availability reads: "available", "unavailable: <why>" (the reason in words, then the detail),
 * or, before the bridge said, "availability unknown" — or, while the bridge is still checking its model
 * (`checking`: the model's kind, as `/playground/info.json` names it), "loading the model…" for a GGUF model
 * (`llama`: the bridge loads it before it answers, seconds or more) and "checking…" for the others; or, while
 * the page is not connected to the bridge (`connected` false: it went away), "not known (not connected)".
 *
 * @example
 * ```ts
 * import { availabilityText } from "./availability_text.ts";
 * availabilityText({ available: false, reason: "unknown", detail: "Cannot reach the model server" });
 * // "unavailable: Cannot reach the model server"
 * availabilityText(undefined, { checking: "llama" }); // "loading the model…"
 * availabilityText(undefined, { connected: false }); // "not known (not connected)"
 * ```
 */
export function availabilityText(
  availability: ModelAvailability | undefined,
  link: { checking?: string; connected?: boolean } = {},
): string {
  const { checking, connected = true } = link;
  if (availability === undefined) {
    if (!connected) return "not known (not connected)";
    if (checking === undefined) return "availability unknown";
    return checking === "llama" ? "loading the model…" : "checking…";
  }
  if (availability.available) return "available";
  const reason = availability.reason ?? "unknown";
  const why = Object.hasOwn(WHY, reason) ? WHY[reason] : reason === "unknown" ? null : `reason '${reason}'`;
  const detail = availability.detail || null;
  if (why === null) return detail === null ? "unavailable" : `unavailable: ${detail}`;
  return detail === null ? `unavailable: ${why}` : `unavailable: ${why} (${detail})`;
}
