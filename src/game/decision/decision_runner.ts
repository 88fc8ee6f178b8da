/**
 * Runs one decision: a fresh agent (no history) with the decision instructions, the client tools and one
 * structured turn against the `{reasoning, choice, confidence}` schema. Client tools go through the host's
 * {@link TurnDriver}.
 * @module
 */
import { toBridgeError } from "../../protocol/errors.ts";
import { Agent } from "../../agent/agent.ts";
import { DEFAULT_POLICY, type ToolPolicy } from "../../agent/types.ts";
import type { LanguageModel } from "../../models/language_model.ts";
import type { TurnDriver } from "../../agent/turn_host.ts";
import { decisionInstructions, decisionPrompt, decisionSchema } from "./decision_prompt.ts";
import type { DecisionSpec, EngineSettings } from "./decision_request.ts";
import { type Decision, fallbackDecision, isBlocked, parseDecisionAnswer } from "./decision_result.ts";

/** The tool policy of a decision: `none` without tools, else the tool choice with `maxToolRounds`. */
export function decisionPolicy(spec: DecisionSpec, settings: EngineSettings): ToolPolicy {
  return {
    choice: spec.tools.length === 0 ? "none" : spec.toolChoice,
    maxToolRounds: settings.maxToolRounds,
    maxToolCalls: DEFAULT_POLICY.maxToolCalls,
    enabledTools: null,
  };
}

/** What a decision runs with. */
export interface DecisionRun {
  /** Supplies the turn sink (client tools through `tool/call`). */
  drive: TurnDriver;
  /** The host's lifetime: the turn observes it. */
  signal: AbortSignal;
  /** The engine settings of the request (instructions, temperature, tool choice, …). */
  settings: EngineSettings;
  /** The model that decides. */
  model: LanguageModel;
}

/**
 * Runs a decision with more than one option on `model`. A `guardrail_violation` or `refusal` returns the
 * fallback decision when the spec has a `fallbackOptionID`; other failures reject with a BridgeError.
 * The turn runs through `drive` and observes `signal` (the host's lifetime).
 */
export async function runDecision(spec: DecisionSpec, run: DecisionRun): Promise<Decision> {
  const { drive, signal, settings, model } = run;
  const agent = new Agent({
    model,
    instructions: decisionInstructions(spec, settings.instructions),
    tools: spec.tools,
    settings: { options: settings.temperature === undefined ? {} : { temperature: settings.temperature } },
  });
  const input = {
    prompt: decisionPrompt(spec),
    schema: decisionSchema(spec.options),
    policy: decisionPolicy(spec, settings),
    stream: false,
  };
  try {
    const result = await drive((sink) => agent.runTurn(input, sink, signal));
    return parseDecisionAnswer(result.structured, {
      options: spec.options,
      toolCalls: result.toolCalls,
      usage: result.usage,
    });
  } catch (error) {
    const e = toBridgeError(error);
    if (spec.fallbackOptionID !== null && isBlocked(e) && !signal.aborted) {
      return fallbackDecision(spec.fallbackOptionID);
    }
    throw e;
  }
}
