/**
 * The kinds of client-named game objects, as their errors name them (`npc_not_found`, `world_exists`, …).
 * @module
 */
import type { ObjectKind } from "../util/object_ids.ts";

/** NPCs (`npc/*`). */
export const NPC_KIND: ObjectKind = { key: "npc", noun: "NPC", article: "An" };
/** Worlds (`world/*`). */
export const WORLD_KIND: ObjectKind = { key: "world", noun: "world", article: "A" };
