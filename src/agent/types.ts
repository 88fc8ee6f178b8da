/**
 * Types of the agent loop: tool choice and policy, tools, calls, records, events and turn results.
 * @module
 */
import type { JsonObject, JsonValue } from "../protocol/json.ts";
import type { GenerationOptions, ResponseSchema, ToolCallingMode } from "../models/language_model.ts";

/**
 * Which tools the first model step must use (§5 `toolChoice`).
 *
 * @example
 * ```ts
 * import { DEFAULT_POLICY, type ToolChoice, type ToolPolicy } from "@open-apple-models/bridge/engine";
 * const mustOpen: ToolChoice = { tool: "open_gate" };
 * const policy: ToolPolicy = { ...DEFAULT_POLICY, choice: mustOpen };
 * ```
 */
export type ToolChoice = "auto" | "none" | "required" | "explicit" | { tool: string };

/**
 * Per-turn tool policy.
 *
 * @example
 * ```ts
 * import { DEFAULT_POLICY, type ToolPolicy } from "@open-apple-models/bridge/engine";
 * const careful: ToolPolicy = { ...DEFAULT_POLICY, maxToolCalls: 3, enabledTools: ["open_gate"] };
 * ```
 */
export interface ToolPolicy {
  /** Tool choice of the turn's first step. */
  choice: ToolChoice;
  /** Model steps that may call tools (default 4). */
  maxToolRounds: number;
  /** Tool calls per turn (default 12). */
  maxToolCalls: number;
  /** Tools visible to the model, or null for all. */
  enabledTools: string[] | null;
  /**
   * Show `respond_directly` in the tool list of every step even when this turn's choice is not `explicit`
   * (it stays callable only on the first step of an explicit turn). An NPC whose turns are explicit sets it
   * on its other requests (the plain-text retry, the compaction summary) so they show the same list.
   */
  showRespondDirectly?: boolean;
}

/**
 * The default tool policy of a session.
 *
 * @example
 * ```ts
 * import { DEFAULT_POLICY } from "@open-apple-models/bridge/engine";
 * DEFAULT_POLICY; // { choice: "auto", maxToolRounds: 4, maxToolCalls: 12, enabledTools: null }
 * ```
 */
export const DEFAULT_POLICY: ToolPolicy = {
  choice: "auto",
  maxToolRounds: 4,
  maxToolCalls: 12,
  enabledTools: null,
};

/**
 * A tool call as reported on the wire: `{id, name, arguments}`.
 *
 * @example
 * ```ts
 * import type { ToolCallInfo } from "@open-apple-models/bridge/engine";
 * const call: ToolCallInfo = {
 *   id: "call_0123456789abcdefghijklmn",
 *   name: "open_gate",
 *   arguments: { gate: "north" },
 * };
 * ```
 */
export interface ToolCallInfo {
  /** Protocol call id (`call_` + 24 alphanumerics). */
  id: string;
  /** Tool name. */
  name: string;
  /** Arguments the model gave. */
  arguments: JsonObject;
}

/**
 * What a tool produced. `output` is text or a JSON value; errors carry their message as text.
 *
 * @example
 * ```ts
 * import type { ToolOutcome } from "@open-apple-models/bridge/engine";
 * const opened: ToolOutcome = { output: { opened: true }, isError: false };
 * const stuck: ToolOutcome = { output: "The gate is stuck.", isError: true };
 * ```
 */
export interface ToolOutcome {
  /** Text or JSON output; the message for errors. */
  output: JsonValue;
  /** True when the output is an error the model saw. */
  isError: boolean;
}

/**
 * A finished tool call (`result.toolCalls[]`).
 *
 * @example
 * ```ts
 * import {
 *   Agent,
 *   type AgentTool,
 *   DEFAULT_POLICY,
 *   ScriptedModel,
 *   type ToolRecord,
 * } from "@open-apple-models/bridge/engine";
 * const schema = { type: "object", properties: { gate: { type: "string" } }, required: ["gate"] };
 * const openGate: AgentTool = {
 *   name: "open_gate",
 *   description: "Open a gate.",
 *   jsonSchema: schema,
 *   generationSchema: schema,
 *   execution: "local",
 *   timeoutMs: 5000,
 *   run: (args) => ({ output: { opened: args.gate === "north" }, isError: false }),
 * };
 * const model = new ScriptedModel({
 *   steps: [{ toolCalls: [{ name: "open_gate", arguments: { gate: "north" } }] }, { text: "Open." }],
 * });
 * const agent = new Agent({ model, tools: [openGate] });
 * const sink = { event: () => {}, callClientTool: () => Promise.resolve({ output: "", isError: false }) };
 * const input = { prompt: "Open the north gate.", schema: null, policy: DEFAULT_POLICY, stream: false };
 * const result = await agent.runTurn(input, sink, new AbortController().signal);
 * const record: ToolRecord = result.toolCalls[0];
 * record.output; // { opened: true }
 * record.call.name; // "open_gate"
 * ```
 */
export interface ToolRecord {
  /** The call as the model made it: its wire id, tool name and arguments. */
  call: ToolCallInfo;
  /** Text or JSON output; the message for errors. */
  output: JsonValue;
  /** True when the output is an error the model saw. */
  isError: boolean;
  /** Time from start to completion, rounded to milliseconds. */
  durationSeconds: number;
}

/**
 * Context given to a local tool handler.
 *
 * @example
 * ```ts
 * import type { JsonObject, LocalToolContext, ToolOutcome } from "@open-apple-models/bridge/engine";
 * // An AgentTool's `run`: `ctx.signal` ends the request when the turn no longer needs the output.
 * async function lookUp(args: JsonObject, ctx: LocalToolContext): Promise<ToolOutcome> {
 *   const response = await fetch(`https://example.com/gates/${args.gate}`, { signal: ctx.signal });
 *   return { output: await response.text(), isError: !response.ok };
 * }
 * ```
 */
export interface LocalToolContext {
  /** Aborted when the output is no longer needed (timeout or cancel). */
  signal: AbortSignal;
  /** The call being run (its wire id, tool name and arguments). */
  call: ToolCallInfo;
}

/**
 * A tool the agent can offer.
 *
 * @example
 * ```ts
 * import { Agent, type AgentTool, DEFAULT_POLICY, ScriptedModel } from "@open-apple-models/bridge/engine";
 * const schema = { type: "object", properties: { gate: { type: "string" } }, required: ["gate"] };
 * const openGate: AgentTool = {
 *   name: "open_gate",
 *   description: "Open a gate.",
 *   jsonSchema: schema,
 *   generationSchema: schema,
 *   execution: "local",
 *   timeoutMs: 5000,
 *   run: (args) => ({ output: { opened: args.gate === "north" }, isError: false }),
 * };
 * const model = new ScriptedModel({
 *   steps: [{ toolCalls: [{ name: "open_gate", arguments: { gate: "north" } }] }, { text: "Open." }],
 * });
 * const agent = new Agent({ model, tools: [openGate] });
 * const sink = { event: () => {}, callClientTool: () => Promise.resolve({ output: "", isError: false }) };
 * const input = { prompt: "Open the north gate.", schema: null, policy: DEFAULT_POLICY, stream: false };
 * const result = await agent.runTurn(input, sink, new AbortController().signal);
 * result.text; // "Open."
 * ```
 */
export interface AgentTool {
  /** Tool name. */
  name: string;
  /** What the tool does and returns; the model decides from it. */
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

/**
 * A step as reported in `modelStep` events and `result.steps`.
 *
 * @example
 * ```ts
 * import {
 *   Agent,
 *   type AgentTool,
 *   DEFAULT_POLICY,
 *   ScriptedModel,
 *   type StepInfo,
 * } from "@open-apple-models/bridge/engine";
 * const schema = { type: "object", properties: { gate: { type: "string" } }, required: ["gate"] };
 * const openGate: AgentTool = {
 *   name: "open_gate",
 *   description: "Open a gate.",
 *   jsonSchema: schema,
 *   generationSchema: schema,
 *   execution: "local",
 *   timeoutMs: 5000,
 *   run: (args) => ({ output: { opened: args.gate === "north" }, isError: false }),
 * };
 * const model = new ScriptedModel({
 *   steps: [{ toolCalls: [{ name: "open_gate", arguments: { gate: "north" } }] }, { text: "Open." }],
 * });
 * const agent = new Agent({ model, tools: [openGate] });
 * const sink = { event: () => {}, callClientTool: () => Promise.resolve({ output: "", isError: false }) };
 * const input = { prompt: "Open the north gate.", schema: null, policy: DEFAULT_POLICY, stream: false };
 * const result = await agent.runTurn(input, sink, new AbortController().signal);
 * const first: StepInfo = result.steps[0];
 * first.enabledTools; // ["open_gate"]
 * result.steps[1].completedToolRounds; // 1
 * ```
 */
export interface StepInfo {
  /** Step number within the turn, from 0. */
  index: number;
  /** Tool rounds finished before this step. */
  completedToolRounds: number;
  /** Mode of this step. */
  toolCallingMode: ToolCallingMode;
  /** Tools the model sees in this step (never `respond_directly`). */
  enabledTools: string[];
  /** History entries hidden from the model to fit the context. */
  trimmedEntries: number;
}

/**
 * Token usage of a turn.
 *
 * @example
 * ```ts
 * import {
 *   Agent,
 *   type AgentTool,
 *   DEFAULT_POLICY,
 *   ScriptedModel,
 *   type Usage,
 * } from "@open-apple-models/bridge/engine";
 * const schema = { type: "object", properties: { gate: { type: "string" } }, required: ["gate"] };
 * const openGate: AgentTool = {
 *   name: "open_gate",
 *   description: "Open a gate.",
 *   jsonSchema: schema,
 *   generationSchema: schema,
 *   execution: "local",
 *   timeoutMs: 5000,
 *   run: (args) => ({ output: { opened: args.gate === "north" }, isError: false }),
 * };
 * const model = new ScriptedModel({
 *   steps: [{ toolCalls: [{ name: "open_gate", arguments: { gate: "north" } }] }, { text: "Open." }],
 * });
 * const agent = new Agent({ model, tools: [openGate] });
 * const sink = { event: () => {}, callClientTool: () => Promise.resolve({ output: "", isError: false }) };
 * const input = { prompt: "Open the north gate.", schema: null, policy: DEFAULT_POLICY, stream: false };
 * const result = await agent.runTurn(input, sink, new AbortController().signal);
 * const usage: Usage = result.usage;
 * usage.totalTokens === usage.inputTokens + usage.outputTokens; // true
 * ```
 */
export interface Usage {
  /** Prompt tokens over all steps. */
  inputTokens: number;
  /** Prompt tokens served from the prefix cache. */
  cachedInputTokens: number;
  /** Generated tokens over all steps. */
  outputTokens: number;
  /** Input plus output tokens. */
  totalTokens: number;
}

/**
 * Events of a running turn (the `event` of `session/event`).
 *
 * @example
 * ```ts
 * import { Agent, type AgentEvent, DEFAULT_POLICY, ScriptedModel } from "@open-apple-models/bridge/engine";
 * const agent = new Agent({ model: new ScriptedModel({ steps: [{ text: "Halt!" }] }) });
 * const events: AgentEvent[] = [];
 * const sink = {
 *   event: (e: AgentEvent) => void events.push(e),
 *   callClientTool: () => Promise.reject(new Error("no client tools")),
 * };
 * const input = { prompt: "Hello", schema: null, policy: DEFAULT_POLICY, stream: false };
 * await agent.runTurn(input, sink, new AbortController().signal);
 * events[0].type; // "modelStep"
 * ```
 */
export type AgentEvent =
  | { type: "modelStep"; step: StepInfo }
  | { type: "text"; delta: string; text: string; isReset: boolean }
  | { type: "partial"; value: JsonValue }
  | { type: "toolCallStarted"; call: ToolCallInfo; execution: "client" | "local" }
  | { type: "toolCallCompleted"; record: ToolRecord };

/**
 * Where a turn sends its events and its client tool calls.
 *
 * @example
 * ```ts
 * import {
 *   Agent,
 *   type AgentTool,
 *   DEFAULT_POLICY,
 *   ScriptedModel,
 *   type TurnSink,
 * } from "@open-apple-models/bridge/engine";
 * const schema = { type: "object", properties: { gate: { type: "string" } }, required: ["gate"] };
 * const openGate: AgentTool = {
 *   name: "open_gate",
 *   description: "Open a gate.",
 *   jsonSchema: schema,
 *   generationSchema: schema,
 *   execution: "client",
 *   timeoutMs: null,
 * };
 * const model = new ScriptedModel({
 *   steps: [
 *     { toolCalls: [{ name: "open_gate", arguments: { gate: "north" } }] },
 *     { template: "Gate: {toolOutput}" },
 *   ],
 * });
 * // The game answers client tools (the engine sends them to the client as `tool/call`).
 * const sink: TurnSink = {
 *   event: () => {},
 *   callClientTool: (call) =>
 *     Promise.resolve({ output: `the ${call.arguments.gate} gate opened`, isError: false }),
 * };
 * const agent = new Agent({ model, tools: [openGate] });
 * const input = { prompt: "Open it.", schema: null, policy: DEFAULT_POLICY, stream: false };
 * (await agent.runTurn(input, sink, new AbortController().signal)).text; // "Gate: the north gate opened"
 * ```
 */
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

/**
 * Input of one turn.
 *
 * @example
 * ```ts
 * import { DEFAULT_POLICY, type TurnInput } from "@open-apple-models/bridge/engine";
 * const input: TurnInput = { prompt: "Open the gate.", schema: null, policy: DEFAULT_POLICY, stream: true };
 * const next: TurnInput = { ...input, prompt: "" }; // continues the conversation
 * ```
 */
export interface TurnInput {
  /** The user's prompt (`""` continues the conversation). */
  prompt: string;
  /** Structured output for the answer. */
  schema: ResponseSchema | null;
  /** Tool choice and budgets of this turn. */
  policy: ToolPolicy;
  /** Whether snapshots are streamed by the backend (events are always produced). */
  stream: boolean;
}

/**
 * The result of a completed turn.
 *
 * @example
 * ```ts
 * import { Agent, DEFAULT_POLICY, ScriptedModel, type TurnResult } from "@open-apple-models/bridge/engine";
 * const agent = new Agent({ model: new ScriptedModel({ steps: [{ text: "Halt!" }] }) });
 * const sink = { event: () => {}, callClientTool: () => Promise.reject(new Error("no client tools")) };
 * const input = { prompt: "Hello", schema: null, policy: DEFAULT_POLICY, stream: false };
 * const result: TurnResult = await agent.runTurn(input, sink, new AbortController().signal);
 * result.text; // "Halt!"
 * result.toolCalls; // []
 * ```
 */
export interface TurnResult {
  /** The answer (the JSON text of `structured` for schema turns). */
  text: string;
  /** Structured answer of a schema turn, keys in schema order. */
  structured?: JsonValue;
  /** Tool calls in completion order. */
  toolCalls: ToolRecord[];
  /** Token usage (estimated where the backend reports none). */
  usage: Usage;
  /** Every model step of the turn. */
  steps: StepInfo[];
  /**
   * Whether the answer stopped at the token limit (true) or ended on its own (false), when the model said so
   * (see `StepResult`; not part of the protocol's result).
   */
  cutOff?: boolean;
}

/**
 * Session-level agent settings.
 *
 * @example
 * ```ts
 * import {
 *   Agent,
 *   type AgentSettings,
 *   DEFAULT_SETTINGS,
 *   ScriptedModel,
 * } from "@open-apple-models/bridge/engine";
 * const settings: AgentSettings = { ...DEFAULT_SETTINGS, maxAttempts: 1, options: { temperature: 0.2 } };
 * const agent = new Agent({ model: new ScriptedModel({ steps: [] }), settings });
 * ```
 */
export interface AgentSettings {
  /** Generation options for every step. */
  options: GenerationOptions;
  /** Automatic retries of transient failures (≥ 1). */
  maxAttempts: number;
  /** Hide the oldest turns when the context would overflow. */
  trimHistory: boolean;
  /** Tokens kept free for the answer when trimming. */
  reservedResponseTokens: number;
}

/**
 * Default agent settings.
 *
 * @example
 * ```ts
 * import { DEFAULT_SETTINGS } from "@open-apple-models/bridge/engine";
 * DEFAULT_SETTINGS.maxAttempts; // 2
 * DEFAULT_SETTINGS.reservedResponseTokens; // 1024
 * ```
 */
export const DEFAULT_SETTINGS: AgentSettings = {
  options: {},
  maxAttempts: 2,
  trimHistory: true,
  reservedResponseTokens: 1024,
};
