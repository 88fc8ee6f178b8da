/**
 * The one-step model interface every backend implements. The agent loop (src/agent/) owns tool rounds,
 * budgets, retries and the transcript; a backend runs exactly one inference per `step` call.
 * @module
 */
import type { JsonObject, JsonValue } from "../protocol/json.ts";
import type { ConversationEntry } from "../protocol/transcript.ts";

/**
 * How this step may use tools.
 *
 * @example
 * ```ts
 * import type { ToolCallingMode } from "@open-apple-models/bridge/engine";
 * // An OpenAI-compatible backend's `tool_choice` for each mode.
 * const toolChoice = (mode: ToolCallingMode) =>
 *   mode === "required" ? "required" : mode === "allowed" ? "auto" : "none";
 * toolChoice("allowed"); // "auto"
 * ```
 */
export type ToolCallingMode = "allowed" | "required" | "disallowed";

/**
 * A tool visible to the model in this step.
 *
 * @example
 * ```ts
 * import type { StepTool } from "@open-apple-models/bridge/engine";
 * const schema = { type: "object", properties: { gate: { type: "string" } }, required: ["gate"] };
 * const openGate: StepTool = {
 *   name: "open_gate",
 *   description: "Open a gate.",
 *   parameters: schema,
 *   jsonSchema: schema,
 * };
 * ```
 */
export interface StepTool {
  /** Tool name. */
  name: string;
  /** What the tool does, for the model. */
  description: string;
  /** Normalised generation schema (FoundationModels JSON Schema dialect) of the arguments. */
  parameters: JsonObject;
  /** The client's original JSON Schema of the arguments (for backends that validate with ajv). */
  jsonSchema: JsonObject;
}

/**
 * Sampling mode.
 *
 * @example
 * ```ts
 * import type { Sampling } from "@open-apple-models/bridge/engine";
 * const repeatable: Sampling = { mode: "topP", p: 0.9, seed: 7 };
 * const greedy: Sampling = { mode: "greedy" };
 * ```
 */
export type Sampling =
  | { mode: "greedy" }
  | { mode: "topK"; k: number; seed?: number }
  | { mode: "topP"; p: number; seed?: number };

/**
 * Generation options of a step.
 *
 * @example
 * ```ts
 * import type { GenerationOptions } from "@open-apple-models/bridge/engine";
 * const options: GenerationOptions = {
 *   temperature: 0.7,
 *   maximumResponseTokens: 200,
 *   sampling: { mode: "greedy" },
 * };
 * ```
 */
export interface GenerationOptions {
  /** Sampling temperature (≥ 0). */
  temperature?: number;
  /** Upper bound on generated tokens. */
  maximumResponseTokens?: number;
  /** Sampling mode. */
  sampling?: Sampling;
  /**
   * True: a structured answer or tool call that `maximumResponseTokens` cut off fails at once with a
   * `CutOffAnswer` (exported by the engine API) holding what was written, instead of being asked for again as
   * an invalid answer. `oam serve` sets it, since OpenAI answers such a request with the cut JSON and
   * `finish_reason: "length"`; the bridge protocol never does (a cut answer there is `generation_failed`).
   */
  reportCutOff?: boolean;
}

/**
 * Token usage of one step (a step whose usage is unknown reports `usage: null`).
 *
 * @example
 * ```ts
 * import type { StepUsage } from "@open-apple-models/bridge/engine";
 * const usage: StepUsage = { inputTokens: 120, cachedInputTokens: 100, outputTokens: 12 };
 * ```
 */
export interface StepUsage {
  /** Prompt tokens (including cached ones). */
  inputTokens: number;
  /** Prompt tokens served from the prefix cache. */
  cachedInputTokens: number;
  /** Generated tokens. */
  outputTokens: number;
}

/**
 * A structured-output request: the generation schema and the client's JSON Schema.
 *
 * @example
 * ```ts
 * import type { ResponseSchema, StepRequest } from "@open-apple-models/bridge/engine";
 * // A backend with JSON mode constrains the answer to the client's schema when one is asked for.
 * const schemaOf = (req: StepRequest) => req.responseSchema?.jsonSchema ?? null;
 * const verdict: ResponseSchema = {
 *   name: "Response",
 *   generationSchema: { type: "object", properties: { ok: { type: "boolean" } }, required: ["ok"] },
 *   jsonSchema: { type: "object", properties: { ok: { type: "boolean" } }, required: ["ok"] },
 * };
 * ```
 */
export interface ResponseSchema {
  /** Root type name (e.g. `Response`). */
  name: string;
  /** Normalised generation schema. */
  generationSchema: JsonObject;
  /** The client's JSON Schema. */
  jsonSchema: JsonObject;
}

/**
 * Everything one inference needs.
 *
 * @example
 * ```ts
 * import { BridgeError, type StepRequest, type StepResult } from "@open-apple-models/bridge/engine";
 * // A backend's `step`: the prompt ("" on a continuation step), streamed snapshots, a cancelled turn.
 * function step(req: StepRequest): Promise<StepResult> {
 *   if (req.signal.aborted) return Promise.reject(BridgeError.turnCancelled());
 *   const text = req.prompt === "" ? "(continuing)" : `You said: ${req.prompt}`;
 *   if (req.stream) req.onText?.(text);
 *   return Promise.resolve({ kind: "text", text, usage: null });
 * }
 * ```
 */
export interface StepRequest {
  /** Instructions with the context note appended (blank line between), or null. */
  instructions: string | null;
  /** Tools callable this step (`[]` on a disallowed step). */
  tools: StepTool[];
  /**
   * Tools the prompt shows on every step of this turn: a superset of `tools`, the same list on every step
   * (and across turns with the same policy). A backend that can restrict what is callable by tool choice,
   * grammar or validation documents these and restricts calls to `tools`, so the prompt's prefix stays the
   * same from step to step; the others may ignore it. Absent: the same as `tools`.
   */
  offeredTools?: StepTool[];
  /** Whether this step may, must or must not call tools. */
  toolCallingMode: ToolCallingMode;
  /**
   * Conversation so far without the instructions entry. On step 0 it ends before the new prompt; on later
   * steps it includes the turn in progress (prompt entry, tool-calls and tool-output entries).
   */
  history: ConversationEntry[];
  /** The user's prompt on step 0, `""` on continuation steps. */
  prompt: string;
  /** Structured output requested for the answer (tools may still be called first). */
  responseSchema: ResponseSchema | null;
  /** Temperature, token limit and sampling. */
  options: GenerationOptions;
  /** Whether snapshots should be streamed through `onText`/`onPartial`. */
  stream: boolean;
  /** Aborted when the turn is cancelled; the step must then reject with a `cancelled` BridgeError. */
  signal: AbortSignal;
  /** Receives the cumulative answer text so far. */
  onText?: (snapshot: string) => void;
  /** Receives the partial structured value so far (schema turns). */
  onPartial?: (value: JsonValue) => void;
  /**
   * The attempt of the turn this step belongs to, from 1: above 1 when the turn's previous attempt failed and
   * the turn is tried again (after an invalid answer, with other sampling). Absent: the first attempt.
   */
  attempt?: number;
}

/**
 * A tool call the model made.
 *
 * @example
 * ```ts
 * import type { StepResult, StepToolCall } from "@open-apple-models/bridge/engine";
 * const call: StepToolCall = { name: "open_gate", arguments: { gate: "north" }, nativeId: "call_1" };
 * const result: StepResult = { kind: "toolCalls", calls: [call], usage: null };
 * ```
 */
export interface StepToolCall {
  /** Tool name. */
  name: string;
  /** Arguments as a JSON object. */
  arguments: JsonObject;
  /** The backend's own id for the call, if any (used in the transcript). */
  nativeId?: string;
}

/**
 * The terminal result of a step: text, a structured value (with its text), or tool calls. With the options'
 * `reportCutOff`, a backend that knows says in `cutOff` whether an answer stopped at `maximumResponseTokens`
 * (true) or ended on its own (false).
 *
 * @example
 * ```ts
 * import type { StepResult } from "@open-apple-models/bridge/engine";
 * const usage = { inputTokens: 40, cachedInputTokens: 0, outputTokens: 3 };
 * const answer: StepResult = { kind: "text", text: "Halt!", usage };
 * const verdict: StepResult = { kind: "structured", value: { ok: true }, text: '{"ok":true}', usage: null };
 * ```
 */
export type StepResult =
  | { kind: "text"; text: string; usage: StepUsage | null; cutOff?: boolean }
  | { kind: "structured"; value: JsonValue; text: string; usage: StepUsage | null; cutOff?: boolean }
  | { kind: "toolCalls"; calls: StepToolCall[]; usage: StepUsage | null };

/**
 * Availability of a model (the `model/availability` result).
 *
 * @example
 * ```ts
 * import { type ModelAvailability, UnavailableModel } from "@open-apple-models/bridge/engine";
 * const ready: ModelAvailability = { available: true, contextSize: 8192, supportedLanguages: ["en"] };
 * const off: ModelAvailability = await new UnavailableModel("device_not_eligible").availability();
 * off.available; // false
 * ```
 */
export interface ModelAvailability {
  /** Whether turns can run. */
  available: boolean;
  /** Why the model is unavailable. */
  reason?: "device_not_eligible" | "apple_intelligence_not_enabled" | "model_not_ready" | "unknown" | string;
  /** Context window in tokens. */
  contextSize: number;
  /** Model variant name, when known. */
  variant?: string;
  /** Supported language identifiers. */
  supportedLanguages: string[];
  /** Extra detail (for example a load error), not part of the spec's fields. */
  detail?: string;
  /**
   * True when waiting cannot make the model available for the life of this process (a permission it was not
   * granted, a model id the server does not offer, credentials the server refuses), so a caller should not
   * retry. Not sent on the wire: `model/availability` has no such field.
   */
  permanent?: boolean;
}

/**
 * A model backend. `step` resolves with one terminal result or rejects with a BridgeError whose
 * `dataCode` is an agent error code (`guardrail_violation`, `generation_failed`, `cancelled`, …): the backend
 * maps its own failures (network, HTTP, plugin, parse); anything else it throws is answered as a bug
 * (`-32603 internal_error`).
 *
 * @example
 * ```ts
 * import type { LanguageModel, StepRequest, StepResult } from "@open-apple-models/bridge/engine";
 * const echo: LanguageModel = {
 *   kind: "echo",
 *   contextSize: 8192,
 *   trimsHistory: false,
 *   availability: () => Promise.resolve({ available: true, contextSize: 8192, supportedLanguages: [] }),
 *   step: (req: StepRequest): Promise<StepResult> =>
 *     Promise.resolve({ kind: "text", text: req.prompt, usage: null }),
 * };
 * ```
 */
export interface LanguageModel {
  /** Model type name as reported in `session/list` (`system`, `scripted`, `openai`, …). */
  readonly kind: string;
  /**
   * Optional: how messages name this model, as its user configured it (`openai:<baseURL>#<model>`,
   * `gguf:<path>`): a host's model in place of the system model is named so in the `session/create` warning
   * when it is unavailable. Without it messages name the model by its `kind`.
   */
  readonly label?: string;
  /** Context window in tokens. */
  readonly contextSize: number;
  /** Whether the agent should trim history for this model (the system model only, as in the spec). */
  readonly trimsHistory: boolean;
  /** Runs one inference. */
  step(request: StepRequest): Promise<StepResult>;
  /** Reports availability. */
  availability(): Promise<ModelAvailability>;
  /**
   * Optional: the availability when it is known without waiting (settled for good, or the backend's last
   * answer), else undefined. Creating a session or an NPC uses it to answer at once.
   */
  availabilityNow?(): ModelAvailability | undefined;
  /** Counts tokens of a step request, when the backend can. */
  countTokens?(request: Omit<StepRequest, "signal">): Promise<number>;
  /**
   * Optional: this model for one request of a conversation it knows nothing about: what only makes it faster
   * is shared (a GGUF model's cached prompts), what its prompt shows is not (a GGUF model keeps showing the
   * tools its earlier steps offered, so its prompt stays the same from step to step). `oam serve` runs each
   * chat completion on one, so no request sees another's tools. A backend without such state leaves it out.
   */
  forRequest?(): LanguageModel;
}
