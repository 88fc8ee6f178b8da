/**
 * The keys the bridge reads in an NPC's `persona`, `options` and `memory` (§6 `npc/create`), each list in the
 * order of its JSON form. A leaf module (no imports): the typed client checks persona files against the same
 * lists without loading the NPC engine.
 *
 * @example
 * ```ts
 * import { PERSONA_KEYS } from "./keys.ts";
 * PERSONA_KEYS.includes("personality"); // true
 * ```
 * @module
 */

/** Persona fields, in the order of their JSON form. */
export const PERSONA_KEYS = [
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
] as const;

/** Option keys, in the order of their JSON form. */
export const OPTION_KEYS = [
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
] as const;

/** Memory keys, in the order of their JSON form. */
export const MEMORY_KEYS = ["facts", "relationship", "summary"] as const;
