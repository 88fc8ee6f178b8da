/**
 * Decision results: parsing the model's structured answer, the single-option and fallback results, and the
 * wire form (`optionID, reasoning, confidence, toolCalls, usage, isFallback, [warnings]`).
 * @module
 */
import { BridgeError } from "../../protocol/errors.ts";
import { compactJson, isJsonObject, type JsonObject, type JsonValue, ownValue } from "../../protocol/json.ts";
import type { ToolRecord, Usage } from "../../agent/types.ts";
import { recordJson, usageJson } from "../../agent/result_json.ts";
import type { DecisionOption } from "./decision_request.ts";

/** Reasoning of a decision with a single option (no model call). */
export const ONLY_OPTION_REASONING = "It is the only option.";
/** Confidence used when the model gives none. */
export const DEFAULT_CONFIDENCE = 50;

/** A finished decision. */
export interface Decision {
  /** The chosen option's id. */
  optionID: string;
  /** The model's reason (trimmed). */
  reasoning: string;
  /** 0…100. */
  confidence: number;
  /** Tool calls made while deciding. */
  toolCalls: ToolRecord[];
  /** Token usage. */
  usage: Usage;
  /** True when the fallback option answered a blocked decision. */
  isFallback: boolean;
}

/** Zero token usage. */
export function zeroUsage(): Usage {
  return { inputTokens: 0, cachedInputTokens: 0, outputTokens: 0, totalTokens: 0 };
}

/** The decision for a single option: immediate, confidence 100. */
export function onlyOptionDecision(option: DecisionOption): Decision {
  return {
    optionID: option.id,
    reasoning: ONLY_OPTION_REASONING,
    confidence: 100,
    toolCalls: [],
    usage: zeroUsage(),
    isFallback: false,
  };
}

/** The decision returned when guardrails (or a refusal) block the model and a fallback option is set. */
export function fallbackDecision(optionID: string): Decision {
  return { optionID, reasoning: "", confidence: 0, toolCalls: [], usage: zeroUsage(), isFallback: true };
}

/** True for the errors a `fallbackOptionID` answers: `guardrail_violation` and `refusal`. */
export function isBlocked(error: BridgeError): boolean {
  return error.dataCode === "guardrail_violation" || error.dataCode === "refusal";
}

/**
 * Reads the model's answer `{reasoning, choice, confidence}`. The choice is matched exactly, then ignoring
 * case (and surrounding spaces); anything else fails with `generation_failed`. The confidence is rounded and
 * clamped to 0…100 (default 50); the reasoning is trimmed.
 */
export function parseDecisionAnswer(
  value: JsonValue | undefined,
  turn: { options: readonly DecisionOption[]; toolCalls: ToolRecord[]; usage: Usage },
): Decision {
  const { options, toolCalls, usage } = turn;
  if (!isJsonObject(value)) {
    throw BridgeError.of("generation_failed", "The model produced no decision.");
  }
  const rawChoice = ownValue(value, "choice");
  const choice = typeof rawChoice === "string"
    ? rawChoice
    : rawChoice === undefined
    ? ""
    : compactJson(rawChoice);
  let option = options.find((o) => o.id === choice);
  if (!option) {
    const folded = choice.trim().toLowerCase();
    option = options.find((o) => o.id.toLowerCase() === folded);
  }
  if (!option) {
    throw BridgeError.of(
      "generation_failed",
      `The model chose '${choice}', which is not one of: ${options.map((o) => o.id).join(", ")}.`,
    );
  }
  const rawConfidence = ownValue(value, "confidence");
  const confidence = typeof rawConfidence === "number" && Number.isFinite(rawConfidence)
    ? Math.min(100, Math.max(0, Math.round(rawConfidence)))
    : DEFAULT_CONFIDENCE;
  const rawReasoning = ownValue(value, "reasoning");
  const reasoning = typeof rawReasoning === "string" ? rawReasoning.trim() : "";
  return { optionID: option.id, reasoning, confidence, toolCalls, usage, isFallback: false };
}

/** The wire form of a decision, with `warnings` when there are any. */
export function decisionJson(decision: Decision, warnings: readonly string[] = []): JsonObject {
  const out: JsonObject = {
    optionID: decision.optionID,
    reasoning: decision.reasoning,
    confidence: decision.confidence,
    toolCalls: decision.toolCalls.map(recordJson),
    usage: usageJson(decision.usage),
    isFallback: decision.isFallback,
  };
  if (warnings.length > 0) out.warnings = [...warnings];
  return out;
}
