/**
 * The keys the bridge reads in an NPC's `persona`, `options` and `memory` (spec §6 `npc/create`), for the
 * client's own checks of what a persona file holds. The same lists as the engine's (a test keeps them so),
 * without loading the engine.
 *
 * @example
 * ```ts
 * import { PERSONA_FIELDS } from "./npc_keys.ts";
 * PERSONA_FIELDS.includes("personality"); // true
 * ```
 * @module
 */
import { nearestName } from "../util/edit_distance.ts";

/** The fields of a persona. */
export const PERSONA_FIELDS: readonly string[] = [
  "name",
  "role",
  "personality",
  "speakingStyle",
  "backstory",
  "goals",
  "knowledge",
  "secrets",
  "defaultEmotion",
  "maxSentences",
];

/** The NPC options. */
export const NPC_OPTION_KEYS: readonly string[] = [
  "replyFormat",
  "groundingTool",
  "toolChoice",
  "maxToolRounds",
  "maxToolCalls",
  "toolTimeoutSeconds",
  "worldReadable",
  "worldWritable",
  "worldContextPaths",
  "memoryTools",
  "maxFacts",
  "maxRelationshipChange",
  "secretsUnlockAtRelationship",
  "emotions",
  "playerOptionCount",
  "canEndConversation",
  "extraInstructions",
  "compactAfterTurns",
  "keepRecentTurns",
  "fallbackOnGuardrail",
  "fallbackLines",
  "temperature",
  "maximumResponseTokens",
  "barkMaximumTokens",
];

/** The fields of an NPC's memory. */
export const MEMORY_FIELDS: readonly string[] = ["facts", "relationship", "summary"];

/** The keys the bridge reads in each section of an NPC file that holds named fields. */
const SECTION_KEYS: Record<"persona" | "options" | "memory", readonly string[]> = {
  persona: PERSONA_FIELDS,
  options: NPC_OPTION_KEYS,
  memory: MEMORY_FIELDS,
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
    warnings.push(`unknown key '${name}.${key}' was ignored${meant ? ` (did you mean '${meant}'?)` : ""}.`);
  }
  return { known, warnings };
}
