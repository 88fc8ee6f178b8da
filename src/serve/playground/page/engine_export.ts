/**
 * What the playground's "Export for engine" downloads: the `world/create` and `npc/create` params an engine
 * sends for the NPC in the editor.
 * @module
 */
import { isJsonObject, type JsonObject, type JsonValue } from "../../../protocol/json.ts";

/**
 * The `world` id the page uses for an NPC (`npc`: the document's id).
 *
 * @example
 * ```ts
 * worldIdFor("mira"); // "mira-world"
 * ```
 */
export function worldIdFor(npc: JsonValue | undefined): string {
  return `${typeof npc === "string" && npc !== "" ? npc : "npc"}-world`;
}

/**
 * The params an engine sends for the persona document `value`: `world/create` when it has a world, then
 * `npc/create` (from `npcParams`, given the world's id when there is one).
 *
 * @example
 * ```ts
 * const npcParams = (world: string | undefined) => ({ persona: { name: "Mira" }, world: world ?? null });
 * engineExport({ npc: "mira", world: { gold: 2 } }, npcParams);
 * // { "world/create": { world: "mira-world", state: { gold: 2 } },
 * //   "npc/create": { persona: { name: "Mira" }, world: "mira-world" } }
 * ```
 */
export function engineExport(
  value: JsonObject,
  npcParams: (world: string | undefined) => JsonObject,
): JsonObject {
  const params: JsonObject = {};
  let world: string | undefined;
  if (isJsonObject(value.world)) {
    world = worldIdFor(value.npc);
    params["world/create"] = { world, state: value.world };
  }
  params["npc/create"] = npcParams(world);
  return params;
}
