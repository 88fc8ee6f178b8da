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
