/**
 * The wire shapes of the game methods (PROTOCOL.md §6): personas, NPC options and replies, save states,
 * decisions and worlds.
 * @module
 */
import type { JsonObject, JsonValue } from "../protocol/json.ts";
import type { Model, ToolCall, ToolChoice, ToolDefinition, ToolRecord, ToolRef, Usage } from "./types.ts";

import type { Emotion } from "../game/npc/emotions.ts";

export { type Emotion, EMOTIONS } from "../game/npc/emotions.ts";

/**
 * Who an NPC is (§6 `persona`; only `name` is required; keep every field short).
 *
 * @example
 * ```ts
 * import { type Persona } from "@open-apple-models/bridge";
 * const gorm: Persona = {
 *   name: "Gorm",
 *   role: "the village blacksmith",
 *   personality: "Gruff but fair.",
 *   secrets: ["He once forged a sword for the bandit king."],
 *   defaultEmotion: "neutral",
 * };
 * ```
 */
export interface Persona {
  /** e.g. `"Gorm"`. */
  name: string;
  /** e.g. `"the village blacksmith"`. */
  role?: string;
  /** A sentence or two. */
  personality?: string;
  /** A sentence or two. */
  speakingStyle?: string;
  /** A sentence or two. */
  backstory?: string;
  /** What the NPC wants. */
  goals?: readonly string[];
  /** What the NPC knows. */
  knowledge?: readonly string[];
  /** Left out of the prompt until the relationship reaches `secretsUnlockAtRelationship`. */
  secrets?: readonly string[];
  /** Used when the model gives none, and for fallback lines (default `"neutral"`). */
  defaultEmotion?: Emotion;
  /** Reply length limit (default 2). */
  maxSentences?: number;
}

/**
 * What an NPC remembers (§6 `memory`).
 *
 * @example
 * ```ts
 * import { Bridge } from "@open-apple-models/bridge";
 * await using bridge = await Bridge.open();
 * const gorm = await bridge.createNpc({ name: "Gorm" }, {
 *   memory: { facts: ["Aria likes axes."], relationship: 20 },
 *   model: "scripted",
 * });
 * (await gorm.state()).memory.relationship; // 20
 * ```
 */
export interface NpcMemory {
  /** Facts (at most `maxFacts`). */
  facts?: readonly string[];
  /** Attitude toward the player, -100…100. */
  relationship?: number;
  /** A summary of older turns. */
  summary?: string;
}

/**
 * NPC options (§6 `npc/create` `options`; all optional, unknown keys are warned about).
 *
 * @example
 * ```ts
 * import { type NpcOptions } from "@open-apple-models/bridge";
 * const shopkeeper: NpcOptions = {
 *   replyFormat: "text",
 *   groundingTool: "check_stock",
 *   worldWritable: ["player.gold"],
 *   memoryTools: ["rememberFact"],
 *   playerOptionCount: 2,
 * };
 * ```
 */
export interface NpcOptions {
  /** `"automatic"` (default), `"structured"` or `"text"`. */
  replyFormat?: "automatic" | "structured" | "text";
  /** A tool the NPC must call first on every turn. */
  groundingTool?: string | null;
  /** Used when `groundingTool` is not set (default `"explicit"`). */
  toolChoice?: ToolChoice;
  /** Per turn (default 2). */
  maxToolRounds?: number;
  /** Per turn (default 6). */
  maxToolCalls?: number;
  /** Seconds the engine has to answer a `tool/call` (default 120; `0` = forever). */
  toolTimeoutSeconds?: number;
  /** World paths `read_world_state` may read (default `[""]`: everything). */
  worldReadable?: readonly string[];
  /** World paths `update_world_state` may change (default none). */
  worldWritable?: readonly string[];
  /** World paths summarized into every prompt. */
  worldContextPaths?: readonly string[];
  /** `["rememberFact", "changeRelationship"]`, `"all"` or `"none"`. */
  memoryTools?: readonly ("rememberFact" | "changeRelationship")[] | "all" | "none";
  /** Default 12. */
  maxFacts?: number;
  /** Default 10. */
  maxRelationshipChange?: number;
  /** Default 50; `null` always includes secrets, guarded. */
  secretsUnlockAtRelationship?: number | null;
  /** Emotions the model may choose from (default all). */
  emotions?: readonly Emotion[];
  /** Suggested player replies, 0–4 (default 3; structured replies only). */
  playerOptionCount?: number;
  /** Default true. */
  canEndConversation?: boolean;
  /** Appended to the persona's instructions. */
  extraInstructions?: string | null;
  /** Background summarization after this many turns (default 8; `0` disables it). */
  compactAfterTurns?: number;
  /** Turns kept when compacting (default 2). */
  keepRecentTurns?: number;
  /** A blocked turn returns a fallback line instead of `-32002` (default true). */
  fallbackOnGuardrail?: boolean;
  /** Rotated fallback lines. */
  fallbackLines?: readonly string[];
  /** Sampling temperature. */
  temperature?: number | null;
  /** Longest reply in tokens. */
  maximumResponseTokens?: number | null;
  /** Longest bark in tokens (default 48). */
  barkMaximumTokens?: number;
}

/**
 * The result of a dialogue turn (`npc/talk`).
 *
 * @example
 * ```ts
 * import { Bridge } from "@open-apple-models/bridge";
 * await using bridge = await Bridge.open();
 * const gorm = await bridge.createNpc({ name: "Gorm" }, {
 *   options: { playerOptionCount: 1 },
 *   model: {
 *     type: "scripted",
 *     steps: [{ json: { emotion: "proud", line: "Finest steel.", player_options: ["Buy"], ends_conversation: false } }],
 *   },
 * });
 * const reply = await gorm.talk("Nice sword.");
 * [reply.emotion, reply.line, reply.playerOptions]; // ["proud", "Finest steel.", ["Buy"]]
 * ```
 */
export interface NpcReply {
  /** The NPC's id. */
  npc: string;
  /** What the NPC says. */
  line: string;
  /** How it feels. */
  emotion: Emotion;
  /** Suggested player replies (structured replies only). */
  playerOptions: string[];
  /** Whether the NPC ends the conversation. */
  endsConversation: boolean;
  /** Tool calls of the turn. */
  toolCalls: ToolRecord[];
  /** Attitude after the turn. */
  relationship: number;
  /** A guardrail-blocked (or refused) turn answered with a fallback line. */
  isFallback: boolean;
  /** Token counts. */
  usage: Usage;
  /** Present when there were warnings (unknown parameters, a scripted reply the NPC could not use fully). */
  warnings?: string[];
}

/**
 * An `npc/event` (§7), in the order it happened.
 *
 * @example
 * ```ts
 * import { Bridge, type NpcEvent } from "@open-apple-models/bridge";
 * await using bridge = await Bridge.open();
 * const gorm = await bridge.createNpc({ name: "Gorm" }, {
 *   options: { replyFormat: "text" },
 *   model: { type: "scripted", steps: [{ text: "[proud] Finest steel." }] },
 * });
 * const events: NpcEvent[] = [];
 * await gorm.talk("Nice sword.", { onEvent: (event) => events.push(event) });
 * events[0]; // { type: "emotion", emotion: "proud" }
 * ```
 */
export type NpcEvent =
  | { type: "emotion"; emotion: Emotion }
  | { type: "lineDelta"; delta: string }
  | { type: "lineReset"; line: string }
  | { type: "toolCallStarted"; call: ToolCall; execution: "client" | "local" }
  | { type: "toolCallCompleted"; record: ToolRecord };

/**
 * An NPC's save state (`npc/state`): store it whole, restore it with `npc/restore` (a member a newer bridge
 * adds is kept as it is, though this type does not name it).
 *
 * @example
 * ```ts
 * import { Bridge, type NpcState } from "@open-apple-models/bridge";
 * await using bridge = await Bridge.open();
 * const gorm = await bridge.createNpc({ name: "Gorm" }, { npc: "gorm", model: "scripted" });
 * const save: NpcState = await gorm.state(); // store it whole with the game save
 * await gorm.delete();
 * const loaded = await bridge.restoreNpc(save, { model: "scripted" });
 * loaded.id; // "gorm"
 * ```
 */
export interface NpcState {
  /** Format version (1). */
  version: number;
  /** The persona, every field. */
  persona: Persona;
  /** What the NPC remembers: facts, relationship and summary. */
  memory: NpcMemory;
  /** The conversation. */
  transcript: JsonObject;
  /** The NPC's id. */
  npc: string;
  /** Every option. */
  options: NpcOptions;
  /** Client tool definitions. */
  tools: ToolDefinition[];
  /** The world id, if any. */
  world?: string | null;
}

/**
 * An entry of `npc/list`.
 *
 * @example
 * ```ts
 * import { Bridge } from "@open-apple-models/bridge";
 * await using bridge = await Bridge.open();
 * await bridge.createNpc({ name: "Gorm", role: "the blacksmith" }, { npc: "gorm", model: "scripted" });
 * const [gorm] = await bridge.listNpcs();
 * [gorm.npc, gorm.name, gorm.turnCount]; // ["gorm", "Gorm", 0]
 * ```
 */
export interface NpcInfo {
  /** Its id. */
  npc: string;
  /** Persona name. */
  name: string;
  /** Persona role. */
  role: string;
  /** Its world, or null. */
  world: string | null;
  /** Model kind. */
  model: string;
  /** Client tool names. */
  tools: string[];
  /** Completed turns. */
  turnCount: number;
  /** Attitude. */
  relationship: number;
  /** Whether a turn runs. */
  busy: boolean;
  /** Queued requests. */
  pendingOperations: number;
  /** ISO 8601. */
  createdAt: string;
}

/**
 * One option of a decision: an id, or an id with a description.
 *
 * @example
 * ```ts
 * import { type DecisionOption } from "@open-apple-models/bridge";
 * const options: DecisionOption<"fight" | "flee">[] = ["fight", { id: "flee", description: "Run into the woods" }];
 * ```
 */
export type DecisionOption<Id extends string = string> = Id | { id: Id; description?: string };

/**
 * Engine settings shared by `decide` and `decideMany`.
 *
 * @example
 * ```ts
 * import { Bridge } from "@open-apple-models/bridge";
 * await using bridge = await Bridge.open();
 * const results = await bridge.decideMany([
 *   { situation: "A wolf growls.", options: ["fight", "flee"] },
 *   { situation: "A merchant waves.", options: ["greet", "ignore"] },
 * ], {
 *   temperature: 0,
 *   model: {
 *     type: "scripted", // one model for the call: one step per decision, in order
 *     steps: [
 *       { json: { reasoning: "Safer.", choice: "flee", confidence: 70 } },
 *       { json: { reasoning: "Friendly.", choice: "greet", confidence: 90 } },
 *     ],
 *   },
 * });
 * results.length; // 2
 * ```
 */
export interface DecisionSettings {
  /** Extra instructions. */
  instructions?: string;
  /** Sampling temperature. */
  temperature?: number;
  /** Tool rounds (default 2). */
  maxToolRounds?: number;
  /** Seconds the engine has to answer a `tool/call`. */
  toolTimeoutSeconds?: number;
  /** The model (default `"system"`). */
  model?: Model;
}

/**
 * One decision's parameters besides its situation and options.
 *
 * @example
 * ```ts
 * import { Bridge } from "@open-apple-models/bridge";
 * await using bridge = await Bridge.open();
 * const decision = await bridge.decide("The player insults Snik.", ["laugh", "attack"], {
 *   actor: { name: "Snik", personality: "A timid goblin." },
 *   context: { snikHp: 3, playerHp: 40 },
 *   fallbackOptionID: "laugh",
 *   model: { type: "scripted", steps: [{ json: { reasoning: "He is too weak.", choice: "laugh", confidence: 90 } }] },
 * });
 * decision.optionID; // "laugh"
 * ```
 */
export interface DecisionDetails<Id extends string = string, C = JsonValue> {
  /**
   * A persona, or an NPC (its handle from `bridge.createNpc`, or its id) to decide as that NPC: its persona's
   * name, role, personality and goals, not its model (the decision runs on this call's `model`, `"system"` by
   * default).
   */
  actor?: Persona | string | { readonly id: string };
  /**
   * Facts, e.g. `{hp: 3}`: any JSON value, an interface's included (`C`; `bridge.decide` checks it with
   * `JsonInput`).
   */
  context?: C;
  /** Client tools (handles, registered names or definitions). */
  tools?: readonly ToolRef[];
  /** Default `"auto"`. */
  toolChoice?: ToolChoice;
  /**
   * Returned (with `isFallback: true`) when guardrails block the decision. One of the option ids: any other
   * id does not compile (the options alone decide the type of `optionID`).
   */
  fallbackOptionID?: NoInfer<Id>;
}

/**
 * One request of `decideMany`.
 *
 * @example
 * ```ts
 * import { type DecisionRequest } from "@open-apple-models/bridge";
 * const request: DecisionRequest<"hide" | "shout"> = {
 *   situation: "Bandits on the road.",
 *   options: ["hide", "shout"],
 *   actor: "bram", // decide as the NPC "bram"
 * };
 * ```
 */
export interface DecisionRequest<Id extends string = string> extends DecisionDetails<Id> {
  /** From the actor's point of view. */
  situation: string | JsonValue;
  /** The choices (ids unique). */
  options: readonly DecisionOption<Id>[];
}

/**
 * The result of a decision; `optionID` is one of the ids offered.
 *
 * @example
 * ```ts
 * import { Bridge } from "@open-apple-models/bridge";
 * await using bridge = await Bridge.open();
 * const decision = await bridge.decide("A wolf blocks the path.", ["fight", "flee"], {
 *   model: { type: "scripted", steps: [{ json: { reasoning: "Too strong.", choice: "flee", confidence: 80 } }] },
 * });
 * const choice: "fight" | "flee" = decision.optionID; // typed from the options
 * [choice, decision.confidence]; // ["flee", 80]
 * ```
 */
export interface Decision<Id extends string = string> {
  /** The chosen option. */
  optionID: Id;
  /** One sentence. */
  reasoning: string;
  /** 0–100. */
  confidence: number;
  /** Tool calls made. */
  toolCalls: ToolRecord[];
  /** Token counts. */
  usage: Usage;
  /** Whether the fallback option was returned. */
  isFallback: boolean;
  /** Present when there were warnings. */
  warnings?: string[];
}

/**
 * A world change (`world/changed`); `oldValue` is absent when created, `newValue` when removed. `T` is the
 * type you expect at the path (`world.subscribe<number>("player.gold", …)`), as for `world.get<T>`.
 *
 * @example
 * ```ts
 * import { Bridge, type WorldChange } from "@open-apple-models/bridge";
 * await using bridge = await Bridge.open();
 * const world = await bridge.createWorld({ player: { gold: 60 } });
 * const changes: WorldChange[] = [];
 * await world.subscribe("player", (change) => changes.push(change));
 * await world.set("player.gold", 45);
 * changes[0]; // { world: "w1", subscription: "sub1", path: "player.gold", oldValue: 60, newValue: 45 }
 * ```
 */
export interface WorldChange<T = JsonValue> {
  /** The world's id. */
  world: string;
  /** The subscription that matched. */
  subscription: string;
  /**
   * The changed path: the subscribed one, or one above it (its parent written whole, the root when a save is
   * loaded) or inside it. `oldValue` and `newValue` are the values at this path.
   */
  path: string;
  /** The value before, at `path` (absent when it was created). `T` holds when `path` is the subscribed path. */
  oldValue?: T;
  /** The value after, at `path` (absent when it was removed). `T` holds when `path` is the subscribed path. */
  newValue?: T;
}

/**
 * An entry of `world/list`.
 *
 * @example
 * ```ts
 * import { Bridge } from "@open-apple-models/bridge";
 * await using bridge = await Bridge.open();
 * await bridge.createWorld({ day: 1 }, { world: "village" });
 * const [village] = await bridge.listWorlds();
 * [village.world, village.version]; // ["village", 0]
 * ```
 */
export interface WorldInfo {
  /** Its id. */
  world: string;
  /** Changes so far. */
  version: number;
  /** NPCs attached. */
  npcs: number;
  /** Its subscriptions. */
  subscriptions: { subscription: string; world: string; path: string }[];
  /** ISO 8601. */
  createdAt: string;
}

/**
 * The result of `world/remove`.
 *
 * @example
 * ```ts
 * import { Bridge } from "@open-apple-models/bridge";
 * await using bridge = await Bridge.open();
 * const world = await bridge.createWorld({ quest: { stage: 2 } });
 * const removal = await world.remove("quest");
 * removal; // { removed: true, oldValue: { stage: 2 }, version: 1 }
 * ```
 */
export interface WorldRemoval {
  /** Whether something was removed. */
  removed: boolean;
  /** What was there (may be `null`); absent when nothing was removed. */
  oldValue?: JsonValue;
  /** The world's version after. */
  version: number;
}
