/**
 * Wire encodings of agent results: tool records, usage and steps in the key orders the protocol uses.
 * @module
 */
import type { JsonObject } from "../protocol/json.ts";
import type { StepInfo, ToolRecord, TurnResult, Usage } from "./types.ts";

/** `{call, output, isError, durationSeconds}`. */
export function recordJson(record: ToolRecord): JsonObject {
  return {
    call: { id: record.call.id, name: record.call.name, arguments: record.call.arguments },
    output: record.output,
    isError: record.isError,
    durationSeconds: record.durationSeconds,
  };
}

/** `{inputTokens, cachedInputTokens, outputTokens, totalTokens}`. */
export function usageJson(usage: Usage): JsonObject {
  return {
    inputTokens: usage.inputTokens,
    cachedInputTokens: usage.cachedInputTokens,
    outputTokens: usage.outputTokens,
    totalTokens: usage.inputTokens + usage.outputTokens,
  };
}

/** `{index, completedToolRounds, toolCallingMode, enabledTools, trimmedEntries}`. */
export function stepJson(step: StepInfo): JsonObject {
  return {
    index: step.index,
    completedToolRounds: step.completedToolRounds,
    toolCallingMode: step.toolCallingMode,
    enabledTools: step.enabledTools,
    trimmedEntries: step.trimmedEntries,
  };
}

/**
 * The `session/respond` result body: `session` (when given), text, structured?, toolCalls, usage, steps.
 */
export function turnResultJson(result: TurnResult, session?: string): JsonObject {
  const out: JsonObject = session === undefined ? { text: result.text } : { session, text: result.text };
  if (result.structured !== undefined) out.structured = result.structured;
  out.toolCalls = result.toolCalls.map(recordJson);
  // The agent builds usage and steps with exactly the wire fields in wire order: used as they are.
  out.usage = result.usage as unknown as JsonObject;
  out.steps = result.steps as unknown as JsonObject[];
  return out;
}
