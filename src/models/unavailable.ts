/**
 * A model that is never available: every step fails with `-32001 model_unavailable`.
 * @module
 */
import { BridgeError } from "../protocol/errors.ts";
import type { LanguageModel, ModelAvailability, StepResult } from "./language_model.ts";

/**
 * An unavailable model with a reason (`device_not_eligible`, `unknown`, …).
 *
 * @example
 * ```ts
 * import { UnavailableModel } from "@open-apple-models/bridge/engine";
 * const model = new UnavailableModel("device_not_eligible");
 * ```
 */
export class UnavailableModel implements LanguageModel {
  /** Model type name. */
  readonly kind: string = "system";
  /** Context size reported while unavailable. */
  readonly contextSize: number = 4096;
  /** Never trims (it never runs). */
  readonly trimsHistory: boolean = false;
  readonly #reason: string;
  readonly #detail: string | undefined;

  /** An unavailable model; `detail` explains the reason. */
  constructor(reason: string, detail?: string) {
    this.#reason = reason;
    this.#detail = detail;
  }

  /** Reports `{available: false, reason}`. */
  availability(): Promise<ModelAvailability> {
    return Promise.resolve(this.availabilityNow());
  }

  /** `{available: false, reason}`, known at once. */
  availabilityNow(): ModelAvailability {
    return {
      available: false,
      reason: this.#reason,
      contextSize: this.contextSize,
      supportedLanguages: [],
      ...(this.#detail ? { detail: this.#detail } : {}),
    };
  }

  /** Always fails with model_unavailable. */
  step(): Promise<StepResult> {
    return Promise.reject(
      BridgeError.of("model_unavailable", `The system model is unavailable (${this.#reason}).`, {
        reason: this.#reason,
      }),
    );
  }
}
