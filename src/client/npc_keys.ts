/**
 * The client's check of the keys of an NPC file's `persona`, `options` and `memory` against the lists the
 * bridge reads (`src/game/npc/keys.ts`, a leaf module: the NPC engine is not loaded).
 *
 * @example
 * ```ts
 * import { withKnownKeys } from "./npc_keys.ts";
 * withKnownKeys("options", { maxFact: 3 }).warnings.length; // 1
 * ```
 * @module
 */
import { didYouMean, nearestName } from "../protocol/edit_distance.ts";
import { MEMORY_KEYS, OPTION_KEYS, PERSONA_KEYS } from "../game/npc/keys.ts";

/** The keys the bridge reads in each section of an NPC file that holds named fields. */
const SECTION_KEYS: Record<"persona" | "options" | "memory", readonly string[]> = {
  persona: PERSONA_KEYS,
  options: OPTION_KEYS,
  memory: MEMORY_KEYS,
};

/**
 * `section` (an NPC file's `persona`, `options` or `memory`) without the keys the bridge does not read, and a
 * warning for each, with the key it most likely meant. A persona file's reader leaves them out and says so
 * with the file's name, so the bridge does not warn about them again with neither the file nor the hint.
 *
 * @example
 * ```ts
 * import { withKnownKeys } from "./npc_keys.ts";
 * withKnownKeys("persona", { name: "Gorm", personalty: "Gruff." });
 * // { known: { name: "Gorm" }, warnings: ["unknown key 'persona.personalty' was ignored (did you mean 'personality'?)."] }
 * ```
 */
export function withKnownKeys(
  name: keyof typeof SECTION_KEYS,
  section: object,
): { known: Record<string, unknown>; warnings: string[] } {
  const keys = SECTION_KEYS[name];
  const known: Record<string, unknown> = {};
  const warnings: string[] = [];
  for (const [key, value] of Object.entries(section)) {
    if (keys.includes(key)) {
      known[key] = value;
      continue;
    }
    const meant = nearestName(key, keys);
    warnings.push(`unknown key '${name}.${key}' was ignored${didYouMean(meant)}.`);
  }
  return { known, warnings };
}
