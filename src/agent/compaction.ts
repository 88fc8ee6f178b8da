/**
 * Compaction: summarizes all but the most recent turns into the context note (one extra model call) and
 * drops them from the history. Cancelling it changes nothing.
 *
 * Two ways to ask for the summary: {@link compactAgent} asks a fresh summarizer with the conversation
 * rendered as text (`session/compact`, as the reference does), {@link summarizeAsContinuation} asks the
 * conversation itself, as its next message (NPCs): the prompt then extends the one the model just
 * evaluated, so a prompt cache covers all of it and only the request and the summary are new work.
 * @module
 */
import { isToolCallsEntry, segmentsText } from "../protocol/transcript.ts";
import type { ConversationEntry } from "../protocol/transcript.ts";
import { Agent } from "./agent.ts";
import type { ToolPolicy } from "./types.ts";

/** Default summarizer instructions. */
export const DEFAULT_SUMMARY_INSTRUCTIONS =
  "You keep a running summary of a conversation for a character who must remember it. Fold the new " +
  "conversation into the summary so far. Keep names, promises, facts learned, items exchanged, decisions and " +
  "the tone of the relationship. Write at most 120 words of plain prose.";

/** Labels used when rendering the conversation for the summarizer. */
export interface SummaryLabels {
  user: string;
  assistant: string;
}

/** Renders entries one per line for the summarizer prompt. */
export function renderForSummary(entries: ConversationEntry[], labels: SummaryLabels): string {
  const lines: string[] = [];
  for (const e of entries) {
    if (e.role === "user") lines.push(`${labels.user}: ${segmentsText(e.contents)}`);
    else if (isToolCallsEntry(e)) {
      for (const c of e.toolCalls) lines.push(`[${labels.assistant} used ${c.name} ${c.arguments}]`);
    } else if (e.role === "response") lines.push(`${labels.assistant}: ${segmentsText(e.contents)}`);
    else if (e.role === "tool") lines.push(`[${e.toolName} result: ${segmentsText(e.contents)}]`);
  }
  return lines.join("\n");
}

/** Index where the `keep`-th newest turn starts, or null when there is nothing to compact. */
export function compactionCut(entries: ConversationEntry[], keep: number): number | null {
  const starts: number[] = [];
  entries.forEach((e, i) => {
    if (e.role === "user") starts.push(i);
  });
  if (starts.length <= keep) return null;
  return keep === 0 ? entries.length : starts[starts.length - keep];
}

/** Options of {@link compactAgent}. */
export interface CompactOptions {
  keepRecentTurns: number;
  summaryInstructions?: string | null;
  labels?: SummaryLabels;
  /** Summary to merge into (defaults to the agent's context note). */
  previousSummary?: string | null;
  signal: AbortSignal;
  /** Called right before state changes; throws when cancelled. */
  commit: () => void;
  /** When false, the summary is returned but the context note is left alone (the caller stores it). */
  storeInContextNote?: boolean;
}

/** Summarizes older turns with the agent's own model. Returns the summary, or null when nothing was compacted. */
export async function compactAgent(agent: Agent, options: CompactOptions): Promise<string | null> {
  const entries = agent.entries;
  const cut = compactionCut(entries, options.keepRecentTurns);
  if (cut === null) return null;
  const previous = options.previousSummary !== undefined ? options.previousSummary : agent.contextNote;
  const labels = options.labels ?? { user: "User", assistant: "Assistant" };
  const prompt = (previous ? `Summary so far:\n${previous}\n\n` : "") +
    `Conversation to fold into the summary:\n${renderForSummary(entries.slice(0, cut), labels)}`;
  const summarizer = new Agent({
    model: agent.model,
    instructions: options.summaryInstructions ?? DEFAULT_SUMMARY_INSTRUCTIONS,
    settings: {
      options: agent.settings.options,
      maxAttempts: agent.settings.maxAttempts,
      trimHistory: false,
    },
  });
  const result = await summarizer.runTurn(
    {
      prompt,
      schema: null,
      policy: { choice: "none", maxToolRounds: 0, maxToolCalls: 0, enabledTools: null },
      stream: false,
    },
    { event: () => {}, callClientTool: () => Promise.resolve({ output: "No tools.", isError: true }) },
    options.signal,
  );
  const summary = result.text.trim();
  options.commit();
  if (options.storeInContextNote !== false) agent.contextNote = summary;
  agent.entries = entries.slice(cut);
  return summary;
}

/** Options of {@link summarizeAsContinuation}. */
export interface ContinuationOptions {
  /** The request for the summary, sent as the next user message of the conversation. */
  request: string;
  /**
   * The policy of the conversation's turns: the summary request shows the same tool list (nothing can be
   * called), so its prompt extends theirs.
   */
  policy: ToolPolicy;
  /** Least `maximumResponseTokens` for the summary (a lower configured limit would cut it off). */
  minResponseTokens?: number;
  signal: AbortSignal;
}

/**
 * Asks `agent`'s model for a summary as the next message of its conversation (same instructions, tools and
 * history; tools shown but not callable) and returns the trimmed answer. The agent's history is not changed.
 */
export async function summarizeAsContinuation(agent: Agent, options: ContinuationOptions): Promise<string> {
  const generation = { ...agent.settings.options };
  const least = options.minResponseTokens;
  if (least !== undefined && generation.maximumResponseTokens !== undefined) {
    generation.maximumResponseTokens = Math.max(generation.maximumResponseTokens, least);
  }
  const scratch = new Agent({
    model: agent.model,
    instructions: agent.instructions,
    tools: agent.tools,
    entries: [...agent.entries],
    settings: { ...agent.settings, options: generation },
  });
  const policy = options.policy;
  const result = await scratch.runTurn(
    {
      prompt: options.request,
      schema: null,
      policy: {
        choice: "none",
        maxToolRounds: 0,
        maxToolCalls: 0,
        enabledTools: policy.enabledTools,
        showRespondDirectly: policy.choice === "explicit" || policy.showRespondDirectly === true,
      },
      stream: false,
    },
    { event: () => {}, callClientTool: () => Promise.resolve({ output: "No tools.", isError: true }) },
    options.signal,
  );
  return result.text.trim();
}
