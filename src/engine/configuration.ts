/**
 * Bridge configuration: limits, defaults, model factories, extensions and hooks.
 * @module
 */
import type { LanguageModel } from "../models/language_model.ts";
import type { ModelFactories, ModelParam, ModelSpec } from "../models/registry.ts";
import { BridgeError, thrownByHost } from "../protocol/errors.ts";
import type { JsonValue } from "../protocol/json.ts";
import { DEFAULT_TOOL_TIMEOUT_SECONDS } from "../protocol/npc_defaults.ts";
import { type Logger, stderrLogger } from "../util/logger.ts";
import type { BridgeExtension } from "./extension.ts";
import type { BridgeSettings } from "./settings.ts";

/**
 * Everything a host can configure. All fields are optional in `BridgeEngine`'s constructor.
 *
 * @example
 * ```ts
 * import { type BridgeConfiguration, BridgeEngine, stderrLogger } from "@open-apple-models/bridge/engine";
 * const config: Partial<BridgeConfiguration> = {
 *   maxSessions: 8,
 *   toolTimeoutSeconds: 30,
 *   allowsScriptedModels: false,
 *   logger: stderrLogger("warning"),
 * };
 * const engine = new BridgeEngine(config, (line) => line);
 * ```
 */
export interface BridgeConfiguration extends BridgeSettings {
  /** Extensions registered after the built-in methods (default: the standard extensions, the game methods). */
  extensions: BridgeExtension[];
  /** Creates the model for `"system"`; called once per session or one-off use. */
  systemModel: () => LanguageModel;
  /**
   * Creates models of the host's own types (`{"type": "mine", …}`; the spec's members are in `spec.raw`,
   * its parameter name in `spec.path`). Called for every type but `system` and `scripted`, before `openai`
   * and `llama`; return undefined for the types it does not make. Throw `BridgeError.invalidParams` for a
   * bad spec (anything else it throws is answered -32603). See docs/extending.md.
   */
  modelFactory?: (spec: ModelSpec) => LanguageModel | undefined;
  /**
   * Logs go here (never stdout). Default: errors only, on stderr (an internal error's stack, an extension
   * that failed to shut down), so a bug in a handler or a model backend is never silent; pass
   * `stderrLogger("warning")` for more, or `silentLogger` for nothing.
   */
  logger: Logger;
  /** Called after the `shutdown` response has been delivered. */
  onShutdown?: () => void;
  /**
   * What to tell the user when this process may not reach a model server (`host`, `"127.0.0.1:8080"`): how to
   * run the bridge with that network access. It ends an `openai` model's "Cannot reach the model server at …"
   * in place of Deno's own advice ("run again with the --allow-net flag"). Default: Deno's message as it is.
   *
   * @example
   * ```ts
   * import type { BridgeConfiguration } from "@open-apple-models/bridge/engine";
   * const config: Partial<BridgeConfiguration> = {
   *   netAccessAdvice: (host) => `This bridge has no network access to ${host}: start it with --allow-net=${host}.`,
   * };
   * ```
   */
  netAccessAdvice?: (host: string) => string | null;
}

/** The logger of a configuration without one: errors to stderr. */
const defaultLogger: Logger = stderrLogger("error");

/**
 * Default values of the numeric settings.
 *
 * @example
 * ```ts
 * import { DEFAULTS } from "@open-apple-models/bridge/engine";
 * DEFAULTS.maxSessions; // 64
 * DEFAULTS.toolTimeoutSeconds; // 120
 * ```
 */
// The type spells the values out: the package's generated reference shows no value of an `as const` object.
export const DEFAULTS: {
  readonly maxSessions: 64;
  readonly toolTimeoutSeconds: 120;
  readonly maxPendingClientRequests: 1024;
  readonly maxQueuedOperations: 256;
  readonly maxInFlightRequests: 16384;
} = {
  maxSessions: 64,
  toolTimeoutSeconds: DEFAULT_TOOL_TIMEOUT_SECONDS,
  maxPendingClientRequests: 1024,
  maxQueuedOperations: 256,
  maxInFlightRequests: 16384,
};

/**
 * A host's `systemModel` factory whose throws are marked as the host's (`thrownByHost`), and whose result must be
 * a model (step() and availability()); the models it makes are not marked, since a host often returns one of
 * this project's backends there.
 */
function hostSystemModel(factory: () => LanguageModel): () => LanguageModel {
  const culprit = "the host's systemModel (its bridge configuration)";
  return () => {
    let model: LanguageModel;
    try {
      model = factory();
    } catch (error) {
      throw thrownByHost(error, culprit);
    }
    if (typeof model?.step !== "function" || typeof model?.availability !== "function") {
      throw thrownByHost(
        BridgeError.internal(`The systemModel made no LanguageModel (it needs step() and availability()).`),
        culprit,
      );
    }
    return model;
  };
}

/** Fills in defaults. */
export function resolveConfiguration(
  config: Partial<BridgeConfiguration>,
  defaults: EngineParts["defaults"],
): BridgeConfiguration {
  return {
    maxSessions: config.maxSessions ?? DEFAULTS.maxSessions,
    toolTimeoutSeconds: config.toolTimeoutSeconds ?? DEFAULTS.toolTimeoutSeconds,
    allowsScriptedModels: config.allowsScriptedModels ?? true,
    extensions: config.extensions ?? defaults.extensions(),
    // A host's factory: what it throws is its bug, and its internal error's log line says so.
    systemModel: config.systemModel ? hostSystemModel(config.systemModel) : defaults.systemModel,
    ...(config.modelFactory ? { modelFactory: config.modelFactory } : {}),
    logger: config.logger ?? defaultLogger,
    ...(config.onShutdown ? { onShutdown: config.onShutdown } : {}),
    ...(config.netAccessAdvice ? { netAccessAdvice: config.netAccessAdvice } : {}),
    maxPendingClientRequests: config.maxPendingClientRequests ?? DEFAULTS.maxPendingClientRequests,
    maxQueuedOperations: config.maxQueuedOperations ?? DEFAULTS.maxQueuedOperations,
    maxInFlightRequests: config.maxInFlightRequests ?? DEFAULTS.maxInFlightRequests,
  };
}

/**
 * What the composition gives the engine core: its built-in method sets, defaults and model handling.
 *
 * @example
 * ```ts
 * import {
 *   createModel,
 *   EngineCore,
 *   type EngineParts,
 *   parseModelSpec,
 *   UnavailableModel,
 * } from "@open-apple-models/bridge/engine";
 * // An engine with only a host's own methods (BridgeEngine is the core with the protocol's).
 * const parts: EngineParts = {
 *   builtins: [{ register: (registry) => registry.register("quest/ping", () => ({ pong: true })) }],
 *   defaults: { systemModel: () => new UnavailableModel("device_not_eligible"), extensions: () => [] },
 *   models: { parse: parseModelSpec, create: createModel },
 * };
 * const engine = new EngineCore(parts, {}, (line) => line);
 * await engine.call("quest/ping"); // { pong: true }
 * ```
 */
export interface EngineParts {
  /** Method sets registered before the configuration's extensions (core and session methods). */
  builtins: BridgeExtension[];
  /** Defaults for configuration fields the host leaves out. */
  defaults: { systemModel: () => LanguageModel; extensions: () => BridgeExtension[] };
  /**
   * True for the method sets that are this project's own (the composition's core, session and game
   * methods): an internal error in one of their methods is logged as the bridge's bug ("please report it").
   * Every other method set, and every handler registered after the engine was built, is the host's, and the
   * log line says the bug is in that extension. Without it, every method set is the host's.
   */
  ownsMethodSet?: (methodSet: BridgeExtension) => boolean;
  /** Parses `model` parameters and creates backends for them. */
  models: {
    /** Parses a `model` value (throws -32602). */
    parse(value: JsonValue | undefined, param: ModelParam): ModelSpec;
    /** Creates the backend of a parsed spec (throws -32602 for unknown types). */
    create(spec: ModelSpec, factories: ModelFactories): LanguageModel;
  };
}
