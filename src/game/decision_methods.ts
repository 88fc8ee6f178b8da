/**
 * `decision/decide` and `decision/decideMany` (PROTOCOL.md §6 "Decisions", reference-behavior §2.14):
 * enum-constrained choices among a fixed set of options. Both validate everything synchronously (before any
 * model call) and then run concurrently (deferred).
 *
 * Models: `decision/decide` builds its model from the request's `model` spec with `engine.makeModel`;
 * `decision/decideMany` builds one model per call and every decision of the call uses it, as the reference
 * does. A scripted model therefore hands out its steps in the order the decisions call it (decisions start in
 * request order; with `maxConcurrency` > 1 a step goes to whichever decision asks next), so a script can give
 * each decision its own outcome: `[answer for requests[0], guardrail error for requests[1]]`.
 *
 * `decideMany` validates every request before any model call: one invalid request fails the whole call with
 * its error (`-32602` naming `requests[i]…`, or `-32050` for an unknown actor), as `decision/decide` would,
 * plus `data.index`: the index of the request.
 * @module
 */
import { BridgeError, internalErrorReport, toBridgeError } from "../protocol/errors.ts";
import { isJsonObject, type JsonObject, type JsonValue } from "../protocol/json.ts";
import { Params } from "../protocol/params.ts";
import type { MethodRegistry } from "../engine/extension.ts";
import type { HandlerContext } from "../engine/context.ts";
import { toolTimeoutMsOf } from "../agent/tool_definitions.ts";
import type { TurnDriver } from "../agent/turn_host.ts";
import type { LanguageModel } from "../models/language_model.ts";
import { mapBounded } from "./decision/bounded.ts";
import {
  type DecisionSpec,
  ENGINE_KEYS,
  type EngineDefaults,
  type EngineSettings,
  parseDecision,
  parseEngineSettings,
} from "./decision/decision_request.ts";
import { decisionJson, onlyOptionDecision } from "./decision/decision_result.ts";
import { runDecision } from "./decision/decision_runner.ts";
import type { GameContext } from "./game_context.ts";
import { modelSpecWarnings } from "../models/registry.ts";

/** Top-level keys of `decision/decideMany` (besides the engine keys). */
const DECIDE_MANY_KEYS = ["requests", "maxConcurrency"] as const;
/** Default `maxConcurrency` of `decision/decideMany`. */
export const DEFAULT_MAX_CONCURRENCY = 2;
/**
 * Most decisions in one `decision/decideMany` (each holds an agent while it runs; 100,000 of them in one
 * request took 1.2 GB and blocked the bridge for 2.5 s).
 */
export const MAX_DECISIONS = 1024;
/** Notification method name given to `drive` (decisions never stream, so it is never sent). */
const EVENT_METHOD = "decision/event";

/**
 * `error` (a request of `decision/decideMany` refused before any model call) with `data.index`, the index of
 * the request in `requests`: the message names it too, but a program finds it among many by the number.
 * Code, `data.code`, message and the other data members stay as they were.
 */
function withRequestIndex(error: BridgeError, index: number): BridgeError {
  if (Object.hasOwn(error.data, "index")) return error;
  return new BridgeError(error.code, error.dataCode, error.message, { ...error.data, index })
    .withCause(error.cause ?? error);
}

/** Runs a decision turn through `drive`: `tool/call` params are `{...context, requestId, call}`. */
function decisionDriver(r: HandlerContext, context: JsonObject): TurnDriver {
  return (run) => r.drive(run, { stream: false, context, eventMethod: EVENT_METHOD });
}

/**
 * The decision methods.
 *
 * @example
 * ```ts
 * import { BridgeEngine } from "../composition.ts";
 * const engine = new BridgeEngine();
 * await engine.call("decision/decide", { situation: "A wolf appears.", options: ["flee"] });
 * // {optionID: "flee", reasoning: "It is the only option.", confidence: 100, …}
 * ```
 */
export class DecisionMethods {
  #game!: GameContext;

  /** Registers `decision/decide` and `decision/decideMany`. */
  register(registry: MethodRegistry, game: GameContext): void {
    this.#game = game;
    registry.register("decision/decide", (r) => this.#decide(r));
    registry.register("decision/decideMany", (r) => this.#decideMany(r));
  }

  /** Looks up an NPC persona at call time (the NPC methods install the lookup). */
  readonly #persona = (id: string): JsonObject | undefined => this.#game.npcPersona(id);
  readonly #notFound = (id: string): BridgeError => this.#game.npcNotFound(id);

  /** The host's defaults for the decision settings. */
  #defaults(r: HandlerContext): EngineDefaults {
    return {
      toolTimeoutMs: toolTimeoutMsOf(r.settings.toolTimeoutSeconds),
      parseModel: (value, path) => r.parseModel(value, path),
    };
  }

  #decide(r: HandlerContext): JsonValue | Promise<JsonValue> {
    const p = r.params;
    const settings = parseEngineSettings(p, this.#defaults(r));
    const spec = parseDecision(p, {
      extraKeys: ENGINE_KEYS,
      toolTimeoutMs: settings.toolTimeoutMs,
      npcPersona: this.#persona,
      npcNotFound: this.#notFound,
    });
    const warnings = (toolWarnings: string[]) => [
      ...spec.keyWarnings,
      ...toolWarnings,
      ...modelSpecWarnings(settings.spec),
    ];
    if (spec.options.length === 1) {
      return decisionJson(onlyOptionDecision(spec.options[0]), warnings(spec.toolWarnings));
    }
    const model = r.createModel(settings.spec);
    // The tools' warnings are worded for the model that runs the decision (a host's default may be a llama one).
    const shown = warnings(spec.toolWarningsFor(model.kind));
    return runDecision(spec, {
      drive: decisionDriver(r, {}),
      signal: r.signal,
      settings: settings,
      model: model,
    })
      .then((decision) => decisionJson(decision, shown));
  }

  #decideMany(r: HandlerContext): Promise<JsonValue> {
    const p = r.params;
    const warnings = p.unknownKeys([...DECIDE_MANY_KEYS, ...ENGINE_KEYS]);
    const requests = p.array("requests");
    if (requests.length > MAX_DECISIONS) {
      throw BridgeError.invalidParams(
        `'requests' holds at most ${MAX_DECISIONS} decisions; got ${requests.length}.`,
        { limit: MAX_DECISIONS },
      );
    }
    const maxConcurrency = p.optionalInteger("maxConcurrency", { min: 1 }) ?? DEFAULT_MAX_CONCURRENCY;
    const settings = parseEngineSettings(p, this.#defaults(r));
    const toolWarnings: { at: number; spec: DecisionSpec; prefix: string }[] = [];
    // Every request is validated before any model call; the first invalid one fails the whole call, its
    // error's data naming it (`index`).
    const specs = requests.map((raw, index) => {
      const prefix = `requests[${index}]`;
      try {
        if (!isJsonObject(raw)) throw BridgeError.invalidParams(`'${prefix}' must be an object.`);
        const spec = parseDecision(new Params(raw, `${prefix}.`), {
          extraKeys: [],
          toolTimeoutMs: settings.toolTimeoutMs,
          npcPersona: this.#persona,
          npcNotFound: this.#notFound,
        });
        warnings.push(...spec.keyWarnings);
        // The tools' warnings go here, worded once the call's model is known (below).
        toolWarnings.push({ at: warnings.length, spec, prefix });
        return spec;
      } catch (error) {
        throw error instanceof BridgeError ? withRequestIndex(error, index) : error;
      }
    });
    warnings.push(...modelSpecWarnings(settings.spec));
    // One model for the whole call (built only when a decision needs it).
    const needsModel = specs.some((spec) => spec.options.length > 1);
    const model = needsModel ? r.createModel(settings.spec) : null;
    // Each request's tool warnings in its place, worded for the model that runs the call (none known when no
    // decision needs one), from the last place back so the earlier places stay where they are.
    for (const { at, spec, prefix } of toolWarnings.reverse()) {
      const worded = model === null ? spec.toolWarnings : spec.toolWarningsFor(model.kind);
      warnings.splice(at, 0, ...worded.map((w) => `${prefix}: ${w}`));
    }
    return this.#runMany(r, specs, settings, model, maxConcurrency).then((results) => {
      const out: JsonObject = { results };
      if (warnings.length > 0) out.warnings = warnings;
      return out;
    });
  }

  async #runMany(
    r: HandlerContext,
    specs: DecisionSpec[],
    settings: EngineSettings,
    model: LanguageModel | null,
    maxConcurrency: number,
  ): Promise<JsonValue[]> {
    const results = await mapBounded(specs, {
      limit: maxConcurrency,
      run: async (spec, index): Promise<JsonValue> => {
        if (spec.options.length === 1 || model === null) {
          return decisionJson(onlyOptionDecision(spec.options[0]));
        }
        try {
          if (r.signal.aborted) throw BridgeError.cancelled();
          return decisionJson(
            await runDecision(spec, {
              drive: decisionDriver(r, { index }),
              signal: r.signal,
              settings: settings,
              model: model,
            }),
          );
        } catch (error) {
          const e = toBridgeError(error);
          const report = internalErrorReport(e, { where: `decision/decideMany requests[${index}]` });
          if (report !== null) r.logger.error(report);
          return { error: e.toJson() };
        }
      },
    });
    if (r.signal.aborted) throw BridgeError.cancelled();
    return results;
  }
}
