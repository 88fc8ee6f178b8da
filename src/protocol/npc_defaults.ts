/**
 * The defaults and bounds of an NPC's persona fields, options and memory (PROTOCOL.md §6 `npc/create`), in the
 * JSON form a saved state (`npc/state`) writes them, in a leaf module: the bridge parses with them, and the
 * playground page (which does not bundle the NPC engine) checks and fills its form with the same values.
 *
 * @example
 * ```ts
 * import { OPTION_DEFAULTS, PERSONA_BOUNDS } from "./npc_defaults.ts";
 * OPTION_DEFAULTS.maxToolCalls; // 6
 * PERSONA_BOUNDS.maxSentences.max; // 1000
 * ```
 * @module
 */

/** A whole number's bounds (each inclusive). */
export interface Bounds {
  /** The lowest value taken. */
  readonly min: number;
  /** The highest value taken. */
  readonly max: number;
}

/** Seconds a duration param (`toolTimeoutSeconds`, a tool's `timeoutSeconds`) takes at most. */
export const MAX_DURATION_SECONDS = 86400;

/** Seconds the game has to answer a `tool/call` when neither the tool nor the NPC says (`DEFAULTS`). */
export const DEFAULT_TOOL_TIMEOUT_SECONDS = 120;

/** The persona fields' defaults (`name` has none). */
export const PERSONA_DEFAULTS = {
  role: "",
  personality: "",
  speakingStyle: "",
  backstory: "",
  goals: [] as readonly string[],
  knowledge: [] as readonly string[],
  secrets: [] as readonly string[],
  defaultEmotion: "neutral",
  maxSentences: 2,
} as const;

/** The bounds of the persona's numbers. */
export const PERSONA_BOUNDS: { readonly maxSentences: Bounds } = { maxSentences: { min: 1, max: 1000 } };

/** The NPC options' defaults, as `npc/state` writes them (`toolTimeoutSeconds`: the bridge's default). */
export const OPTION_DEFAULTS = {
  replyFormat: "automatic",
  groundingTool: null,
  toolChoice: "explicit",
  maxToolRounds: 2,
  maxToolCalls: 6,
  toolTimeoutSeconds: DEFAULT_TOOL_TIMEOUT_SECONDS,
  worldReadable: [""] as readonly string[],
  worldWritable: [] as readonly string[],
  worldContextPaths: [] as readonly string[],
  memoryTools: [] as readonly never[],
  maxFacts: 12,
  maxRelationshipChange: 10,
  secretsUnlockAtRelationship: 50,
  emotions: [] as readonly never[],
  playerOptionCount: 3,
  canEndConversation: true,
  extraInstructions: null,
  compactAfterTurns: 8,
  keepRecentTurns: 2,
  fallbackOnGuardrail: true,
  fallbackLines: [] as readonly string[],
  temperature: null,
  maximumResponseTokens: null,
  barkMaximumTokens: 48,
} as const;

/** The bounds of the options' numbers that have an upper one. */
export const OPTION_BOUNDS: {
  readonly maxRelationshipChange: Bounds;
  readonly playerOptionCount: Bounds;
  readonly toolTimeoutSeconds: Bounds;
} = {
  maxRelationshipChange: { min: 0, max: 200 },
  playerOptionCount: { min: 0, max: 4 },
  toolTimeoutSeconds: { min: 0, max: MAX_DURATION_SECONDS },
};

/** The bounds of the relationship (memory's `relationship`). */
export const RELATIONSHIP_BOUNDS: Bounds = { min: -100, max: 100 };
