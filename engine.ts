/**
 * The engine-level API, for hosts that embed or extend the bridge: the engine and its composition, the
 * method registry and extension interface, the game methods, model backends, the stdio server and the
 * agent that method sets drive. Scripts that only *use* the bridge want the typed client,
 * `@open-apple-models/bridge` (mod.ts). Install: `deno add jsr:@open-apple-models/bridge`, then import
 * `@open-apple-models/bridge/engine`.
 *
 * Importing this module runs nothing (no FFI loading, no I/O).
 *
 * @example In-process engine, driven by lines
 * ```ts
 * import { BridgeEngine } from "@open-apple-models/bridge/engine";
 *
 * const lines: string[] = [];
 * const engine = new BridgeEngine({}, (line) => lines.push(line));
 * engine.receive('{"jsonrpc":"2.0","id":1,"method":"ping"}');
 * // lines[0] === '{"jsonrpc":"2.0","id":1,"result":{}}'
 * const created = await engine.call("session/create", { model: "scripted" }); // or call methods directly
 * ```
 *
 * @example A method set and a model type of your own (docs/extending.md walks through both)
 * ```ts
 * import {
 *   BridgeEngine,
 *   type LanguageModel,
 *   type ModelSpec,
 *   standardExtensions,
 * } from "@open-apple-models/bridge/engine";
 *
 * // `{"type": "echo"}` in any `model` parameter; `undefined` leaves other types to the bridge.
 * const echo = (spec: ModelSpec): LanguageModel | undefined =>
 *   spec.type !== "echo" ? undefined : {
 *     kind: "echo",
 *     contextSize: 4096,
 *     trimsHistory: false,
 *     availability: () => Promise.resolve({ available: true, contextSize: 4096, supportedLanguages: [] }),
 *     step: (request) => Promise.resolve({ kind: "text", text: request.prompt, usage: null }),
 *   };
 * const engine = new BridgeEngine({
 *   extensions: [...standardExtensions(), {
 *     register: (registry) => registry.register("quest/hello", (ctx) => ({ hello: ctx.params.string("name") })),
 *   }],
 *   modelFactory: echo,
 * });
 * await engine.call("quest/hello", { name: "Aria" }); // { hello: "Aria" }
 * await engine.call("session/create", { session: "s", model: { type: "echo" } });
 * await engine.call("session/respond", { session: "s", prompt: "Hi" }); // { session: "s", text: "Hi", … }
 * ```
 *
 * @example Serving stdin/stdout (what `oam stdio` does; call it from your own entry point)
 * ```ts
 * import { BridgeEngine, createStdioServer } from "@open-apple-models/bridge/engine";
 *
 * async function serveStdio(): Promise<never> {
 *   const server = createStdioServer((send, onShutdown) => new BridgeEngine({ onShutdown }, send));
 *   Deno.exit(await server.run());
 * }
 * ```
 * @module
 */

// The engine and its composition.
export { BridgeEngine, standardExtensions } from "./src/composition.ts";
export { BridgeSession, SessionMethods } from "./src/methods/session_methods.ts";
export { EngineCore, type EnginePhase, SHUTDOWN_GRACE_MS } from "./src/engine/engine.ts";
export { type BridgeConfiguration, DEFAULTS, type EngineParts } from "./src/engine/configuration.ts";
export type { BridgeSettings } from "./src/engine/settings.ts";
export { PROTOCOL_VERSION, SERVER_INFO } from "./src/protocol/version.ts";

// Extending: method sets, the handler context, errors, params.
export {
  type BridgeExtension,
  type ExtensionHost,
  type HandlerResult,
  type MethodHandler,
  MethodRegistry,
} from "./src/engine/extension.ts";
export type { DriveOptions, HandlerContext } from "./src/engine/context.ts";
export type { ClientRequest } from "./src/engine/client_requests.ts";
export {
  AGENT_ERROR_CODES,
  type AgentErrorCode,
  BridgeError,
  ERROR_CODES,
  type ErrorName,
  EXTENSION_ERROR_CODES,
} from "./src/protocol/errors.ts";
export { type Bounds, Params } from "./src/protocol/params.ts";
export type { RequestId } from "./src/protocol/codec.ts";
export type { JsonObject, JsonValue } from "./src/protocol/json.ts";
export { Operation, Pending, type PendingConsumer, WorkQueue } from "./src/util/work_queue.ts";
export { LOG_LEVELS, type Logger, type LogLevel, silentLogger, stderrLogger } from "./src/util/logger.ts";

// The agent a method set drives, and the tool and transcript shapes it uses.
export { Agent, type AgentInit } from "./src/agent/agent.ts";
export type * from "./src/agent/types.ts";
export { DEFAULT_POLICY, DEFAULT_SETTINGS } from "./src/agent/types.ts";
export {
  type ParsedTools,
  parseToolChoice,
  parseToolDefinitions,
  type ToolDefinitionsParam,
} from "./src/agent/tool_definitions.ts";
export {
  exportTranscript,
  type ImportedTranscript,
  importTranscript,
  type TranscriptEnvelope,
  type TranscriptSource,
} from "./src/agent/transcript_codec.ts";
export type {
  ConversationEntry,
  InstructionsEntry,
  PromptEntry,
  ResponseEntry,
  Segment,
  StructureSegment,
  TextSegment,
  ToolCallsEntry,
  ToolOutputEntry,
  TranscriptEntry,
  TranscriptToolCall,
  TranscriptToolDefinition,
} from "./src/protocol/transcript.ts";

// The game methods and the host-shared world.
export { GameExtension, type GameMethodSet } from "./src/game/game_extension.ts";
export { GameContext, type WorldEntry } from "./src/game/game_context.ts";
export {
  type ReadonlyJsonObject,
  type ReadonlyJsonValue,
  type WorldChange,
  WorldError,
  type WorldListener,
  type WorldPathInput,
  type WorldReadResult,
  type WorldRemoveResult,
  WorldState,
  type WorldStateOptions,
} from "./src/game/world/mod.ts";

// Model backends.
export type * from "./src/models/language_model.ts";
export { parseScript, type Script, ScriptedModel, type ScriptStep } from "./src/models/scripted.ts";
export { UnavailableModel } from "./src/models/unavailable.ts";
export { CutOffAnswer, type CutOffWritten, type CutToolCall } from "./src/models/cut_off.ts";
export {
  createModel,
  type ModelFactories,
  type ModelParam,
  type ModelSpec,
  parseModelSpec,
} from "./src/models/registry.ts";
export { closeSystemModels, createSystemModel, type SystemModelOptions } from "./src/models/system.ts";
export type { NativeReport, NativeStepInfo } from "./src/models/system_sessions.ts";
export { createOpenAIModel } from "./src/models/openai_model.ts";
export {
  type OpenAIModelConfig,
  parseOpenAIModelFlag,
  parseOpenAIModelSpec,
} from "./src/models/openai_config.ts";
export { createLlamaModel } from "./src/models/llama_model.ts";
export {
  type LlamaGpu,
  type LlamaModelConfig,
  parseGgufModelFlag,
  parseLlamaModelSpec,
} from "./src/models/llama_config.ts";
export { closeLlamaModels } from "./src/models/llama_runtime.ts";

// JSON Schema conversion.
export { convertSchema, type SchemaConversion, SchemaError } from "./src/schema/mod.ts";

// Serving stdin/stdout.
export { createStdioServer, type StdioOptions, type StdioServer } from "./src/transports/stdio.ts";
