/**
 * The bridge's defaults of a persona's fields and an NPC's options, as a saved state (`npc/state`) writes
 * them out, and a persona or options object without them: a restored NPC's settings (every key spelled out)
 * compare with the editor's (only the keys the designer wrote), and the restored ones go into the editor as a
 * designer writes them. Pure data and functions: no DOM; the defaults are the bridge's own
 * (src/protocol/npc_defaults.ts), which the bridge parses with.
 * @module
 */
import { isJsonObject, type JsonObject, type JsonValue } from "../../../protocol/json.ts";
import {
  OPTION_DEFAULTS as BRIDGE_OPTION_DEFAULTS,
  PERSONA_DEFAULTS as BRIDGE_PERSONA_DEFAULTS,
} from "../../../protocol/npc_defaults.ts";

/** The persona fields' defaults (`name` has none): the bridge's, as a saved state writes them. */
export const PERSONA_DEFAULTS: JsonObject = JSON.parse(JSON.stringify(BRIDGE_PERSONA_DEFAULTS));

/** The NPC options' defaults (`toolTimeoutSeconds`: the bridge's default, 120): the bridge's. */
export const OPTION_DEFAULTS: JsonObject = JSON.parse(JSON.stringify(BRIDGE_OPTION_DEFAULTS));

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
