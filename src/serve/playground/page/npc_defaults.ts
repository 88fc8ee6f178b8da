/**
 * The bridge's defaults of a persona's fields and an NPC's options, as a saved state (`npc/state`) writes
 * them out, and a persona or options object without them: a restored NPC's settings (every key spelled out)
 * compare with the editor's (only the keys the designer wrote), and the restored ones go into the editor as a
 * designer writes them. Pure data and functions: no DOM; a test holds them to the bridge's own.
 * @module
 */
import { isJsonObject, type JsonObject, type JsonValue } from "../../../protocol/json.ts";

/** The persona fields' defaults (`name` has none). */
export const PERSONA_DEFAULTS: JsonObject = {
  role: "",
  personality: "",
  speakingStyle: "",
  backstory: "",
  goals: [],
  knowledge: [],
  secrets: [],
  defaultEmotion: "neutral",
  maxSentences: 2,
};

/** The NPC options' defaults (`toolTimeoutSeconds`: the bridge's default, 120). */
export const OPTION_DEFAULTS: JsonObject = {
  replyFormat: "automatic",
  groundingTool: null,
  toolChoice: "explicit",
  maxToolRounds: 2,
  maxToolCalls: 6,
  toolTimeoutSeconds: 120,
  worldReadable: [""],
  worldWritable: [],
  worldContextPaths: [],
  memoryTools: [],
  maxFacts: 12,
  maxRelationshipChange: 10,
  secretsUnlockAtRelationship: 50,
  emotions: [],
  playerOptionCount: 3,
  canEndConversation: true,
  extraInstructions: null,
  compactAfterTurns: 8,
  keepRecentTurns: 2,
  fallbackOnGuardrail: true,
  fallbackLines: [],
  temperature: null,
  maximumResponseTokens: null,
  barkMaximumTokens: 48,
};

const MEMORY_TOOLS = ["rememberFact", "changeRelationship"];

/** `memoryTools` as the bridge saves it: `"all"`, `"none"`, 0–3 and lists become the ordered list. */
function memoryTools(value: JsonValue): JsonValue {
  if (value === "all") return [...MEMORY_TOOLS];
  if (value === "none") return [];
  if (typeof value === "number" && Number.isInteger(value) && value >= 0 && value <= 3) {
    return MEMORY_TOOLS.filter((_, i) => (value & (1 << i)) !== 0);
  }
  if (Array.isArray(value)) return MEMORY_TOOLS.filter((t) => value.includes(t));
  return value;
}

/**
 * `value` (a persona or an options object) without the keys whose value is the default in `defaults` (or
 * null, which takes the default); strings trimmed and `memoryTools` spelled as the bridge saves them.
 *
 * @example
 * ```ts ignore
 * withoutDefaults({ name: "Mira", role: "", maxSentences: 2 }, PERSONA_DEFAULTS); // { name: "Mira" }
 * ```
 */
export function withoutDefaults(value: JsonValue | undefined, defaults: JsonObject): JsonObject {
  if (!isJsonObject(value)) return {};
  const out: JsonObject = {};
  for (const [key, raw] of Object.entries(value)) {
    let v = typeof raw === "string" && key !== "extraInstructions" ? raw.trim() : raw;
    if (key === "memoryTools" && defaults === OPTION_DEFAULTS) v = memoryTools(v);
    // (An explicit null secretsUnlockAtRelationship is the guarded mode, not the default.)
    const isDefault = Object.hasOwn(defaults, key) &&
      ((v === null && key !== "secretsUnlockAtRelationship") ||
        JSON.stringify(v) === JSON.stringify(defaults[key]));
    if (!isDefault) out[key] = v;
  }
  return out;
}
