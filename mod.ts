/**
 * open-apple-models: LLM agents with **real tool calls** for games. The model decides to call a tool, *your
 * code* runs it (open a door, check the inventory, play an animation) and the model continues with the
 * result. On top of agent sessions: NPCs with personas, memory and save states, enum-constrained decisions,
 * a shared world-state blackboard with subscriptions, and schema-shaped content. A deterministic scripted
 * model makes all of it testable without any real model.
 *
 * This module is the typed client: {@link Bridge} (opened in this process with {@link Bridge.open}, over a
 * spawned `oam stdio` with {@link Bridge.spawn}, or over `oam serve`'s WebSocket with {@link Bridge.connect}
 * and a {@link WebSocketTransport}), {@link Session}, {@link Npc}, {@link World}, and tools as plain async
 * functions. Hosts that embed or extend the bridge engine import `@open-apple-models/bridge/engine`
 * (engine.ts) instead.
 *
 * Install: `deno add jsr:@open-apple-models/bridge`. {@link Bridge.open} needs nothing more.
 * {@link Bridge.spawn} starts an `oam` executable: install it from the package's `./cli` export
 * (`deno install -g -n oam --allow-read --allow-env --allow-ffi jsr:@open-apple-models/bridge/cli`, the
 * permissions of `oam stdio`) or set `OAM_BRIDGE_PATH` to a compiled `oam`. The NPC files in the package's
 * `personas/` load in place ({@link loadPersona} reads `https:` URLs too) or can be copied into your project.
 *
 * Importing this module runs nothing (no FFI loading, no I/O).
 *
 * @example A shopkeeper NPC with a client tool and a world
 * ```ts
 * import { Bridge } from "@open-apple-models/bridge";
 *
 * const say = (text: string) => Deno.stdout.writeSync(new TextEncoder().encode(text));
 * await using bridge = await Bridge.open();
 * const checkStock = bridge.tool({
 *   name: "check_stock",
 *   description: "How many of an item the shop has.",
 *   parameters: { type: "object", properties: { item: { type: "string" } }, required: ["item"] },
 * }, ({ item }) => ({ item, count: item === "ale" ? 3 : 0 }));
 * const world = await bridge.createWorld({ player: { gold: 20 } });
 * await world.subscribe("player", (change) => say(`${change.path}: ${change.newValue}\n`));
 * const mira = await bridge.createNpc({ name: "Mira", role: "the innkeeper" }, {
 *   tools: [checkStock],
 *   world,
 *   options: { groundingTool: "check_stock", worldWritable: ["player.gold"], playerOptionCount: 0 },
 *   model: {
 *     type: "scripted",
 *     steps: [
 *       { toolCalls: [{ name: "check_stock", arguments: { item: "ale" } }] },
 *       { json: { emotion: "happy", line: "Three ales left!", ends_conversation: false } },
 *     ],
 *   },
 * });
 * // A typewriter: each new piece; a line replaced while it streamed (isReset) is shown again in full.
 * const reply = await mira.talk("Any ale?", {
 *   onLine: (delta, _line, isReset) => say(isReset ? `\nMira: ${delta}` : delta),
 * });
 * reply.emotion; // "happy"
 * reply.toolCalls[0].output; // { item: "ale", count: 3 }
 * ```
 * @module
 */

// The typed client.
export {
  Bridge,
  type BridgeOptions,
  type CreateNpcOptions,
  type CreateSessionOptions,
  type DecisionFailure,
  type GenerateOptions,
  type OpenOptions,
  type SpawnOptions,
} from "./src/client/bridge.ts";
export { type RespondOptions, Session } from "./src/client/session.ts";
export { Npc, type RestoreOptions, type TalkOptions } from "./src/client/npc.ts";
export { Subscription, World } from "./src/client/world.ts";
export type { TurnOptions, WorldListener } from "./src/client/connection.ts";
export { TurnStream } from "./src/client/turn_stream.ts";
export {
  ClientTool,
  type ToolArgs,
  type ToolContext,
  type ToolHandler,
  type ToolHandlerFor,
  type ToolSpec,
} from "./src/client/tools.ts";
export type { SchemaRequired, SchemaTypeValue, SchemaValue } from "./src/client/schema_value.ts";
export type { JsonInput, JsonMemberInput, JsonObjectInput } from "./src/client/json_input.ts";
export { modelFromArgs, type StepScript } from "./src/client/model_args.ts";
export { type CachedModel, firstCachedModel } from "./src/client/cached_model.ts";
export { loadPersona, type LoadPersonaOptions, type PersonaFile } from "./src/client/persona_file.ts";

// The wire shapes (PROTOCOL.md), typed.
export type * from "./src/client/types.ts";
export {
  type Decision,
  type DecisionDetails,
  type DecisionOption,
  type DecisionRequest,
  type DecisionSettings,
  type Emotion,
  EMOTIONS,
  type NpcEvent,
  type NpcInfo,
  type NpcMemory,
  type NpcOptions,
  type NpcReply,
  type NpcState,
  type Persona,
  type WorldChange,
  type WorldInfo,
  type WorldRemoval,
} from "./src/client/game_types.ts";
export type {
  BridgeMethods,
  BridgeNotifications,
  DecisionParams,
  MethodName,
  ParamsOf,
  RespondParams,
  ResultOf,
} from "./src/client/methods.ts";
export { BridgeError, ERROR_CODES, type ErrorName } from "./src/protocol/errors.ts";
export { PROTOCOL_VERSION } from "./src/protocol/version.ts";
export type { JsonObject, JsonValue } from "./src/protocol/json.ts";

// The layers underneath, for custom transports and lower-level clients.
export type { ConnectionEnd, Transport, TransportClose } from "./src/client/transport.ts";
export type {
  JsonRpcError,
  JsonRpcErrorObject,
  JsonRpcMessage,
  JsonRpcNotification,
  JsonRpcRequest,
  JsonRpcResult,
  RequestId,
} from "./src/client/messages.ts";
export {
  type IncomingRequest,
  type NotificationHandler,
  Peer,
  type PeerOptions,
  type RequestHandler,
  type RequestOptions,
} from "./src/client/peer.ts";
export { type EngineFactory, type InProcessEngine, InProcessTransport } from "./src/client/in_process.ts";
export { StdioTransport, type StdioTransportOptions } from "./src/client/stdio.ts";
export { WebSocketTransport, type WebSocketTransportOptions } from "./src/client/websocket_transport.ts";
export { bridgeCommand } from "./src/client/bridge_command.ts";
