/**
 * The system model's availability as `session/create`, `npc/create` and `npc/restore` report it: known at
 * once when the backend can tell without waiting (so the create answers at once and nothing a later request
 * causes can overtake its response), else after the backend's check.
 * @module
 */
import type { LanguageModel, ModelAvailability } from "./language_model.ts";

/**
 * The create warning of an unavailable system model, or null when it is available. On a device that cannot
 * run it (`device_not_eligible` without a load problem in `detail`) waiting does not help: the warning names
 * the models to use instead. The check's `detail` (what it tried and what stopped it: a server it could not
 * reach, a permission to grant, a library that did not load) ends the warning, as it is in the turns' error.
 * A host's model in place of the system model (`oam stdio --model openai:…`) is named as configured
 * (`model.label`: "The model openai:http://127.0.0.1:8080/v1#qwen is unavailable …"), else by its kind.
 *
 * @example
 * ```ts
 * import { unavailableWarning } from "./availability.ts";
 * unavailableWarning({ available: false, reason: "model_not_ready", contextSize: 4096, supportedLanguages: [] });
 * // "The system model is unavailable (model_not_ready); turns will fail with model_unavailable until it is ready."
 * ```
 */
export function unavailableWarning(a: ModelAvailability, model?: LanguageModel): string | null {
  if (a.available) return null;
  const reason = a.reason ?? "unknown";
  const detail = a.detail?.trim() ?? "";
  const outcome = reason === "device_not_eligible" && detail === ""
    ? `: this device cannot run it, so give another model ({"type": "scripted", …}, "openai" or "llama")`
    : " until it is ready";
  const why = detail === "" ? "" : ` ${detail}${/[.!?]$/.test(detail) ? "" : "."}`;
  const named = model === undefined || model.kind === "system"
    ? "The system model"
    : model.label
    ? `The model ${model.label}`
    : `The ${model.kind} model`;
  return `${named} is unavailable (${reason}); turns will fail with model_unavailable${outcome}.${why}`;
}

/**
 * `model`'s availability: the value itself when the backend knows it without waiting
 * (`availabilityNow`), else a promise. Neither form fails: a check that throws counts as `unknown`.
 *
 * @example
 * ```ts
 * import { availabilityOf } from "./availability.ts";
 * import { UnavailableModel } from "./unavailable.ts";
 * const a = availabilityOf(new UnavailableModel("device_not_eligible")); // known at once: not a Promise
 * ```
 */
export function availabilityOf(model: LanguageModel): ModelAvailability | Promise<ModelAvailability> {
  const failed = (): ModelAvailability => ({
    available: false,
    reason: "unknown",
    contextSize: model.contextSize,
    supportedLanguages: [],
  });
  try {
    const known = model.availabilityNow?.();
    if (known !== undefined) return known;
  } catch {
    return failed();
  }
  return (async () => await model.availability())().catch(failed);
}
