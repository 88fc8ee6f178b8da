/**
 * Wire encodings of agent results: tool records, usage and steps in the key orders the protocol uses.
 * @module
 */
import type { JsonObject, JsonValue } from "../protocol/json.ts";
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
  const text = result.text;
  const toolCalls = result.toolCalls.length === 0 ? [] : result.toolCalls.map(recordJson);
  // The agent builds usage and steps with exactly the wire fields in wire order: used as they are.
  const usage = result.usage as unknown as JsonObject;
  const steps = result.steps as unknown as JsonObject[];
  const structured = result.structured;
  // Whole literals, not fields added one by one: one allocation with every field in the object itself.
  if (session === undefined) {
    return structured === undefined
      ? { text, toolCalls, usage, steps }
      : { text, structured, toolCalls, usage, steps };
  }
  return structured === undefined
    ? { session, text, toolCalls, usage, steps }
    : { session, text, structured, toolCalls, usage, steps };
}

const q = JSON.stringify;
/** The keys of a plain `session/respond` result, in order. */
const TURN_RESULT_KEYS = ["session", "text", "toolCalls", "usage", "steps"];

function isCount(n: unknown): n is number {
  return typeof n === "number" && Number.isFinite(n);
}

/** `stepJson(step)` as JSON text, or null for a shape it does not know. */
function stepText(step: JsonValue): string | null {
  if (typeof step !== "object" || step === null || Array.isArray(step)) return null;
  const s = step as unknown as StepInfo;
  if (
    !isCount(s.index) || !isCount(s.completedToolRounds) || typeof s.toolCallingMode !== "string" ||
    !Array.isArray(s.enabledTools) || !isCount(s.trimmedEntries)
  ) return null;
  return `{"index":${s.index},"completedToolRounds":${s.completedToolRounds},"toolCallingMode":${
    q(s.toolCallingMode)
  },"enabledTools":${
    s.enabledTools.length === 0 ? "[]" : q(s.enabledTools)
  },"trimmedEntries":${s.trimmedEntries}}`;
}

/**
 * The JSON text of a `session/respond` result from {@link turnResultJson} — exactly what `JSON.stringify`
 * writes, in about half its time (the bridge's most frequent large response) — or `null` for any other
 * shape (a `structured` answer, `warnings`, a result an extension made), which is then stringified.
 *
 * @example
 * ```ts
 * import { encodeTurnResult } from "./result_json.ts";
 * encodeTurnResult({ session: "g", text: "Hi.", toolCalls: [], usage: { inputTokens: 1, cachedInputTokens: 0, outputTokens: 1, totalTokens: 2 }, steps: [] });
 * ```
 */
export function encodeTurnResult(result: JsonValue): string | null {
  if (typeof result !== "object" || result === null || Array.isArray(result)) return null;
  const { session, text, toolCalls, usage, steps } = result;
  if (
    typeof session !== "string" || typeof text !== "string" || !Array.isArray(toolCalls) ||
    !Array.isArray(steps) || typeof usage !== "object" || usage === null || Array.isArray(usage)
  ) return null;
  // Exactly these five keys, in this order (`structured` or `warnings` → the general path).
  let keys = 0;
  for (const key in result) {
    if (key !== TURN_RESULT_KEYS[keys++]) return null;
  }
  if (keys !== 5) return null;
  const u = usage as unknown as Usage;
  if (
    !isCount(u.inputTokens) || !isCount(u.cachedInputTokens) || !isCount(u.outputTokens) ||
    !isCount(u.totalTokens)
  ) return null;
  let stepsText = "[";
  for (let i = 0; i < steps.length; i++) {
    const one = stepText(steps[i]);
    if (one === null) return null;
    stepsText += i === 0 ? one : `,${one}`;
  }
  return `{"session":${q(session)},"text":${q(text)},"toolCalls":${
    toolCalls.length === 0 ? "[]" : q(toolCalls)
  },"usage":{"inputTokens":${u.inputTokens},"cachedInputTokens":${u.cachedInputTokens},"outputTokens":${u.outputTokens},"totalTokens":${u.totalTokens}},"steps":${stepsText}]}`;
}
