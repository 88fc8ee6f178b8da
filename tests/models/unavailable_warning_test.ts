/**
 * The create warning of an unavailable system model says whether waiting can help: a device that cannot run
 * Apple's model never gets it, so the warning names what to use instead rather than "until it is ready".
 */
import assert from "node:assert/strict";
import { unavailableWarning } from "../../src/models/availability.ts";
import type { ModelAvailability } from "../../src/models/language_model.ts";
import { createOpenAIModel } from "../../src/models/openai_model.ts";
import { createLlamaModel } from "../../src/models/llama_model.ts";
import { ScriptedModel } from "../../src/models/scripted.ts";

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

Deno.test("the create warning of a host's model in place of the system model names the model configured", () => {
  const openai = createOpenAIModel({ baseURL: "http://127.0.0.1:8080/v1/", model: "qwen" });
  const down = { ...UNAVAILABLE, reason: "unknown", detail: "Cannot reach the model server." };
  assert.equal(
    unavailableWarning(down, openai),
    "The model openai:http://127.0.0.1:8080/v1#qwen is unavailable (unknown); turns will fail with " +
      "model_unavailable until it is ready. Cannot reach the model server.",
  );
  assert.equal(
    unavailableWarning(down, createLlamaModel({ path: "/models/tiny.gguf" })),
    "The model gguf:/models/tiny.gguf is unavailable (unknown); turns will fail with model_unavailable until " +
      "it is ready. Cannot reach the model server.",
  );
  // A model without a label (an engine host's own) is named by its kind.
  const scripted = new ScriptedModel({ steps: [] }, "scripted");
  assert.match(unavailableWarning(down, scripted)!, /^The scripted model is unavailable \(unknown\)/);
});
