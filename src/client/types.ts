/**
 * The wire shapes of the protocol as TypeScript types (PROTOCOL.md §5, §7–§10): models, tools, sessions,
 * turn results and events. The game shapes are in `game_types.ts`.
 * @module
 */
import type { JsonObject, JsonValue } from "../protocol/json.ts";

/**
 * A JSON Schema (the subset of PROTOCOL.md §9 is what the model is held to; everything else is described).
 *
 * @example
 * ```ts
 * import { type JsonSchema } from "@open-apple-models/bridge";
 * const item: JsonSchema = {
 *   type: "object",
 *   properties: { item: { type: "string", description: "e.g. 'ale'" }, count: { type: "integer", minimum: 1 } },
 *   required: ["item"],
 * };
 * ```
 */
export interface JsonSchema {
  /** `"object"`, `"string"`, `"integer"`, `"number"`, `"boolean"`, `"array"`, `"null"`, or several. */
  type?: string | readonly string[];
  /** Shown to the model. */
  description?: string;
  /**
   * Object members, in the order the model writes them. (`undefined` is admitted for the optional
   * `undefined` members TypeScript gives the object branches of a `oneOf`/`anyOf` written as a plain const:
   * such a member is not sent.)
   */
  properties?: { readonly [name: string]: JsonSchema | undefined };
  /** Required members. */
  required?: readonly string[];
  /** Array items. */
  items?: JsonSchema;
  /** Allowed values. */
  enum?: readonly JsonValue[];
  /** The one allowed value. */
  const?: JsonValue;
  /** Alternatives. */
  anyOf?: readonly JsonSchema[];
  /** Alternatives. */
  oneOf?: readonly JsonSchema[];
  /** Any other keyword (`minimum`, `minItems`, `$defs`, `additionalProperties`, …). */
  readonly [keyword: string]: unknown;
}

/**
 * A client tool definition (§9).
 *
 * @example
 * ```ts
 * import { type ToolDefinition } from "@open-apple-models/bridge";
 * const openGate: ToolDefinition = {
 *   name: "open_gate",
 *   description: "Ask the game to open a named gate. Returns whether it opened.",
 *   parameters: { type: "object", properties: { gate: { type: "string" } }, required: ["gate"] },
 *   timeoutSeconds: 30,
 * };
 * ```
 */
export interface ToolDefinition {
  /** 1–64 of `A–Z a–z 0–9 _ - .`, unique per session or NPC. */
  name: string;
  /** What the tool does and returns; the model decides from it. */
  description?: string;
  /** JSON Schema of the arguments (default: no arguments). */
  parameters?: JsonSchema;
  /** Seconds the engine has to answer (`0` = forever); overrides the session's `toolTimeoutSeconds`. */
  timeoutSeconds?: number;
}

/**
 * A tool as an option of `createSession`, `createNpc`, `decide`…: a handle from `bridge.tool`, the name of a
 * tool registered with it, or a plain definition (whose calls the client answers when a handler of that
 * name is registered).
 *
 * @example
 * ```ts
 * import { Bridge, type ToolRef } from "@open-apple-models/bridge";
 * await using bridge = await Bridge.open();
 * const bell = bridge.tool({ name: "ring_bell", description: "Rings the bell." }, () => "Dong.");
 * bridge.tool({ name: "open_gate", description: "Opens the gate." }, () => ({ opened: true }));
 * const tools: ToolRef[] = [bell, "open_gate", { name: "look", description: "Look around." }];
 * await bridge.createSession({ tools, model: "scripted" });
 * ```
 */
export type ToolRef = string | ToolDefinition | { readonly definition: ToolDefinition };

/**
 * How a turn may use tools (§5 `toolChoice`).
 *
 * @example
 * ```ts
 * import { type ToolChoice } from "@open-apple-models/bridge";
 * const forced: ToolChoice = { tool: "check_stock" }; // force this tool on the first step
 * const free: ToolChoice = "auto";
 * [forced, free];
 * ```
 */
export type ToolChoice = "auto" | "none" | "required" | "explicit" | { tool: string };

/**
 * Sampling settings (§5 `options.sampling`).
 *
 * @example
 * ```ts
 * import { type SessionOptions } from "@open-apple-models/bridge";
 * const reproducible: SessionOptions = { sampling: "greedy" };
 * const varied: SessionOptions = { sampling: { topP: 0.9, seed: 7 } };
 * [reproducible, varied];
 * ```
 */
export type Sampling = "greedy" | { topK: number; seed?: number } | { topP: number; seed?: number };

/**
 * One step of a scripted model (§10).
 *
 * @example
 * ```ts
 * import { type ScriptStep } from "@open-apple-models/bridge";
 * const steps: ScriptStep[] = [
 *   { toolCalls: [{ name: "check_stock", arguments: { item: "ale" } }] },
 *   { text: "[happy] Three ales left.", chunks: 3 },
 *   { error: "guardrail_violation", delayMs: 100 },
 * ];
 * ```
 */
export type ScriptStep =
  & (
    | { text: string; chunks?: number }
    | { toolCalls: ReadonlyArray<{ name: string; arguments?: JsonObject; id?: string }> }
    | { json: JsonValue }
    | { template: string }
    | { error: string; message?: string }
  )
  & { delayMs?: number };

/**
 * A deterministic scripted model (§10).
 *
 * @example
 * ```ts
 * import { type ScriptedModelSpec } from "@open-apple-models/bridge";
 * const model: ScriptedModelSpec = {
 *   type: "scripted",
 *   steps: [{ text: "Halt!" }],
 *   fallback: { text: "(the guard says nothing more)" },
 * };
 * ```
 */
export interface ScriptedModelSpec {
  /** `"scripted"`. */
  type: "scripted";
  /** One step per model inference. */
  steps: readonly ScriptStep[];
  /** Played when the steps run out (default `{"text": "(script exhausted)"}`). */
  fallback?: ScriptStep;
}

/**
 * An OpenAI-compatible server (docs/openai.md).
 *
 * @example
 * ```ts
 * import { type OpenAIModelSpec } from "@open-apple-models/bridge";
 * const local: OpenAIModelSpec = { type: "openai", baseURL: "http://127.0.0.1:8080/v1", model: "qwen2.5" };
 * ```
 */
export interface OpenAIModelSpec {
  /** `"openai"`. */
  type: "openai";
  /** e.g. `"http://127.0.0.1:8080/v1"`. */
  baseURL: string;
  /** The server's model name. */
  model: string;
  /** Sent as a Bearer token. */
  apiKey?: string;
  /** Extra HTTP headers. */
  headers?: Record<string, string>;
  /** Inactivity timeout in seconds. */
  timeoutSeconds?: number;
}

/**
 * A GGUF model run inside the bridge process by node-llama-cpp (`{"type": "llama", …}`; README "A local model
 * in two commands").
 *
 * @example
 * ```ts
 * import { type LlamaModelSpec } from "@open-apple-models/bridge";
 * const local: LlamaModelSpec = { type: "llama", path: "models/qwen2.5-1.5b-instruct-q4_k_m.gguf", contextSize: 8192 };
 * ```
 */
export interface LlamaModelSpec {
  /** `"llama"`. */
  type: "llama";
  /** Path of the `.gguf` file. */
  path: string;
  /** Tokens each session can hold (64 to 1048576; default 4096, capped at the model's training size). */
  contextSize?: number;
  /** GPU use (default `"auto"`; `false` = CPU only). */
  gpu?: "auto" | false | "cuda" | "vulkan" | "metal";
  /** CPU threads for evaluation (1 to 1024). */
  threads?: number;
  /** Sessions served at once with their cache kept (1 to 64; default 4). */
  sequences?: number;
  /** Tokens evaluated per batch (1 to 65536; default 512). */
  batchSize?: number;
}

/**
 * The object form of `"system"`: the on-device model, or the host's replacement.
 *
 * @example
 * ```ts
 * import { type SystemModelSpec } from "@open-apple-models/bridge";
 * const onDevice: SystemModelSpec = { type: "system" };
 * ```
 */
export interface SystemModelSpec {
  /** `"system"`. */
  type: "system";
}

/**
 * The model types the typed client knows, by their `type`: the bridge's own, and those a host adds. A host
 * whose engine serves a type of its own (`modelFactory`, docs/extending.md) registers it here by declaration
 * merging, once in its project, and `{"type": "echo", …}` then compiles in every `model` option, held to the
 * members it declares. The `type` of an entry is its key.
 *
 * @example The spec of a type
 * ```ts
 * import { type ModelSpecRegistry } from "@open-apple-models/bridge";
 * const local: ModelSpecRegistry["llama"] = { type: "llama", path: "models/qwen.gguf", threads: 4 };
 * ```
 *
 * @example A host's own model type (at the top level of a module of the host's project; docs/extending.md)
 * ```ts ignore
 * import { Bridge } from "@open-apple-models/bridge";
 *
 * declare module "@open-apple-models/bridge" {
 *   interface ModelSpecRegistry {
 *     echo: { type: "echo"; prefix?: string };
 *   }
 * }
 *
 * await using bridge = await Bridge.open({ engine: myEngine }); // an engine whose modelFactory serves "echo"
 * await bridge.createSession({ model: { type: "echo", prefix: "You said: " } });
 * ```
 */
export interface ModelSpecRegistry {
  /** `{"type": "system"}`, the same as `"system"`. */
  system: SystemModelSpec;
  /** A deterministic script (§10). */
  scripted: ScriptedModelSpec;
  /** An OpenAI-compatible server. */
  openai: OpenAIModelSpec;
  /** A GGUF model inside the bridge process. */
  llama: LlamaModelSpec;
}

/**
 * The `model` parameter: `"system"` (the default: the on-device model, or the host's replacement),
 * `"scripted"` (an empty script), or a spec of a type in {@link ModelSpecRegistry}: scripted, OpenAI, llama, or
 * a type the host registered there. A spec's members are checked: a misspelled one (`step`, `baseUrl`,
 * `apikey`) does not compile, where the bridge would ignore it with a warning. A spec only known at run time
 * (read from a settings file) is given as `spec as Model`: the bridge checks it (`-32602`).
 *
 * @example
 * ```ts
 * import { type Model } from "@open-apple-models/bridge";
 * const models: Model[] = [
 *   "system",
 *   { type: "scripted", steps: [{ text: "Hi." }] },
 *   { type: "openai", baseURL: "http://127.0.0.1:11434/v1", model: "qwen2.5:7b" },
 *   { type: "llama", path: "models/qwen.gguf", gpu: false },
 * ];
 * ```
 */
export type Model =
  | "system"
  | "scripted"
  | { [Type in keyof ModelSpecRegistry]: ModelSpecRegistry[Type] & { type: Type } }[keyof ModelSpecRegistry];

/**
 * Session options (§5 `session/create` `options`).
 *
 * @example
 * ```ts
 * import { Bridge } from "@open-apple-models/bridge";
 * await using bridge = await Bridge.open();
 * const guard = await bridge.createSession({
 *   instructions: "You are a castle guard.",
 *   options: { toolChoice: "auto", maxToolRounds: 2, temperature: 0.7, toolTimeoutSeconds: 30 },
 *   model: "scripted",
 * });
 * guard.id; // "s1"
 * ```
 */
export interface SessionOptions {
  /** Default tool choice of each turn (default `"auto"`). */
  toolChoice?: ToolChoice;
  /** Model steps that may call tools (default 4). */
  maxToolRounds?: number;
  /** Tool calls per turn (default 12). */
  maxToolCalls?: number;
  /** Tools visible to the model (default all). */
  enabledTools?: readonly string[];
  /** Sampling temperature. */
  temperature?: number;
  /** Longest answer in tokens. */
  maxResponseTokens?: number;
  /** `"greedy"`, top-k or top-p. */
  sampling?: Sampling;
  /** Seconds the engine has to answer a `tool/call` (default 120; `0` = forever). */
  toolTimeoutSeconds?: number;
  /** Hide the oldest turns when the context would overflow (default true). */
  trimHistory?: boolean;
  /** Tokens kept free for the answer when trimming (default 1024). */
  reservedResponseTokens?: number;
  /** Automatic retries of transient model failures (default 2). */
  maxAttempts?: number;
}

/**
 * A tool call the model made.
 *
 * @example
 * ```ts
 * import { type ToolCall } from "@open-apple-models/bridge";
 * const call: ToolCall = { id: "call_1", name: "open_gate", arguments: { gate: "north" } };
 * ```
 */
export interface ToolCall {
  /** The call's id (e.g. `"call_…"`). */
  id: string;
  /** The tool's name. */
  name: string;
  /** Its arguments (following the tool's schema). */
  arguments: JsonObject;
}

/**
 * A finished tool call (`toolCalls[]` of results, `toolCallCompleted` events).
 *
 * @example
 * ```ts
 * import { Bridge } from "@open-apple-models/bridge";
 * await using bridge = await Bridge.open();
 * bridge.tool({ name: "ring_bell", description: "Rings the bell." }, () => "Dong.");
 * const session = await bridge.createSession({
 *   tools: ["ring_bell"],
 *   model: { type: "scripted", steps: [{ toolCalls: [{ name: "ring_bell", arguments: {} }] }, { text: "Done." }] },
 * });
 * const [record] = (await session.respond("Ring it.")).toolCalls;
 * record.output; // "Dong."
 * ```
 */
export interface ToolRecord {
  /** The call as the model made it: its id, tool name and arguments. */
  call: ToolCall;
  /** Text, or the JSON value the engine returned. */
  output: JsonValue;
  /** Whether the model saw an error. */
  isError: boolean;
  /** How long it took. */
  durationSeconds: number;
}

/**
 * Token counts of a turn.
 *
 * @example
 * ```ts
 * import { Bridge } from "@open-apple-models/bridge";
 * await using bridge = await Bridge.open();
 * const session = await bridge.createSession({ model: { type: "scripted", steps: [{ text: "Hi." }] } });
 * const { usage } = await session.respond("Hello");
 * usage.totalTokens === usage.inputTokens + usage.outputTokens; // true
 * ```
 */
export interface Usage {
  /** Prompt tokens. */
  inputTokens: number;
  /** Of those, tokens served from the cache. */
  cachedInputTokens: number;
  /** Generated tokens. */
  outputTokens: number;
  /** Their sum. */
  totalTokens: number;
}

/**
 * One model step of a turn (`steps[]`, `modelStep` events).
 *
 * @example
 * ```ts
 * import { Bridge } from "@open-apple-models/bridge";
 * await using bridge = await Bridge.open();
 * const session = await bridge.createSession({ model: { type: "scripted", steps: [{ text: "Hi." }] } });
 * const { steps } = await session.respond("Hello");
 * // A session without tools: the model may call none ("allowed" when it has some, "required" to force one).
 * steps[0].toolCallingMode; // "disallowed"
 * ```
 */
export interface Step {
  /** 0-based. */
  index: number;
  /** Tool rounds completed before this step. */
  completedToolRounds: number;
  /** `"allowed"`, `"required"` or `"disallowed"`. */
  toolCallingMode: string;
  /** Tools the model could see. */
  enabledTools: string[];
  /** Transcript entries hidden to fit the context. */
  trimmedEntries: number;
}

/**
 * The result of `session/respond`; `T` is the type of `structured` for schema turns.
 *
 * @example
 * ```ts
 * import { Bridge, type RespondResult } from "@open-apple-models/bridge";
 * await using bridge = await Bridge.open();
 * const oracle = await bridge.createSession({ model: { type: "scripted", steps: [{ json: { omen: "rain" } }] } });
 * const result: RespondResult<{ omen: string }> = await oracle.respond<{ omen: string }>("Any omens?", {
 *   schema: { type: "object", properties: { omen: { type: "string" } }, required: ["omen"] },
 * });
 * result.structured?.omen; // "rain"
 * ```
 */
export interface RespondResult<T = JsonValue> {
  /** The session's id. */
  session: string;
  /** The answer (for schema turns, the JSON text of `structured`). */
  text: string;
  /** The schema-valid answer (schema turns only). */
  structured?: T;
  /** Tool calls in completion order. */
  toolCalls: ToolRecord[];
  /** Token counts. */
  usage: Usage;
  /** The model steps. */
  steps: Step[];
  /** Present when there were warnings (e.g. unknown parameters). */
  warnings?: string[];
}

/**
 * A `session/event` (§7), in the order it happened.
 *
 * @example
 * ```ts
 * import { Bridge, type SessionEvent } from "@open-apple-models/bridge";
 * await using bridge = await Bridge.open();
 * const session = await bridge.createSession({ model: { type: "scripted", steps: [{ text: "Halt." }] } });
 * const events: SessionEvent[] = [];
 * await session.respond("Hello", { onEvent: (event) => events.push(event) });
 * // A scripted text step streams in about three pieces (`chunks`): "Ha", "lt", ".".
 * events.map((e) => e.type); // ["modelStep", "text", "text", "text"]
 * ```
 */
export type SessionEvent =
  | { type: "modelStep"; step: Step }
  | { type: "text"; delta: string; text: string; isReset: boolean }
  | { type: "partial"; value: JsonValue }
  | { type: "toolCallStarted"; call: ToolCall; execution: "client" | "local" }
  | { type: "toolCallCompleted"; record: ToolRecord };

/**
 * `model/availability` (§5).
 *
 * @example
 * ```ts
 * import { Bridge } from "@open-apple-models/bridge";
 * await using bridge = await Bridge.open();
 * const availability = await bridge.availability();
 * if (!availability.available) console.error(`on-device model unavailable: ${availability.reason}`);
 * ```
 */
export interface ModelAvailability {
  /** Whether the system model can run now. */
  available: boolean;
  /** Why not: `device_not_eligible`, `apple_intelligence_not_enabled`, `model_not_ready` or `unknown`. */
  reason?: string;
  /** Details (e.g. a plugin load error). */
  detail?: string;
  /** Context window in tokens. */
  contextSize?: number;
  /** Model variant. */
  variant?: string;
  /** Supported language codes. */
  supportedLanguages?: string[];
}

/**
 * The `initialize` result (§5).
 *
 * @example
 * ```ts
 * import { Bridge } from "@open-apple-models/bridge";
 * await using bridge = await Bridge.open();
 * bridge.server.protocolVersion; // "1.0"
 * bridge.server.capabilities.methods.includes("npc/talk"); // true
 * ```
 */
export interface InitializeResult {
  /** `"1.0"`. */
  protocolVersion: string;
  /** `{name, version}` of the bridge. */
  server: { name: string; version: string };
  /** What the bridge serves. */
  capabilities: {
    /** Every method, extensions' included. */
    methods: string[];
    /** Notifications the bridge may send. */
    notifications: string[];
    /** Requests the bridge may send (`tool/call`). */
    clientRequests: string[];
    /** Other capability flags and limits. */
    [key: string]: JsonValue;
  };
  /** The system model's availability. */
  model: ModelAvailability;
}

/**
 * An entry of `session/list`.
 *
 * @example
 * ```ts
 * import { Bridge } from "@open-apple-models/bridge";
 * await using bridge = await Bridge.open();
 * await bridge.createSession({ session: "guard", model: "scripted" });
 * const [info] = await bridge.listSessions();
 * [info.session, info.busy]; // ["guard", false]
 * ```
 */
export interface SessionInfo {
  /** Its id. */
  session: string;
  /** Model kind. */
  model: string;
  /** Its instructions. */
  instructions?: string;
  /** Tool names. */
  tools: string[];
  /** Whether a turn runs. */
  busy: boolean;
  /** Queued operations. */
  pendingOperations: number;
  /** Transcript entries after the instructions. */
  entries: number;
  /** ISO 8601. */
  createdAt: string;
}

/**
 * A saved transcript (`session/transcript`), to pass as `history`.
 *
 * @example
 * ```ts
 * import { Bridge } from "@open-apple-models/bridge";
 * await using bridge = await Bridge.open();
 * const first = await bridge.createSession({ model: { type: "scripted", steps: [{ text: "Hi, Aria." }] } });
 * await first.respond("I'm Aria.");
 * const saved = await first.transcript(); // store it with the game save
 * const resumed = await bridge.createSession({ history: saved, model: "scripted" });
 * resumed.id; // "s2"
 * ```
 */
export interface Transcript {
  /** `"FoundationModels.Transcript"`. */
  type: string;
  /** `"1.1"`. */
  version: string;
  /** The entries. */
  transcript: JsonObject;
}

/**
 * How long a decision, a generation or a bark is waited for. The protocol has no cancel for them: when `signal` aborts
 * (`-32009 cancelled`) or `timeoutMs` passes (`-32024 timeout`), the promise rejects at once, and the bridge
 * finishes the work (its model call included) and its answer is ignored. A game loop that gives up on a
 * decision acts on a default of its own.
 *
 * @example
 * ```ts
 * import { Bridge, BridgeError } from "@open-apple-models/bridge";
 * await using bridge = await Bridge.open();
 * const slow = { type: "scripted" as const, steps: [{ json: { reasoning: "…", choice: "flee", confidence: 50 }, delayMs: 50 }] };
 * const action = await bridge.decide("A wolf growls.", ["fight", "flee"], { model: slow, timeoutMs: 5 })
 *   .then((d) => d.optionID, (e) => {
 *     if (e instanceof BridgeError && e.dataCode === "timeout") return "fight"; // the unit's default
 *     throw e;
 *   });
 * action; // "fight"
 * ```
 */
export interface WaitOptions {
  /**
   * Stops waiting when it aborts (the work goes on in the bridge; see {@link WaitOptions}); the `-32009`
   * error has the signal's reason as its `cause`.
   */
  signal?: AbortSignal;
  /** Stops waiting after this many milliseconds (see {@link WaitOptions}). No limit by default. */
  timeoutMs?: number;
}
