/**
 * One map from each protocol method to its params and result types (PROTOCOL.md §5, §6), used by
 * `Bridge.request` so a call and its result cannot drift apart.
 * @module
 */
import type { JsonObject, JsonValue } from "../protocol/json.ts";
import type { RequestId } from "./messages.ts";
import type {
  Decision,
  DecisionSettings,
  NpcEvent,
  NpcInfo,
  NpcMemory,
  NpcOptions,
  NpcReply,
  NpcState,
  Persona,
  WorldChange,
  WorldInfo,
} from "./game_types.ts";
import type {
  InitializeResult,
  JsonSchema,
  Model,
  ModelAvailability,
  RespondResult,
  SessionEvent,
  SessionInfo,
  SessionOptions,
  ToolChoice,
  ToolDefinition,
  Transcript,
} from "./types.ts";

/**
 * Params of `session/respond`.
 *
 * @example
 * ```ts
 * import { type RespondParams } from "@open-apple-models/bridge";
 * const params: RespondParams = { session: "guard", prompt: "Open the gate.", stream: true, toolChoice: "required" };
 * ```
 */
export interface RespondParams {
  /** The id of the session that answers. */
  session: string;
  /** The player's or game's input (`""` continues). */
  prompt: string;
  /** Structured output. */
  schema?: JsonSchema;
  /** Send `session/event`s. */
  stream?: boolean;
  /** Per-turn override. */
  toolChoice?: ToolChoice;
  /** Per-turn override. */
  maxToolRounds?: number;
  /** Per-turn override. */
  maxToolCalls?: number;
  /** Per-turn override. */
  enabledTools?: readonly string[];
}

/**
 * A decision as sent on the wire (tools as definitions).
 *
 * @example
 * ```ts
 * import { type DecisionParams } from "@open-apple-models/bridge";
 * const params: DecisionParams = { situation: "A wolf.", options: ["fight", "flee"], fallbackOptionID: "flee" };
 * ```
 */
export interface DecisionParams extends DecisionSettings {
  /** From the actor's point of view. */
  situation: string | JsonValue;
  /** `[{id, description?}]` or ids. */
  options: readonly (string | { id: string; description?: string })[];
  /** A persona or an NPC id. */
  actor?: Persona | string;
  /** Facts. */
  context?: JsonValue;
  /** Client tools. */
  tools?: readonly ToolDefinition[];
  /** Default `"auto"`. */
  toolChoice?: ToolChoice;
  /** Returned when guardrails block the decision. */
  fallbackOptionID?: string;
}

/**
 * Every method of the protocol: `{params, result}`.
 *
 * @example
 * ```ts
 * import { Bridge, type BridgeMethods } from "@open-apple-models/bridge";
 * type Talk = BridgeMethods["npc/talk"]; // { params: {npc, line, …}; result: NpcReply }
 * await using bridge = await Bridge.open();
 * const list: Talk["result"][] = [];
 * list.length; // 0
 * const { npcs } = await bridge.request("npc/list", {}); // typed from the map
 * npcs.length; // 0
 * ```
 */
export interface BridgeMethods {
  /** Handshake. */
  "initialize": { params: { client?: JsonObject; protocolVersion?: string }; result: InitializeResult };
  /** Health check. */
  "ping": { params: Record<string, never>; result: Record<string, never> };
  /** The system model's availability. */
  "model/availability": { params: Record<string, never>; result: ModelAvailability };
  /** Stops the bridge. */
  "shutdown": { params: Record<string, never>; result: Record<string, never> };
  /** JSON Schema → generation schema. */
  "schema/validate": {
    params: { schema: JsonSchema; name?: string };
    result: { warnings: string[]; generationSchema: JsonValue };
  };
  /** Tool definitions → warnings. */
  "tools/validate": {
    params: { tools: readonly ToolDefinition[] };
    result: {
      tools: { name: string; warnings: string[]; generationSchema: JsonValue }[];
      warnings: string[];
    };
  };
  /** Creates an agent session. */
  "session/create": {
    params: {
      session?: string;
      instructions?: string;
      tools?: readonly ToolDefinition[];
      options?: SessionOptions;
      history?: Transcript | JsonObject;
      model?: Model;
    };
    result: { session: string; warnings: string[] };
  };
  /** One turn. */
  "session/respond": { params: RespondParams; result: RespondResult };
  /** Cancels the running turn and queued work. */
  "session/cancel": { params: { session: string }; result: { session: string; cancelled: number } };
  /** Clears the conversation. */
  "session/reset": { params: { session: string }; result: { session: string } };
  /** Deletes the session. */
  "session/delete": { params: { session: string }; result: { session: string; deleted: boolean } };
  /** Lists sessions. */
  "session/list": { params: Record<string, never>; result: { sessions: SessionInfo[] } };
  /** The transcript to save. */
  "session/transcript": { params: { session: string }; result: { session: string; transcript: Transcript } };
  /** Replaces the instructions. */
  "session/setInstructions": {
    params: { session: string; instructions: string | null };
    result: { session: string };
  };
  /** Sets the context note. */
  "session/setContextNote": { params: { session: string; note: string | null }; result: { session: string } };
  /** Replaces the tools. */
  "session/setTools": {
    params: { session: string; tools: readonly ToolDefinition[] };
    result: { session: string; warnings: string[] };
  };
  /** Summarizes older turns. */
  "session/compact": {
    params: { session: string; keepRecentTurns?: number; summaryInstructions?: string };
    result: { session: string; summary: string | null };
  };
  /** Creates an NPC. */
  "npc/create": {
    params: {
      npc?: string;
      persona: Persona;
      tools?: readonly ToolDefinition[];
      world?: string;
      memory?: NpcMemory;
      options?: NpcOptions;
      model?: Model;
    };
    result: { npc: string; tools: string[]; warnings: string[] };
  };
  /** One dialogue turn. */
  "npc/talk": {
    params: {
      npc: string;
      line: string;
      context?: string | JsonValue;
      stream?: boolean;
      toolChoice?: ToolChoice;
    };
    result: NpcReply;
  };
  /** An ambient line. */
  "npc/bark": {
    params: { npc: string; situation?: string | JsonValue };
    result: { npc: string; line: string };
  };
  /** The save state. */
  "npc/state": { params: { npc: string; settle?: boolean }; result: { npc: string; state: NpcState } };
  /** Rebuilds an NPC from a save. */
  "npc/restore": {
    params: {
      state: NpcState | { state: NpcState };
      npc?: string;
      tools?: readonly ToolDefinition[];
      options?: NpcOptions;
      world?: string | null;
      model?: Model;
    };
    result: { npc: string; tools: string[]; warnings: string[] };
  };
  /** Merge patches for persona, options, memory; replaces tools. */
  "npc/update": {
    params: {
      npc: string;
      persona?: Partial<Persona>;
      options?: NpcOptions;
      memory?: NpcMemory;
      tools?: readonly ToolDefinition[];
    };
    result: { npc: string; warnings: string[] };
  };
  /** Clears the conversation (and the memory if asked). */
  "npc/reset": { params: { npc: string; clearMemory?: boolean }; result: { npc: string } };
  /** Cancels the running turn and queued requests. */
  "npc/cancel": { params: { npc: string }; result: { npc: string; cancelled: number } };
  /** Deletes the NPC. */
  "npc/delete": { params: { npc: string }; result: { npc: string; deleted: boolean } };
  /** Lists NPCs. */
  "npc/list": { params: Record<string, never>; result: { npcs: NpcInfo[] } };
  /** Picks one option. */
  "decision/decide": { params: DecisionParams; result: Decision };
  /** Independent decisions with shared settings. */
  "decision/decideMany": {
    params: DecisionSettings & { requests: readonly DecisionParams[]; maxConcurrency?: number };
    result: { results: (Decision | { error: { code: number; message: string; data?: JsonValue } })[] };
  };
  /** JSON matching a schema. */
  "content/generate": {
    params: DecisionSettings & {
      prompt: string;
      schema: JsonSchema;
      context?: JsonValue;
      tools?: readonly ToolDefinition[];
    };
    result: { content: JsonValue; warnings?: string[] };
  };
  /** Creates a world. */
  "world/create": {
    params: { world?: string; state?: JsonObject };
    result: { world: string; version: number };
  };
  /** Reads a path. */
  "world/get": {
    params: { world: string; path?: string };
    result: { world: string; path: string; value: JsonValue; exists: boolean; version: number };
  };
  /** Writes a path. */
  "world/set": {
    params: { world: string; path?: string; value: JsonValue };
    result: { world: string; path: string; version: number };
  };
  /** Merge patch at a path. */
  "world/merge": {
    params: { world: string; patch: JsonValue; path?: string };
    result: { world: string; path: string; version: number };
  };
  /** Removes a path. */
  "world/remove": {
    params: { world: string; path: string };
    result: { world: string; path: string; removed: boolean; oldValue?: JsonValue; version: number };
  };
  /** The whole state. */
  "world/snapshot": {
    params: { world: string };
    result: { world: string; state: JsonObject; version: number };
  };
  /** Deletes a world. */
  "world/delete": {
    params: { world: string };
    result: { world: string; deleted: boolean; endedSubscriptions: number };
  };
  /** Lists worlds. */
  "world/list": { params: Record<string, never>; result: { worlds: WorldInfo[] } };
  /** Subscribes to changes at, inside or above a path. */
  "world/subscribe": {
    params: { world: string; path?: string };
    /** `warnings` when the path does not exist (yet): allowed, but often a typo. */
    result: { subscription: string; world: string; path: string; warnings?: string[] };
  };
  /** Ends a subscription. */
  "world/unsubscribe": {
    params: { subscription: string };
    result: { subscription: string; world: string; path: string; unsubscribed: boolean };
  };
}

/**
 * The params of every notification the bridge sends (PROTOCOL.md §7), by method.
 *
 * @example
 * ```ts
 * import { Bridge } from "@open-apple-models/bridge";
 * await using bridge = await Bridge.open();
 * const gold: number[] = [];
 * bridge.onNotification("world/changed", (change) => { // change: BridgeNotifications["world/changed"]
 *   if (change.path === "player.gold" && typeof change.newValue === "number") gold.push(change.newValue);
 * });
 * const world = await bridge.createWorld({ player: { gold: 20 } });
 * await world.subscribe("player", () => {});
 * await world.set("player.gold", 15); // gold: [15]
 * ```
 */
export interface BridgeNotifications {
  /** An event of a streamed `session/respond` turn. */
  "session/event": { session: string; requestId: RequestId; event: SessionEvent };
  /** An event of a streamed `npc/talk` turn. */
  "npc/event": { npc: string; requestId: RequestId; event: NpcEvent };
  /** A change a `world/subscribe` subscription matched. */
  "world/changed": WorldChange;
  /** The bridge no longer needs the output of `tool/call` `id` (the client's tools abort its `signal`). */
  "tool/cancel": {
    /** The id of the `tool/call` request. */
    id: RequestId;
    /** The model's id of the call. */
    callId?: string;
    /** Why (a timeout, a cancelled or finished turn). */
    reason?: string;
    /** The id of the request whose turn made the call. */
    requestId?: RequestId;
    /** The call's context fields (`session`, `npc`, an extension's own). */
    [context: string]: JsonValue | undefined;
  };
}

/**
 * A method name of the protocol.
 *
 * @example
 * ```ts
 * import { type MethodName } from "@open-apple-models/bridge";
 * const method: MethodName = "world/subscribe";
 * ```
 */
export type MethodName = keyof BridgeMethods;

/**
 * The params of method `M`.
 *
 * @example
 * ```ts
 * import { type ParamsOf } from "@open-apple-models/bridge";
 * const talk: ParamsOf<"npc/talk"> = { npc: "gorm", line: "Hello.", stream: true };
 * ```
 */
export type ParamsOf<M extends MethodName> = BridgeMethods[M]["params"];

/**
 * The result of method `M`.
 *
 * @example
 * ```ts
 * import { Bridge, type ResultOf } from "@open-apple-models/bridge";
 * await using bridge = await Bridge.open();
 * const pong: ResultOf<"ping"> = await bridge.request("ping", {});
 * pong; // {}
 * ```
 */
export type ResultOf<M extends MethodName> = BridgeMethods[M]["result"];
