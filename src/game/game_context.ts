/**
 * State shared by the game method sets: the worlds (with their subscriptions) and a lookup of NPC personas
 * for decisions.
 * @module
 */
import type { BridgeError } from "../protocol/errors.ts";
import type { JsonObject } from "../protocol/json.ts";
import { notFoundError } from "../util/object_ids.ts";
import { NPC_KIND } from "./game_kinds.ts";
import type { WorldState } from "./world/mod.ts";

/**
 * A world registered on the bridge.
 *
 * @example
 * ```ts
 * import { GameExtension, WorldState } from "@open-apple-models/bridge/engine";
 * const game = new GameExtension();
 * game.addWorld(new WorldState({ gold: 10 }), "village");
 * game.game.worlds.get("village")?.npcCount; // 0
 * ```
 */
export interface WorldEntry {
  /** World id. */
  id: string;
  /** The blackboard. */
  world: WorldState;
  /** ISO 8601 creation time. */
  createdAt: string;
  /** NPCs created with this world. */
  npcCount: number;
}

/**
 * Shared game state: what the game method sets share (a {@link GameExtension}'s `game`).
 *
 * @example
 * ```ts
 * import { BridgeEngine, GameExtension } from "@open-apple-models/bridge/engine";
 * const game = new GameExtension();
 * const engine = new BridgeEngine({ extensions: [game] });
 * await engine.call("world/create", { world: "village", state: { gold: 10 } });
 * game.game.worlds.get("village")?.world.get("gold").value; // 10
 * ```
 */
export class GameContext {
  /** Worlds by id, in creation order. */
  readonly worlds: Map<string, WorldEntry> = new Map();
  /** Looks up an NPC's persona JSON (for `decision/decide` with an NPC `actor`); set by the NPC methods. */
  npcPersona: (id: string) => JsonObject | undefined = () => undefined;
  /**
   * The `-32050 npc_not_found` of an id no NPC has; set by the NPC methods, which add the id of an NPC whose
   * persona is named so (`actor: "Bram"` where NPC `bram` is named Bram).
   */
  npcNotFound: (id: string) => BridgeError = (id) => notFoundError(NPC_KIND, id);
}
