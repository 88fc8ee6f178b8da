/**
 * The model pill and the Model tab say why the bridge's model is unavailable in words: the protocol's reason
 * values (`unknown`, `device_not_eligible`, …) are not for a person.
 */
import assert from "node:assert/strict";
import { availabilityText } from "../../../src/serve/playground/page/availability_text.ts";

Deno.test("availabilityText: available, not yet known, and unavailable with the detail alone for 'unknown'", () => {
  assert.equal(availabilityText({ available: true, contextSize: 8192, supportedLanguages: [] }), "available");
  assert.equal(availabilityText(undefined), "availability unknown");
  // The bridge went away: nothing checks the model, whatever kind it is.
  assert.equal(availabilityText(undefined, { connected: false }), "not known (not connected)");
  assert.equal(
    availabilityText(undefined, { checking: "llama", connected: false }),
    "not known (not connected)",
  );
  assert.equal(
    availabilityText({
      available: false,
      reason: "unknown",
      detail: "Cannot reach the model server",
      contextSize: 4096,
      supportedLanguages: [],
    }),
    "unavailable: Cannot reach the model server",
  );
  assert.equal(
    availabilityText({ available: false, reason: "unknown", contextSize: 4096, supportedLanguages: [] }),
    "unavailable",
  );
});

Deno.test("availabilityText: the on-device model's reasons in words, never the reason value", () => {
  const words: Record<string, string> = {
    device_not_eligible: "unavailable: this device cannot run Apple Intelligence",
    apple_intelligence_not_enabled: "unavailable: Apple Intelligence is turned off (System Settings)",
    model_not_ready: "unavailable: the model is still downloading",
  };
  for (const [reason, text] of Object.entries(words)) {
    assert.equal(
      availabilityText({ available: false, reason, contextSize: 4096, supportedLanguages: [] } as never),
      text,
    );
  }
  assert.equal(
    availabilityText({
      available: false,
      reason: "model_not_ready",
      detail: "Assets are downloading.",
      contextSize: 4096,
      supportedLanguages: [],
    } as never),
    "unavailable: the model is still downloading (Assets are downloading.)",
  );
});
