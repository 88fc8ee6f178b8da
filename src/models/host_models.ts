/**
 * The models a host's `modelFactory` made, and their steps: a plain Error one of them throws is a bug in the
 * host's backend, and its internal error's log line says so (see `thrownByHost`).
 * @module
 */
import { thrownByHost } from "../protocol/errors.ts";
import type { LanguageModel, StepRequest, StepResult } from "./language_model.ts";

/** Model → the host's type it was made for. */
const hostModels = new WeakMap<LanguageModel, string>();

/**
 * Remembers that `model` is the host's, made by its `modelFactory` for the model type `type`.
 *
 * @example
 * ```ts
 * import { hostModelType, rememberHostModel } from "./host_models.ts";
 * import { ScriptedModel } from "./scripted.ts";
 * const model = new ScriptedModel({ steps: [] });
 * rememberHostModel(model, "echo");
 * hostModelType(model); // "echo"
 * ```
 */
export function rememberHostModel(model: LanguageModel, type: string): void {
  hostModels.set(model, type);
}

/**
 * The host's model type `model` was made for, or undefined for the project's own models.
 *
 * @example
 * ```ts
 * import { hostModelType } from "./host_models.ts";
 * import { ScriptedModel } from "./scripted.ts";
 * hostModelType(new ScriptedModel({ steps: [] })); // undefined
 * ```
 */
export function hostModelType(model: LanguageModel): string | undefined {
  return hostModels.get(model);
}

/**
 * `host.model.step(request)` of a host's model of type `host.type`, with what it throws or rejects with marked as the
 * host's ({@link thrownByHost}). What it returns is passed on as it is.
 *
 * @example
 * ```ts
 * import { hostStep } from "./host_models.ts";
 * import { ScriptedModel } from "./scripted.ts";
 * const model = new ScriptedModel({ steps: [{ text: "Hi" }] });
 * // await hostStep({ model, type: "echo" }, request): the step's result; a rejection names the host's type 'echo' in its log line
 * ```
 */
export function hostStep(
  host: { model: LanguageModel; type: string },
  request: StepRequest,
): Promise<StepResult> {
  const { model, type } = host;
  const culprit = `the step() of the host's model type '${type}'`;
  let result: Promise<StepResult>;
  try {
    result = model.step(request);
  } catch (error) {
    throw thrownByHost(error, culprit);
  }
  return result instanceof Promise
    ? result.then(undefined, (error) => Promise.reject(thrownByHost(error, culprit)))
    : result;
}
