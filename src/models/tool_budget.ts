/**
 * The output a tool call beyond the turn's `maxToolCalls` gets instead of running: the agent gives it
 * (tool_runtime.ts), and the scripted model tells such a refused call from one that ran.
 * @module
 */

/** Output given to calls beyond `maxToolCalls` (the model sees it as `Error: …`); the call never runs. */
export const BUDGET_MESSAGE =
  "The tool budget for this turn is used up. Answer with the information you already have.";
