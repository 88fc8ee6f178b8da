/**
 * Types of the agent loop: tool choice and policy, tools, calls, records, events and turn results.
 * @module
 */
import type { JsonObject, JsonValue } from "../protocol/json.ts";
import type { GenerationOptions, ResponseSchema, ToolCallingMode } from "../models/language_model.ts";

/** Which tools the first model step must use (§5 `toolChoice`). */
export type ToolChoice = "auto" | "none" | "required" | "explicit" | { tool: string };

/** Per-turn tool policy. */
export interface ToolPolicy {
  choice: ToolChoice;
  /** Model steps that may call tools (default 4). */
  maxToolRounds: number;
  /** Tool calls per turn (default 12). */
  maxToolCalls: number;
  /** Tools visible to the model, or null for all. */
  enabledTools: string[] | null;
}

/** The default tool policy of a session. */
export const DEFAULT_POLICY: ToolPolicy = {
  choice: "auto",
  maxToolRounds: 4,
  maxToolCalls: 12,
  enabledTools: null,
};

/** A tool call as reported on the wire: `{id, name, arguments}`. */
export interface ToolCallInfo {
  id: string;
  name: string;
  arguments: JsonObject;
}

/** What a tool produced. `output` is text or a JSON value; errors carry their message as text. */
export interface ToolOutcome {
  output: JsonValue;
  isError: boolean;
}

/** A finished tool call (`result.toolCalls[]`). */
export interface ToolRecord {
  call: ToolCallInfo;
  output: JsonValue;
  isError: boolean;
  durationSeconds: number;
}

/** Context given to a local tool handler. */
export interface LocalToolContext {
  signal: AbortSignal;
  call: ToolCallInfo;
}

/** A tool the agent can offer. */
export interface AgentTool {
  name: string;
  description: string;
  /** The client's JSON Schema of the arguments. */
  jsonSchema: JsonObject;
  /** Normalised generation schema of the arguments. */
  generationSchema: JsonObject;
  /** `client` tools go to the engine through the turn sink; `local` tools run `run`. */
  execution: "client" | "local";
  /** Timeout in ms; null waits forever. */
  timeoutMs: number | null;
  /** Handler of a local tool. Throwing gives an error output with the error's message. */
  run?: (args: JsonObject, context: LocalToolContext) => Promise<ToolOutcome> | ToolOutcome;
  /** The definition as the client sent it (kept for saves), if any. */
  definition?: JsonObject;
}

/** A step as reported in `modelStep` events and `result.steps`. */
export interface StepInfo {
  index: number;
  completedToolRounds: number;
  toolCallingMode: ToolCallingMode;
  enabledTools: string[];
  trimmedEntries: number;
}

/** Token usage of a turn. */
export interface Usage {
  inputTokens: number;
  cachedInputTokens: number;
  outputTokens: number;
  totalTokens: number;
}

/** Events of a running turn (the `event` of `session/event`). */
export type AgentEvent =
  | { type: "modelStep"; step: StepInfo }
  | { type: "text"; delta: string; text: string; isReset: boolean }
  | { type: "partial"; value: JsonValue }
  | { type: "toolCallStarted"; call: ToolCallInfo; execution: "client" | "local" }
  | { type: "toolCallCompleted"; record: ToolRecord };

/** Where a turn sends its events and its client tool calls. */
export interface TurnSink {
  /** Receives every event, in order. */
  event(event: AgentEvent): void;
  /** True when nobody reads `modelStep`/`text`/`partial` events, so the agent may skip building them. */
  quiet?: boolean;
  /**
   * Executes a client tool. `signal` is aborted with the model-visible reason (for example
   * "Error: Tool 'open_gate' timed out after 120s.") when the output is no longer needed.
   */
  callClientTool(call: ToolCallInfo, signal: AbortSignal): Promise<ToolOutcome>;
}

/** Input of one turn. */
export interface TurnInput {
  prompt: string;
  /** Structured output for the answer. */
  schema: ResponseSchema | null;
  policy: ToolPolicy;
  /** Whether snapshots are streamed by the backend (events are always produced). */
  stream: boolean;
}

/** The result of a completed turn. */
export interface TurnResult {
  text: string;
  structured?: JsonValue;
  toolCalls: ToolRecord[];
  usage: Usage;
  steps: StepInfo[];
}

/** Session-level agent settings. */
export interface AgentSettings {
  options: GenerationOptions;
  /** Automatic retries of transient failures (≥ 1). */
  maxAttempts: number;
  /** Hide the oldest turns when the context would overflow. */
  trimHistory: boolean;
  /** Tokens kept free for the answer when trimming. */
  reservedResponseTokens: number;
}

/** Default agent settings. */
export const DEFAULT_SETTINGS: AgentSettings = {
  options: {},
  maxAttempts: 2,
  trimHistory: true,
  reservedResponseTokens: 1024,
};
