/**
 * Per-step steering (reference-behavior §2.6): which tools the model may call and the tool-calling mode of
 * each inference step. A forced choice applies to the first step of a turn only.
 *
 * A model reuses its prompt cache only for an unchanged prefix, and the tool list sits near the start of
 * every prompt. So a plan names two lists: `tools`, what this step may call (narrowed by the choice and the
 * budgets, as the reference does), and `offered`, the list the whole turn shows the model. `offered` is the
 * same on every step of a turn (and across turns with the same policy): backends that can restrict calls by
 * tool choice, grammar or validation send `offered` and restrict to `tools`; the others send `tools`.
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
  /** Tools the model may call in this step (respond_directly included when offered); `[]` when disallowed. */
  tools: AgentTool[];
  /** Tools the turn shows the model on every step (a superset of `tools`). */
  offered: AgentTool[];
}

const NO_TOOLS = Object.freeze([]) as unknown as AgentTool[];

/** The list every step of a turn under `policy` shows (enabledTools applied; respond_directly when explicit). */
export function offeredTools(policy: ToolPolicy, tools: AgentTool[]): AgentTool[] {
  const base = policy.enabledTools === null
    ? tools
    : tools.filter((t) => policy.enabledTools!.includes(t.name));
  const respond = tools.length > 0 && (policy.choice === "explicit" || policy.showRespondDirectly === true);
  return respond ? [...base, RESPOND_DIRECTLY_TOOL] : base;
}

/**
 * Plans the next step from the policy, the session's tools and the turn's progress. `turn.offered` (the
 * turn's list from {@link offeredTools}) is passed in when the caller already has it, so every step shares it.
 */
export function planStep(
  turn: { policy: ToolPolicy; tools: AgentTool[]; progress: TurnProgress; offered?: AgentTool[] },
): StepPlan {
  const { policy, tools, progress } = turn;
  const offered = turn.offered ?? offeredTools(policy, tools);
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
  return mode === "disallowed" ? { mode, tools: NO_TOOLS, offered } : { mode, tools: visible, offered };
}
