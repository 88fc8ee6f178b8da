/**
 * Runs one model step's batch of tool calls: budgets, client and local execution in parallel, timeouts,
 * events and records (completion order), and the transcript entries (call order).
 * @module
 */
import { BridgeError, MESSAGES, toBridgeError } from "../protocol/errors.ts";
import { compactJson, type JsonValue } from "../protocol/json.ts";
import type { ToolCallsEntry, ToolOutputEntry } from "../protocol/transcript.ts";
import { NO_ASSETS } from "./shared_values.ts";
import type { StepToolCall } from "../models/language_model.ts";
import { BUDGET_MESSAGE, markBudgetRefused } from "../models/tool_budget.ts";
import { newCallId } from "../util/ids.ts";
import { RESPOND_DIRECTLY } from "./step_policy.ts";
import type { AgentTool, ToolCallInfo, ToolOutcome, ToolRecord, TurnSink } from "./types.ts";

export { BUDGET_MESSAGE } from "../models/tool_budget.ts";

/** Default timeout of local tools (ms). */
export const LOCAL_TOOL_TIMEOUT_MS = 60_000;

/** Formats a duration the way timeout messages show it: `120s`, `1.5s`, `200ms`. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${ms}ms`;
  const s = ms / 1000;
  return `${Number.isInteger(s) ? s : Number(s.toFixed(3))}s`;
}

/** The text the model sees for an outcome: text as-is, JSON compact, errors prefixed "Error: ". */
export function modelVisibleOutput(outcome: ToolOutcome): string {
  const text = typeof outcome.output === "string" ? outcome.output : compactJson(outcome.output);
  return outcome.isError ? `Error: ${text}` : text;
}

/** What running a batch produced. */
export interface BatchResult {
  /** Records in completion order (respond_directly excluded). */
  records: ToolRecord[];
  /** The tool-calls entry and the output entries, in call order. */
  entries: [ToolCallsEntry, ...ToolOutputEntry[]];
  /** Calls admitted against the budget. */
  admitted: number;
  /** True when every call was respond_directly. */
  onlyRespondDirectly: boolean;
}

/** What one batch of tool calls runs with: the tools, the turn's sink and signal, and its call budget. */
export interface BatchContext {
  /** The tools the calls may name. */
  tools: AgentTool[];
  /** Receives the batch's events and carries its client tool calls. */
  sink: TurnSink;
  /** The turn's signal. */
  signal: AbortSignal;
  /** Calls admitted earlier in the turn. */
  callsSoFar: number;
  /** Most calls one turn admits. */
  maxToolCalls: number;
  /** Called as soon as the first call is admitted (a retry is then no longer allowed). */
  onAdmitted: () => void;
}

function outputEntry(id: string, name: string, outcome: ToolOutcome): ToolOutputEntry {
  const segment = !outcome.isError && typeof outcome.output !== "string"
    ? { type: "structure" as const, id: "", structure: { source: name, content: outcome.output } }
    : { type: "text" as const, id: "", text: modelVisibleOutput(outcome) };
  return { id, role: "tool", toolCallID: id, toolName: name, contents: [segment] };
}

function runWithTimeout(
  start: (signal: AbortSignal) => Promise<ToolOutcome>,
  timeoutMs: number | null,
  name: string,
  turnSignal: AbortSignal,
): Promise<ToolOutcome> {
  const controller = new AbortController();
  return new Promise<ToolOutcome>((resolve) => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const finish = (outcome: ToolOutcome, abortReason?: string) => {
      if (timer !== undefined) clearTimeout(timer);
      turnSignal.removeEventListener("abort", onTurnAbort);
      if (abortReason !== undefined) controller.abort(abortReason);
      resolve(outcome);
    };
    const onTurnAbort = () => {
      const text = MESSAGES.turnCancelled;
      finish({ output: text, isError: true }, `Error: ${text}`);
    };
    if (turnSignal.aborted) return onTurnAbort();
    turnSignal.addEventListener("abort", onTurnAbort, { once: true });
    if (timeoutMs !== null) {
      timer = setTimeout(() => {
        const text = `Tool '${name}' timed out after ${formatDuration(timeoutMs)}.`;
        finish({ output: text, isError: true }, `Error: ${text}`);
      }, timeoutMs);
    }
    start(controller.signal).then(
      (outcome) => finish(outcome),
      (error) => {
        const e = toBridgeError(error);
        finish({ output: e.message, isError: true });
      },
    );
  });
}

/**
 * Runs the calls of one step. Events: `toolCallStarted` in call order as each call starts, and
 * `toolCallCompleted` in completion order.
 */
export async function runToolBatch(calls: StepToolCall[], batch: BatchContext): Promise<BatchResult> {
  const { tools, sink, signal } = batch;
  const records: ToolRecord[] = [];
  const transcriptCalls: ToolCallsEntry["toolCalls"] = [];
  const outcomes: Array<Promise<[string, string, ToolOutcome]>> = [];
  let admitted = 0;
  let real = 0;
  const refusedAt = new Set<number>(); // indexes in `outcomes` of calls refused for the budget
  for (const call of calls) {
    const wireId = newCallId();
    const transcriptId = call.nativeId ?? wireId;
    transcriptCalls.push({ id: transcriptId, name: call.name, arguments: compactJson(call.arguments) });
    if (call.name === RESPOND_DIRECTLY) {
      outcomes.push(Promise.resolve([transcriptId, call.name, { output: "Reply now.", isError: false }]));
      continue;
    }
    real++;
    const info: ToolCallInfo = { id: wireId, name: call.name, arguments: call.arguments };
    const tool = tools.find((t) => t.name === call.name);
    const execution = tool?.execution ?? "local";
    const started = performance.now();
    const complete = (outcome: ToolOutcome): [string, string, ToolOutcome] => {
      const record: ToolRecord = {
        call: info,
        output: outcome.output,
        isError: outcome.isError,
        durationSeconds: Math.round(performance.now() - started) / 1000,
      };
      records.push(record);
      sink.event({ type: "toolCallCompleted", record });
      return [transcriptId, call.name, outcome];
    };
    sink.event({ type: "toolCallStarted", call: info, execution });
    if (batch.callsSoFar + admitted >= batch.maxToolCalls) {
      const record: ToolRecord = { call: info, output: BUDGET_MESSAGE, isError: true, durationSeconds: 0 };
      records.push(record);
      sink.event({ type: "toolCallCompleted", record });
      refusedAt.add(outcomes.length);
      outcomes.push(Promise.resolve([transcriptId, call.name, { output: BUDGET_MESSAGE, isError: true }]));
      continue;
    }
    admitted++;
    batch.onAdmitted();
    if (!tool) {
      const outcome = { output: `There is no tool named '${call.name}'.`, isError: true };
      outcomes.push(Promise.resolve(complete(outcome)));
      continue;
    }
    const start = tool.execution === "client"
      ? (s: AbortSignal) => sink.callClientTool(info, s)
      : async (s: AbortSignal) => await tool.run!(call.arguments, { signal: s, call: info });
    const timeout = tool.execution === "client" ? tool.timeoutMs : (tool.timeoutMs ?? LOCAL_TOOL_TIMEOUT_MS);
    outcomes.push(runWithTimeout(start, timeout, tool.name, signal).then(complete));
  }
  const results = await Promise.all(outcomes);
  if (signal.aborted) throw BridgeError.turnCancelled();
  const callsEntry: ToolCallsEntry = {
    id: "", // given when the transcript is exported (assignMissingIds)
    role: "response",
    toolCalls: transcriptCalls,
    contents: [],
    assets: NO_ASSETS,
  };
  const outputs = results.map(([id, name, outcome], i) => {
    const entry = outputEntry(id, name, outcome);
    return refusedAt.has(i) ? markBudgetRefused(entry) : entry;
  });
  return { records, entries: [callsEntry, ...outputs], admitted, onlyRespondDirectly: real === 0 };
}

/** The model-visible text of a JSON value output (used by templates and summaries). */
export function outputText(value: JsonValue): string {
  return typeof value === "string" ? value : compactJson(value);
}
