/**
 * Runs one decision: a fresh agent (no history) with the decision instructions, the client tools and one
 * structured turn against the `{reasoning, choice, confidence}` schema. Client tools go through
 * {@link BridgeRequest.drive}, so `tool/call` params are `{...context, requestId, call}`.
 * @module
 */
import { toBridgeError } from "../../protocol/errors.ts";
import type { JsonObject } from "../../protocol/json.ts";
import { Agent } from "../../agent/agent.ts";
import { DEFAULT_POLICY, type ToolPolicy } from "../../agent/types.ts";
import type { LanguageModel } from "../../models/language_model.ts";
import type { BridgeRequest } from "../../engine/request.ts";
import { decisionInstructions, decisionPrompt, decisionSchema } from "./decision_prompt.ts";
import type { DecisionSpec, EngineSettings } from "./decision_request.ts";
import { type Decision, fallbackDecision, isBlocked, parseDecisionAnswer } from "./decision_result.ts";

/** Notification method name given to `drive` (decisions never stream, so it is never sent). */
const EVENT_METHOD = "decision/event";

/** The tool policy of a decision: `none` without tools, else the tool choice with `maxToolRounds`. */
export function decisionPolicy(spec: DecisionSpec, settings: EngineSettings): ToolPolicy {
  return {
    choice: spec.tools.length === 0 ? "none" : spec.toolChoice,
    maxToolRounds: settings.maxToolRounds,
    maxToolCalls: DEFAULT_POLICY.maxToolCalls,
    enabledTools: null,
  };
}

/**
 * Runs a decision with more than one option on `model`. A `guardrail_violation` or `refusal` returns the
 * fallback decision when the spec has a `fallbackOptionID`; other failures reject with a BridgeError.
 * The run observes `request.signal` (the engine's lifetime).
 */
export async function runDecision(
  request: BridgeRequest,
  spec: DecisionSpec,
  settings: EngineSettings,
  model: LanguageModel,
  context: JsonObject,
): Promise<Decision> {
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
    const result = await request.drive(
      (sink) => agent.runTurn(input, sink, request.signal),
      { stream: false, context, eventMethod: EVENT_METHOD },
    );
    return parseDecisionAnswer(result.structured, spec.options, result.toolCalls, result.usage);
  } catch (error) {
    const e = toBridgeError(error);
    if (spec.fallbackOptionID !== null && isBlocked(e) && !request.signal.aborted) {
      return fallbackDecision(spec.fallbackOptionID);
    }
    throw e;
  }
}
