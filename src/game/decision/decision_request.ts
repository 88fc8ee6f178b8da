/**
 * Parsing and validation of decision params (reference-behavior §2.14). Everything is checked before any
 * model call: the situation, the options (ids trimmed, non-empty, unique), the actor, the tools, a named
 * `toolChoice` and the `fallbackOptionID`.
 * @module
 */
import { BridgeError } from "../../protocol/errors.ts";
import { compactJson, isJsonObject, type JsonObject, type JsonValue } from "../../protocol/json.ts";
import { Params, showValue } from "../../protocol/params.ts";
import type { AgentTool, ToolChoice } from "../../agent/types.ts";
import type { ModelSpec } from "../../models/registry.ts";
import { parseToolChoice, parseToolDefinitions, toolCountWarning } from "../../agent/tool_definitions.ts";
import { type Actor, parseActor } from "./actor.ts";

/** Keys of one decision. */
export const DECISION_KEYS = [
  "situation",
  "options",
  "actor",
  "context",
  "tools",
  "toolChoice",
  "fallbackOptionID",
] as const;

/** Engine settings keys (of `decision/decide`, and shared by every request of `decision/decideMany`). */
export const ENGINE_KEYS = [
  "model",
  "instructions",
  "temperature",
  "maxToolRounds",
  "toolTimeoutSeconds",
] as const;

/** Default `maxToolRounds` of a decision. */
export const DEFAULT_DECISION_TOOL_ROUNDS = 2;

/** One option of a decision. */
export interface DecisionOption {
  /** Trimmed id. */
  id: string;
  /** Trimmed description (`""` when none). */
  description: string;
}

/** Engine settings of a decision. */
export interface EngineSettings {
  /** The parsed `model` param; each decision builds its own model from it. */
  spec: ModelSpec;
  /** Trimmed instructions, or null for the default. */
  instructions: string | null;
  /** Sampling temperature, or undefined for the model default. */
  temperature: number | undefined;
  /** Model steps that may call tools (default 2). */
  maxToolRounds: number;
  /** Default client tool timeout (ms; null = wait forever). */
  toolTimeoutMs: number | null;
}

/** A validated decision. */
export interface DecisionSpec {
  /** The situation as text (JSON situations as compact JSON). */
  situation: string;
  /** The options, ids unique. */
  options: DecisionOption[];
  /** Who decides, if anyone. */
  actor: Actor | null;
  /** Facts (`undefined` when absent, null or `{}`). */
  context: JsonValue | undefined;
  /** Client tools. */
  tools: AgentTool[];
  /** Tool choice when there are tools (default `auto`). */
  toolChoice: ToolChoice;
  /** Option returned when guardrails or a refusal block the decision. */
  fallbackOptionID: string | null;
  /** Unknown-key warnings; they name the parameter with its full path ("Unknown parameter '…' was ignored."). */
  keyWarnings: string[];
  /**
   * Tool warnings ("<tool>: …" and the tool-count warning) worded for no model known; `decideMany` prefixes
   * them with "requests[i]: ". A decision that runs a model shows {@link DecisionSpec.toolWarningsFor} instead.
   */
  toolWarnings: string[];
  /** {@link DecisionSpec.toolWarnings} worded for the model (`LanguageModel.kind`) that runs the decision. */
  toolWarningsFor(model: string): string[];
}

/** What the engine settings of a decision default to: the host's configuration. */
export interface EngineDefaults {
  /** Client tool timeout when `toolTimeoutSeconds` is absent (ms; null = wait forever). */
  toolTimeoutMs: number | null;
  /** Parses the `model` param (named `path` in messages); throws -32602 for a bad spec. */
  parseModel(value: JsonValue | undefined, path: string): ModelSpec;
}

/** Parses the engine settings keys of `p`. */
export function parseEngineSettings(p: Params, defaults: EngineDefaults): EngineSettings {
  const instructions = p.optionalString("instructions")?.trim();
  const temperature = p.optionalNumber("temperature", { min: 0 });
  const maxToolRounds = p.optionalInteger("maxToolRounds", { min: 0 }) ?? DEFAULT_DECISION_TOOL_ROUNDS;
  const timeout = p.optionalSeconds("toolTimeoutSeconds");
  const spec = defaults.parseModel(p.get("model"), p.name("model"));
  return {
    spec,
    instructions: instructions === undefined || instructions === "" ? null : instructions,
    temperature,
    maxToolRounds,
    toolTimeoutMs: timeout === undefined ? defaults.toolTimeoutMs : timeout,
  };
}

/** The situation as text: strings as given, other JSON compact. */
function situationText(value: JsonValue): string {
  return typeof value === "string" ? value : compactJson(value);
}

/** Parses the `options` array of `p`. */
export function parseOptions(p: Params): { options: DecisionOption[]; warnings: string[] } {
  const raw = p.array("options");
  const name = p.name("options");
  if (raw.length === 0) throw BridgeError.invalidParams(`'${name}' must contain at least one option.`);
  const options: DecisionOption[] = [];
  const warnings: string[] = [];
  const seen = new Set<string>();
  raw.forEach((item, i) => {
    const at = `${name}[${i}]`;
    let id: string;
    let description = "";
    if (typeof item === "string") {
      id = item;
    } else if (isJsonObject(item)) {
      const o = new Params(item, `${at}.`);
      warnings.push(...o.unknownKeys(["id", "description"]));
      id = o.string("id");
      description = o.optionalString("description")?.trim() ?? "";
    } else {
      throw BridgeError.invalidParams(
        `'${at}' must be an option id or an object with an 'id'; got ${showValue(item)}.`,
      );
    }
    id = id.trim();
    if (id === "") throw BridgeError.invalidParams(`'${at}.id' must not be empty.`);
    if (seen.has(id)) throw BridgeError.invalidParams(`Duplicate option id '${id}' in '${name}'.`);
    seen.add(id);
    options.push({ id, description });
  });
  return { options, warnings };
}

/**
 * Parses and validates one decision. Unknown keys (other than `extraKeys`) become warnings; parameter names
 * in messages carry `p`'s prefix (e.g. `requests[2].options[0].id`).
 */
export function parseDecision(
  p: Params,
  host: {
    /** Keys besides the decision's that are not warned about. */
    extraKeys: readonly string[];
    /** The default timeout of its client tools (ms, null = none). */
    toolTimeoutMs: number | null;
    /** Looks up an NPC's persona (for an NPC `actor`). */
    npcPersona: (id: string) => JsonObject | undefined;
    /** The error of an `actor` id no NPC has. */
    npcNotFound?: (id: string) => BridgeError;
  },
): DecisionSpec {
  const { extraKeys, toolTimeoutMs, npcPersona, npcNotFound } = host;
  const keyWarnings = p.unknownKeys([...DECISION_KEYS, ...extraKeys]);
  const situation = situationText(p.value("situation"));
  const parsedOptions = parseOptions(p);
  keyWarnings.push(...parsedOptions.warnings);
  const options = parsedOptions.options;
  const actor = parseActor(p, { persona: npcPersona, ...(npcNotFound ? { notFound: npcNotFound } : {}) });
  if (actor) keyWarnings.push(...actor.warnings);
  const context = p.get("context");
  const tools = parseToolDefinitions(p.get("tools"), {
    path: p.name("tools"),
    defaultTimeoutMs: toolTimeoutMs,
  });
  const choiceValue = p.get("toolChoice");
  const toolChoice = choiceValue === undefined ? "auto" : parseToolChoice(choiceValue, p.name("toolChoice"));
  if (typeof toolChoice === "object" && !tools.tools.some((t) => t.name === toolChoice.tool)) {
    throw BridgeError.invalidParams(
      `'${p.name("toolChoice")}' names tool '${toolChoice.tool}', which is not in '${p.name("tools")}'.`,
    );
  }
  const countWarning = toolCountWarning(tools.tools.length);
  const withCount = (warnings: string[]) => countWarning ? [...warnings, countWarning] : warnings;
  const fallback = p.optionalString("fallbackOptionID");
  let fallbackOptionID: string | null = null;
  if (fallback !== undefined) {
    const trimmed = fallback.trim();
    if (!options.some((o) => o.id === trimmed)) {
      throw BridgeError.invalidParams(
        `'${p.name("fallbackOptionID")}' must be one of the option ids (${
          options.map((o) => o.id).join(", ")
        }); got '${fallback}'.`,
      );
    }
    fallbackOptionID = trimmed;
  }
  return {
    situation,
    options,
    actor: actor?.actor ?? null,
    context: isEmptyContext(context) ? undefined : context,
    tools: tools.tools,
    toolChoice,
    fallbackOptionID,
    keyWarnings,
    toolWarnings: withCount(tools.warnings),
    toolWarningsFor: (model) => withCount(tools.warningsFor(model)),
  };
}

/** True for a context that adds no facts: absent, null or `{}`. */
function isEmptyContext(context: JsonValue | undefined): boolean {
  return context === undefined || context === null ||
    (isJsonObject(context) && Object.keys(context).length === 0);
}
