/**
 * The create warning of an unavailable system model says whether waiting can help: a device that cannot run
 * Apple's model never gets it, so the warning names what to use instead rather than "until it is ready".
 */
import assert from "node:assert/strict";
import { unavailableWarning } from "../../src/models/availability.ts";
import type { ModelAvailability } from "../../src/models/language_model.ts";

const UNAVAILABLE: ModelAvailability = { available: false, contextSize: 4096, supportedLanguages: [] };

Deno.test("the create warning of a device that cannot run the system model names another model, not a wait", () => {
  assert.equal(
    unavailableWarning({ ...UNAVAILABLE, reason: "device_not_eligible" }),
    "The system model is unavailable (device_not_eligible); turns will fail with model_unavailable: this device " +
      `cannot run it, so give another model ({"type": "scripted", …}, "openai" or "llama").`,
  );
});

Deno.test("the create warning of a system model that may become ready says so", () => {
  assert.equal(
    unavailableWarning({ ...UNAVAILABLE, reason: "model_not_ready" }),
    "The system model is unavailable (model_not_ready); turns will fail with model_unavailable until it is ready.",
  );
  assert.equal(unavailableWarning({ ...UNAVAILABLE, available: true }), null);
});

Deno.test("the create warning ends with the check's detail, as the turns' error does", () => {
  assert.equal(
    unavailableWarning({
      ...UNAVAILABLE,
      reason: "unknown",
      detail: "Cannot reach the model server at http://127.0.0.1:8080/v1/models: connection refused",
    }),
    "The system model is unavailable (unknown); turns will fail with model_unavailable until it is ready. " +
      "Cannot reach the model server at http://127.0.0.1:8080/v1/models: connection refused.",
  );
  // A load problem on a device that could run it: waiting (after the fix the detail names) may help.
  assert.equal(
    unavailableWarning({
      ...UNAVAILABLE,
      reason: "device_not_eligible",
      detail: "Loading 'x.so' needs --allow-ffi.",
    }),
    "The system model is unavailable (device_not_eligible); turns will fail with model_unavailable until it is " +
      "ready. Loading 'x.so' needs --allow-ffi.",
  );
});
