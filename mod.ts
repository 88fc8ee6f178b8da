/**
 * open-apple-models: a JSON-RPC 2.0 bridge that lets game engines and other languages drive LLM agents with
 * **real tool calls**. The model decides to call a tool, the engine executes it and replies over the wire,
 * and the model continues. On top of agent sessions it serves game methods: NPCs, decisions, a shared world
 * state and schema-shaped content. A scripted model makes everything deterministic for tests.
 *
 * Importing this module runs nothing (no FFI loading, no I/O).
 *
 * @example In-process engine with a scripted model
 * ```ts
 * import { BridgeEngine } from "./mod.ts";
 *
 * const lines: string[] = [];
 * const engine = new BridgeEngine({}, (line) => lines.push(line));
 * await engine.call("session/create", {
 *   session: "guard",
 *   model: { type: "scripted", steps: [{ text: "Halt! Who goes there?" }] },
 * });
 * const result = await engine.call("session/respond", { session: "guard", prompt: "Hello" }, 1);
 * ```
 *
 * @example Serving stdin/stdout
 * ```ts
 * import { BridgeEngine, createStdioServer } from "./mod.ts";
 *
 * const server = createStdioServer((send, onShutdown) => new BridgeEngine({ onShutdown }, send));
 * Deno.exit(await server.run());
 * ```
 * @module
 */
export { BridgeEngine, standardExtensions } from "./src/composition.ts";
export { EngineCore, type EnginePhase, SHUTDOWN_GRACE_MS } from "./src/engine/engine.ts";
export { PROTOCOL_VERSION, SERVER_INFO } from "./src/protocol/version.ts";
export { type BridgeConfiguration, DEFAULTS, type EngineParts } from "./src/engine/configuration.ts";
export {
  type BridgeExtension,
  type HandlerResult,
  type MethodHandler,
  MethodRegistry,
} from "./src/engine/extension.ts";
export { BridgeRequest, type DriveOptions, TURN_ENDED_REASON } from "./src/engine/request.ts";
export { type ClientRequest, replyToOutcome } from "./src/engine/client_requests.ts";
export { GameExtension, type GameMethodSet } from "./src/game/game_extension.ts";
export { GameContext, type WorldEntry } from "./src/game/game_context.ts";
export {
  AGENT_ERROR_CODES,
  type AgentErrorCode,
  BridgeError,
  ERROR_CODES,
  type ErrorName,
  isAgentErrorCode,
  toBridgeError,
} from "./src/protocol/errors.ts";
export { type Bounds, Params, showValue } from "./src/protocol/params.ts";
export { decodeLine, encodeMessage, type Incoming, type RequestId } from "./src/protocol/codec.ts";
export * from "./src/protocol/json.ts";
export * from "./src/protocol/transcript.ts";
export type * from "./src/models/language_model.ts";
export { parseScript, type Script, ScriptedModel, type ScriptStep } from "./src/models/scripted.ts";
export { UnavailableModel } from "./src/models/unavailable.ts";
export { createModel, type ModelFactories, type ModelSpec, parseModelSpec } from "./src/models/registry.ts";
export { closeSystemModels, createSystemModel, type SystemModelOptions } from "./src/models/system.ts";
export type { NativeReport, NativeStepInfo } from "./src/models/system_sessions.ts";
export { createOpenAIModel } from "./src/models/openai_model.ts";
export {
  type OpenAIModelConfig,
  parseOpenAIModelFlag,
  parseOpenAIModelSpec,
} from "./src/models/openai_config.ts";
export { Agent, type AgentInit } from "./src/agent/agent.ts";
export type * from "./src/agent/types.ts";
export { DEFAULT_POLICY, DEFAULT_SETTINGS } from "./src/agent/types.ts";
export {
  exportTranscript,
  type ImportedTranscript,
  importTranscript,
  type TranscriptEnvelope,
} from "./src/agent/transcript_codec.ts";
export {
  convertForParam,
  type ParsedTools,
  parseToolChoice,
  parseToolDefinitions,
  toolChoiceJson,
} from "./src/agent/tool_definitions.ts";
export { recordJson, stepJson, turnResultJson, usageJson } from "./src/agent/result_json.ts";
export { BridgeSession, SessionMethods } from "./src/methods/session_methods.ts";
export { CoreMethods } from "./src/methods/core_methods.ts";
export { Operation, WorkQueue } from "./src/util/work_queue.ts";
export { Pending, type PendingConsumer } from "./src/util/pending.ts";
export type { MaybePromise } from "./src/util/maybe_sync.ts";
export { LOG_LEVELS, type Logger, type LogLevel, silentLogger, stderrLogger } from "./src/util/logger.ts";
export {
  createStdioServer,
  LineSplitter,
  LineWriter,
  type StdioOptions,
  type StdioServer,
} from "./src/transports/stdio.ts";
export { convertSchema, orderBySchema, type SchemaConversion, SchemaError } from "./src/schema/mod.ts";
export * from "./src/game/world/mod.ts";
