/**
 * Parsing of session `options` (§5 `session/create`) and per-turn overrides.
 * @module
 */
import { BridgeError } from "../protocol/errors.ts";
import { isJsonObject, type JsonValue } from "../protocol/json.ts";
import type { Params } from "../protocol/params.ts";
import type { GenerationOptions, Sampling } from "../models/language_model.ts";
import { type AgentSettings, DEFAULT_POLICY, DEFAULT_SETTINGS, type ToolPolicy } from "../agent/types.ts";
import { parseToolChoice } from "../agent/tool_definitions.ts";

/** Option keys of `session/create`. */
export const SESSION_OPTION_KEYS = [
  "toolChoice",
  "maxToolRounds",
  "maxToolCalls",
  "enabledTools",
  "temperature",
  "maxResponseTokens",
  "sampling",
  "toolTimeoutSeconds",
  "trimHistory",
  "reservedResponseTokens",
  "maxAttempts",
] as const;

/** Parsed session options. */
export interface SessionOptions {
  policy: ToolPolicy;
  settings: AgentSettings;
  /** Client tool timeout in ms; null = wait forever. */
  toolTimeoutMs: number | null;
  warnings: string[];
}

/** Parses `sampling` at `path`. */
export function parseSampling(value: JsonValue, path: string): Sampling {
  if (value === "greedy") return { mode: "greedy" };
  if (!isJsonObject(value)) {
    throw BridgeError.invalidParams(`'${path}' must be "greedy", {"topK": n} or {"topP": p}.`);
  }
  const seed = value.seed ?? undefined;
  if (
    seed !== undefined && (typeof seed !== "number" || !Number.isInteger(seed) || seed < 0 || seed >= 2 ** 53)
  ) {
    throw BridgeError.invalidParams(`'${path}.seed' must be an integer of at least 0.`);
  }
  const withSeed = seed === undefined ? {} : { seed: seed as number };
  if (value.topK !== undefined && value.topK !== null) {
    const k = value.topK;
    if (typeof k !== "number" || !Number.isInteger(k) || k < 1 || k >= 2 ** 31) {
      throw BridgeError.invalidParams(`'${path}.topK' must be an integer of at least 1.`);
    }
    return { mode: "topK", k, ...withSeed };
  }
  if (value.topP !== undefined && value.topP !== null) {
    const p = value.topP;
    if (typeof p !== "number" || !Number.isFinite(p) || p < 0 || p > 1) {
      throw BridgeError.invalidParams(`'${path}.topP' must be between 0 and 1.`);
    }
    return { mode: "topP", p, ...withSeed };
  }
  throw BridgeError.invalidParams(`'${path}' must contain 'topK' or 'topP'.`);
}

/** Parses per-turn policy fields of `p` over `base` (`toolChoice`, `maxToolRounds`, `maxToolCalls`, `enabledTools`). */
export function parsePolicy(p: Params, base: ToolPolicy): ToolPolicy {
  const raw = p.raw;
  // Most turns override nothing: then the base policy itself (policies are never mutated).
  if (
    raw.toolChoice == null && raw.maxToolRounds == null && raw.maxToolCalls == null &&
    raw.enabledTools == null
  ) return base;
  const choice = p.get("toolChoice");
  const rounds = p.optionalInteger("maxToolRounds", { min: 0 });
  const calls = p.optionalInteger("maxToolCalls", { min: 0 });
  const enabled = p.optionalStringArray("enabledTools");
  return {
    choice: choice === undefined ? base.choice : parseToolChoice(choice, p.name("toolChoice")),
    maxToolRounds: rounds ?? base.maxToolRounds,
    maxToolCalls: calls ?? base.maxToolCalls,
    enabledTools: enabled ?? base.enabledTools,
  };
}

/** Parses `options` (may be undefined) with the engine's default tool timeout (ms, null = none). */
export function parseSessionOptions(p: Params | undefined, defaultTimeoutMs: number | null): SessionOptions {
  if (!p) {
    return {
      policy: { ...DEFAULT_POLICY },
      settings: { ...DEFAULT_SETTINGS },
      toolTimeoutMs: defaultTimeoutMs,
      warnings: [],
    };
  }
  const warnings = p.unknownKeys(SESSION_OPTION_KEYS);
  const policy = { ...parsePolicy(p, DEFAULT_POLICY) };
  const options: GenerationOptions = {};
  const temperature = p.optionalNumber("temperature", { min: 0 });
  if (temperature !== undefined) options.temperature = temperature;
  const maxTokens = p.optionalInteger("maxResponseTokens", { min: 1 });
  if (maxTokens !== undefined) options.maximumResponseTokens = maxTokens;
  const sampling = p.get("sampling");
  if (sampling !== undefined) options.sampling = parseSampling(sampling, p.name("sampling"));
  const timeout = p.optionalSeconds("toolTimeoutSeconds");
  const trim = p.optionalBool("trimHistory");
  const reserved = p.optionalInteger("reservedResponseTokens", { min: 0 });
  const attempts = p.optionalInteger("maxAttempts", { min: 1 });
  return {
    policy,
    settings: {
      options,
      maxAttempts: attempts ?? DEFAULT_SETTINGS.maxAttempts,
      trimHistory: trim ?? DEFAULT_SETTINGS.trimHistory,
      reservedResponseTokens: reserved ?? DEFAULT_SETTINGS.reservedResponseTokens,
    },
    toolTimeoutMs: timeout === undefined ? defaultTimeoutMs : timeout,
    warnings,
  };
}
