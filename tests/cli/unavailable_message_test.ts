/**
 * The CLI's availability lines say in words why a model is unavailable: the protocol's reason values
 * (`unknown`, `device_not_eligible`, …) stay on the wire and in `oam available --json`, never in a line for a
 * person.
 */
import assert from "node:assert/strict";
import { unavailableAdvice, unavailableMessage } from "../../src/cli/local_bridge.ts";

const GGUF = { name: "gguf", label: "qwen.gguf", config: {}, again: { flags: [], env: [] } } as never;

Deno.test("a model that did not say why: the detail alone, no '(unknown)'", () => {
  assert.equal(
    unavailableMessage("unknown", { detail: "The model file 'qwen.gguf' does not exist.", choice: GGUF }),
    "The model qwen.gguf is unavailable: The model file 'qwen.gguf' does not exist.",
  );
  assert.equal(
    unavailableMessage("unknown", { detail: undefined, choice: GGUF }),
    "The model qwen.gguf is unavailable.",
  );
});

Deno.test("a model with a reason: the reason in words, then the detail", () => {
  assert.equal(
    unavailableMessage("model_not_ready", { detail: "Loading.", choice: GGUF }),
    "The model qwen.gguf is unavailable (it is not ready yet): Loading.",
  );
  // A reason the protocol does not list (a host's own model) is named as given.
  assert.equal(
    unavailableMessage("warming_up", { detail: undefined, choice: GGUF }),
    "The model qwen.gguf is unavailable (reason 'warming_up').",
  );
});

Deno.test("the on-device model: why in words, never the reason value", () => {
  const lines: Record<string, string> = {
    device_not_eligible: "The on-device model is unavailable: this device cannot run Apple Intelligence.",
    apple_intelligence_not_enabled:
      "The on-device model is unavailable: Apple Intelligence is turned off; turn it on in System Settings.",
    model_not_ready:
      "The on-device model is unavailable: the model is still downloading; try again in a few minutes.",
    unknown: "The on-device model is unavailable: it did not say why.",
  };
  for (const [reason, line] of Object.entries(lines)) {
    const advice = unavailableAdvice(reason);
    assert.ok(advice.startsWith(`${line} Use --model gguf:<file.gguf> for a local GGUF model (`), advice);
    assert.ok(!advice.includes(reason), advice);
  }
});
