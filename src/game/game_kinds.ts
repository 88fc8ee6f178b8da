/**
 * The kinds of client-named game objects, as their errors name them (`npc_not_found`, `world_exists`, …).
 * @module
 */
import type { BridgeError } from "../protocol/errors.ts";
import { notFoundError, type ObjectKind } from "../util/object_ids.ts";

/** NPCs (`npc/*`). */
export const NPC_KIND: ObjectKind = { key: "npc", noun: "NPC", article: "An" };
/** Worlds (`world/*`). */
export const WORLD_KIND: ObjectKind = { key: "world", noun: "world", article: "A" };

/**
 * `-32050 npc_not_found` for `id`, naming the NPCs whose persona's name it is: a script that passed the name
 * (`"Bram"`) where the id (`"bram"`) goes is told the id. `names` yields each NPC's id and persona name.
 *
 * @example
 * ```ts
 * import { npcNotFound } from "./game_kinds.ts";
 * npcNotFound("Bram", [["bram", "Bram"]]).message;
 * // "No NPC with id 'Bram'. NPC 'bram' is named Bram: pass its id ('bram') or its handle (…)."
 * npcNotFound("Mira", [["bram", "Bram"]]).message; // "No NPC with id 'Mira'."
 * ```
 */
export function npcNotFound(id: string, names: Iterable<[id: string, name: string]>): BridgeError {
  const error = notFoundError(NPC_KIND, id);
  const wanted = id.trim().toLowerCase();
  const named: string[] = [];
  for (const [other, name] of names) {
    if (name.trim().toLowerCase() === wanted && named.length < 3) named.push(other);
  }
  if (named.length === 0) return error;
  const ids = named.map((n) => `'${n}'`);
  const which = named.length === 1
    ? `NPC ${ids[0]} is named ${id}: pass its id (${ids[0]}) or its handle`
    : `NPCs ${ids.join(", ")} are named ${id}: pass one's id or handle`;
  error.message = `${error.message} ${which} (an NPC's id is not its persona's name).`;
  return error;
}
