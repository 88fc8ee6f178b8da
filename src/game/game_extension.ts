/**
 * GameExtension: the game methods (`npc/*`, `decision/*`, `world/*`, `content/generate`) as one extension.
 * The domain code lives beside it in plain TypeScript; the method sets adapt it to JSON-RPC.
 * @module
 */
import type { BridgeExtension, MethodRegistry } from "../engine/extension.ts";
import { ContentMethods } from "./content_methods.ts";
import { DecisionMethods } from "./decision_methods.ts";
import { GameContext } from "./game_context.ts";
import { NpcMethods } from "./npc/npc_methods.ts";
import { MAX_WORLDS, WorldMethods } from "./world_methods.ts";
import { checkObjectId, existsError, limitReachedError } from "../util/object_ids.ts";
import { WORLD_KIND } from "./game_kinds.ts";
import type { WorldState } from "./world/mod.ts";

/**
 * One method set of the game extension.
 *
 * @example
 * ```ts
 * import {
 *   BridgeEngine,
 *   type BridgeExtension,
 *   GameExtension,
 *   type GameMethodSet,
 * } from "@open-apple-models/bridge/engine";
 * // Methods over the game's shared state: `quest/worlds` lists the worlds' ids.
 * const questWorlds: GameMethodSet = {
 *   register(registry, game) {
 *     registry.register("quest/worlds", () => ({ worlds: [...game.worlds.keys()] }));
 *   },
 * };
 * const game = new GameExtension();
 * const quests: BridgeExtension = { register: (registry) => questWorlds.register(registry, game.game) };
 * const engine = new BridgeEngine({ extensions: [game, quests] });
 * await engine.call("world/create", { world: "village", state: {} });
 * await engine.call("quest/worlds", {}); // { worlds: ["village"] }
 * ```
 */
export interface GameMethodSet {
  /** Registers the set's methods over the shared game state. */
  register(registry: MethodRegistry, game: GameContext): void;
  /** Cancels the set's work and frees its state. */
  shutdown?(): Promise<void> | void;
}

/**
 * The game methods.
 *
 * @example
 * ```ts
 * import { BridgeEngine, GameExtension } from "@open-apple-models/bridge/engine";
 * const engine = new BridgeEngine({ extensions: [new GameExtension()] });
 * await engine.call("world/create", { world: "village", state: { gold: 10 } });
 * ```
 */
export class GameExtension implements BridgeExtension {
  /** Shared game state. */
  readonly game: GameContext = new GameContext();
  /** Notifications the game methods send. */
  readonly notificationMethods: readonly string[] = ["npc/event", "world/changed"];
  readonly #sets: GameMethodSet[] = [
    new WorldMethods(),
    new NpcMethods(),
    new DecisionMethods(),
    new ContentMethods(),
  ];

  /** Registers every game method. */
  register(registry: MethodRegistry): void {
    for (const set of this.#sets) set.register(registry, this.game);
  }

  /**
   * Shares a world the host already owns under `id`, so NPCs and `world/*` requests use it.
   * Throws -32602 for a bad id, -32053 when the id is in use and -32055 past the world limit.
   */
  addWorld(world: WorldState, id: string): void {
    checkObjectId(id, "world");
    if (this.game.worlds.has(id)) throw existsError({ kind: WORLD_KIND, id });
    if (this.game.worlds.size >= MAX_WORLDS) throw limitReachedError(MAX_WORLDS, "worlds");
    this.game.worlds.set(id, { id, world, createdAt: new Date().toISOString(), npcCount: 0 });
  }

  /** Cancels NPC work and removes NPCs, worlds and subscriptions. */
  async shutdown(): Promise<void> {
    for (const set of this.#sets) await set.shutdown?.();
    this.game.worlds.clear();
  }
}
