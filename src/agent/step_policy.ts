/**
 * Per-step steering (reference-behavior §2.6): which tools the model sees and the tool-calling mode of each
 * inference step. A forced choice applies to the first step of a turn only.
 * @module
 */
import type { ToolCallingMode } from "../models/language_model.ts";
import type { AgentTool, ToolPolicy } from "./types.ts";

/** Name of the hidden tool offered on the first step of an `explicit` turn. */
export const RESPOND_DIRECTLY = "respond_directly";

/** The hidden `respond_directly` tool. */
export const RESPOND_DIRECTLY_TOOL: AgentTool = {
  name: RESPOND_DIRECTLY,
  description:
    "Use this when you can answer right away from the conversation alone, without looking anything up or taking an action.",
  jsonSchema: { type: "object", properties: {} },
  generationSchema: {
    title: "RespondDirectlyArguments",
    type: "object",
    additionalProperties: false,
    properties: {},
    required: [],
    "x-order": [],
  },
  execution: "local",
  timeoutMs: null,
  run: () => ({ output: "Reply now.", isError: false }),
};

/** Progress of the turn so far. */
export interface TurnProgress {
  /** Tool rounds (model steps that called tools) in this turn, including respond_directly rounds. */
  rounds: number;
  /** Individual calls admitted in this turn (respond_directly excluded). */
  calls: number;
  /** True when the only calls so far were respond_directly. */
  respondedDirectly: boolean;
}

/** What the next step looks like. */
export interface StepPlan {
  mode: ToolCallingMode;
  /** Tools shown to the model (respond_directly included when offered). */
  tools: AgentTool[];
}

const DISALLOWED: StepPlan = Object.freeze({
  mode: "disallowed",
  tools: Object.freeze([]) as unknown as AgentTool[],
});

/** Plans the next step from the policy, the session's tools and the turn's progress. */
export function planStep(turn: { policy: ToolPolicy; tools: AgentTool[]; progress: TurnProgress }): StepPlan {
  const { policy, tools, progress } = turn;
  let visible = policy.enabledTools === null
    ? tools
    : tools.filter((t) => policy.enabledTools!.includes(t.name));
  const first = progress.rounds === 0;
  let mode: ToolCallingMode;
  const choice = policy.choice;
  if (choice === "none" || progress.respondedDirectly) mode = "disallowed";
  else if (progress.rounds >= policy.maxToolRounds || progress.calls >= policy.maxToolCalls) {
    mode = "disallowed";
  } else if ((choice === "required" || choice === "explicit") && first) mode = "required";
  else if (typeof choice === "object" && first) {
    mode = "required";
    visible = visible.filter((t) => t.name === choice.tool);
  } else mode = "allowed";
  if (mode !== "disallowed" && choice === "explicit" && first && tools.length > 0) {
    visible = [...visible, RESPOND_DIRECTLY_TOOL];
  }
  if (visible.length === 0) mode = "disallowed";
  return mode === "disallowed" ? DISALLOWED : { mode, tools: visible };
}
