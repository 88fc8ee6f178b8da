/**
 * State shared by the game method sets: the worlds (with their subscriptions) and a lookup of NPC personas
 * for decisions.
 * @module
 */
import type { JsonObject } from "../protocol/json.ts";
import type { WorldState } from "./world/mod.ts";

/** A world registered on the bridge. */
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

/** Shared game state. */
export class GameContext {
  /** Worlds by id, in creation order. */
  readonly worlds: Map<string, WorldEntry> = new Map();
  /** Looks up an NPC's persona JSON (for `decision/decide` with an NPC `actor`); set by the NPC methods. */
  npcPersona: (id: string) => JsonObject | undefined = () => undefined;
}
