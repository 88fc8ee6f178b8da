/**
 * The `model` parameter: parsing (`"system"`, `"scripted"`, `{"type": …}`) and creating backends.
 * @module
 */
import { BridgeError, thrownByHost } from "../protocol/errors.ts";
import { isJsonObject, type JsonObject, type JsonValue } from "../protocol/json.ts";
import { showValue } from "../protocol/params.ts";
import { rememberHostModel } from "./host_models.ts";
import type { LanguageModel } from "./language_model.ts";
import { llamaModelSpecWarnings, parseLlamaModelSpec } from "./llama_config.ts";
import { createLlamaModel } from "./llama_model.ts";
import { openAIModelSpecWarnings, parseOpenAIModelSpec } from "./openai_config.ts";
import { createOpenAIModel } from "./openai_model.ts";
import { parseScript, type Script, ScriptedModel, scriptWarnings } from "./scripted.ts";

/**
 * A parsed `model` parameter.
 *
 * @example
 * ```ts
 * import { type ModelSpec, parseModelSpec } from "@open-apple-models/bridge/engine";
 * const spec: ModelSpec = parseModelSpec("system", { path: "model", allowsScripted: true });
 * spec; // { type: "system" }
 * ```
 */
export type ModelSpec =
  | { type: "system" }
  | {
    type: "scripted";
    script: Script;
    /** Members of the script that nothing reads ("Unknown parameter 'model.steps[0].delay' was ignored."). */
    warnings?: string[];
  }
  | {
    type: string;
    raw: JsonObject;
    path: string;
    /** Members of the parameter that the backend ignores ("Unknown parameter '<path>.<key>' was ignored."). */
    warnings?: string[];
  };

/**
 * Where a `model` parameter is read (its name in errors) and whether scripted models are allowed.
 *
 * @example
 * ```ts
 * import { type ModelParam, parseModelSpec } from "@open-apple-models/bridge/engine";
 * const param: ModelParam = { path: "requests[1].model", allowsScripted: false };
 * try {
 *   parseModelSpec("scripted", param);
 * } catch (error) {
 *   String(error); // "BridgeError: Scripted models are disabled on this bridge."
 * }
 * ```
 */
export interface ModelParam {
  /** The parameter's name in error messages (`model`, `requests[1].model`, …). */
  path: string;
  /** False on a bridge started with `--no-scripted-models`. */
  allowsScripted: boolean;
}

/**
 * What model creation needs from the configuration.
 *
 * @example
 * ```ts
 * import {
 *   createModel,
 *   type ModelFactories,
 *   parseModelSpec,
 *   ScriptedModel,
 *   UnavailableModel,
 * } from "@open-apple-models/bridge/engine";
 * const factories: ModelFactories = {
 *   systemModel: () => new UnavailableModel("device_not_eligible"),
 *   // A host's own model type, `{"type": "echo"}`:
 *   modelFactory: (spec) => spec.type === "echo" ? new ScriptedModel({ steps: [] }) : undefined,
 * };
 * const spec = parseModelSpec({ type: "echo" }, { path: "model", allowsScripted: true });
 * createModel(spec, factories).kind; // "scripted"
 * ```
 */
export interface ModelFactories {
  /** Creates the `"system"` model. */
  systemModel: () => LanguageModel;
  /** Creates host-registered model types. */
  modelFactory?: (spec: ModelSpec) => LanguageModel | undefined;
  /** False when this bridge refuses scripted models: an unknown type's message then does not offer them. */
  allowsScriptedModels?: boolean;
  /** How to grant network access to a model server's host (`BridgeConfiguration.netAccessAdvice`). */
  netAccessAdvice?: (host: string) => string | null;
}

/**
 * Parses a `model` value. Absent, null, `"system"` and `{"type": "system"}` mean the system model.
 *
 * @example
 * ```ts
 * import { parseModelSpec } from "@open-apple-models/bridge/engine";
 * parseModelSpec({ type: "scripted", steps: [{ text: "Hi" }] }, { path: "model", allowsScripted: true }).type; // "scripted"
 * ```
 */
export function parseModelSpec(value: JsonValue | undefined, param: ModelParam): ModelSpec {
  const { path, allowsScripted } = param;
  if (value === undefined || value === null || value === "system") return { type: "system" };
  if (typeof value === "string") {
    if (value === "scripted") {
      if (!allowsScripted) throw BridgeError.invalidParams("Scripted models are disabled on this bridge.");
      return { type: "scripted", script: { steps: [] } };
    }
    return { type: value, raw: { type: value }, path };
  }
  if (
    isJsonObject(value) && value.type !== undefined && value.type !== null && typeof value.type !== "string"
  ) {
    throw BridgeError.invalidParams(
      `Parameter '${path}.type' must be a string; got ${showValue(value.type)}.`,
    );
  }
  if (!isJsonObject(value) || typeof value.type !== "string") {
    throw BridgeError.invalidParams(`'${path}' must be "system" or an object with a 'type'.`);
  }
  if (value.type === "system") return { type: "system" };
  if (value.type === "scripted") {
    if (!allowsScripted) throw BridgeError.invalidParams("Scripted models are disabled on this bridge.");
    const script = parseScript(value, path);
    const warnings = scriptWarnings(value, path);
    return warnings.length > 0 ? { type: "scripted", script, warnings } : { type: "scripted", script };
  }
  // Validated eagerly, so a bad spec fails the call that names it.
  if (value.type === "openai") {
    parseOpenAIModelSpec(value, path);
    return { type: value.type, raw: value, path, warnings: openAIModelSpecWarnings(value, path) };
  }
  if (value.type === "llama") {
    parseLlamaModelSpec(value, path);
    return { type: value.type, raw: value, path, warnings: llamaModelSpecWarnings(value, path) };
  }
  return { type: value.type, raw: value, path };
}

/**
 * The warnings of a parsed `model` parameter: the members its backend ignores (an `openai` or `llama` spec's,
 * a scripted model's, its steps' and their tool calls'); none for `"system"`, `"scripted"` and
 * host-registered types. Methods add them to their result's `warnings`, after the tool warnings and before
 * the unavailable-model warning.
 *
 * @example
 * ```ts
 * import { modelSpecWarnings, parseModelSpec } from "./registry.ts";
 * const spec = parseModelSpec(
 *   { type: "openai", baseURL: "http://127.0.0.1:8080/v1", model: "m", apikey: "x" },
 *   { path: "model", allowsScripted: true },
 * );
 * modelSpecWarnings(spec); // ["Unknown parameter 'model.apikey' was ignored (did you mean 'apiKey'?)."]
 * ```
 */
export function modelSpecWarnings(spec: ModelSpec): string[] {
  return "warnings" in spec && spec.warnings !== undefined ? spec.warnings : [];
}

/**
 * Creates the backend for a spec: `system` and `scripted`, then the host's `modelFactory` (its own types, or
 * undefined), then `openai` and `llama`. Unknown types fail with -32602.
 *
 * @example
 * ```ts
 * import { createModel, parseModelSpec, UnavailableModel } from "@open-apple-models/bridge/engine";
 * const param = { path: "model", allowsScripted: true };
 * const spec = parseModelSpec({ type: "scripted", steps: [{ text: "Hi" }] }, param);
 * const model = createModel(spec, { systemModel: () => new UnavailableModel("device_not_eligible") });
 * (await model.availability()).available; // true
 * ```
 */
export function createModel(spec: ModelSpec, factories: ModelFactories): LanguageModel {
  if (spec.type === "system") return factories.systemModel();
  if ("script" in spec) return new ScriptedModel(spec.script);
  const custom = hostModel(spec, factories);
  if (custom) return custom;
  if (spec.type === "openai" && "raw" in spec) {
    const advice = factories.netAccessAdvice;
    return createOpenAIModel(
      parseOpenAIModelSpec(spec.raw, spec.path),
      advice ? { netAccessAdvice: advice } : {},
    );
  }
  if (spec.type === "llama" && "raw" in spec) {
    // node-llama-cpp itself is imported on the model's first use, not here.
    return createLlamaModel(parseLlamaModelSpec(spec.raw, spec.path));
  }
  // With a host factory the host's own types are supported too, but only the factory knows their names.
  const hosts = factories.modelFactory ? ", and the types of this bridge's host" : "";
  const scripted = factories.allowsScriptedModels === false ? "" : ` "scripted",`;
  throw BridgeError.invalidParams(
    `Unknown model type '${spec.type}'. Supported: "system",${scripted} "openai", "llama"${hosts}.${
      modelNameHint(spec.type)
    }`,
  );
}

/**
 * The host's model for `spec` from its `modelFactory`, or undefined. What the factory throws, and a factory
 * result that is no model, are internal errors whose log line names the host's factory.
 */
function hostModel(spec: ModelSpec, factories: ModelFactories): LanguageModel | undefined {
  if (!factories.modelFactory) return undefined;
  const culprit = `the host's modelFactory, for the model type '${spec.type}'`;
  let custom: LanguageModel | undefined;
  try {
    custom = factories.modelFactory(spec);
  } catch (error) {
    throw thrownByHost(error, culprit);
  }
  if (!custom) return undefined;
  // Caught here, at the create that names the type, not by the first turn ("model.step is not a function").
  if (typeof custom.step !== "function" || typeof custom.availability !== "function") {
    throw thrownByHost(
      BridgeError.internal(
        `The modelFactory made no LanguageModel for type '${spec.type}' (it needs step() and availability()).`,
      ),
      culprit,
    );
  }
  rememberHostModel(custom, spec.type);
  return custom;
}

/**
 * Where a type that looks like a model's own name (`gpt-4o-mini`, `qwen2.5:7b`) or a GGUF file belongs, for the
 * unknown-type message: the likeliest mistake is `"model": "gpt-4"` in place of a server's spec.
 */
function modelNameHint(type: string): string {
  const json = JSON.stringify(type);
  if (/\.gguf$/i.test(type)) return ` A GGUF file runs as {"type": "llama", "path": ${json}}.`;
  if (/[0-9.:/-]/.test(type)) {
    return ` A model's name goes in the 'model' of a server's spec: {"type": "openai", "baseURL": "…/v1", "model": ${json}}.`;
  }
  return "";
}
