/**
 * An NPC's persona (§6 `persona`): parsing from JSON with defaults and warnings, and its JSON form.
 * @module
 */
import { BridgeError } from "../../protocol/errors.ts";
import { isJsonObject, type JsonObject, type JsonValue } from "../../protocol/json.ts";
import { Params, showValue } from "../../protocol/params.ts";
import { type Emotion, parseEmotion } from "./emotions.ts";
import { PERSONA_KEYS } from "./keys.ts";
import { PERSONA_BOUNDS, PERSONA_DEFAULTS } from "../../protocol/npc_defaults.ts";

export { PERSONA_KEYS };

/** Who the NPC is. */
export interface Persona {
  /** Display name (required). */
  name: string;
  /** Role, e.g. "the village blacksmith". */
  role: string;
  /** A sentence or two. */
  personality: string;
  /** A sentence or two. */
  speakingStyle: string;
  /** A sentence or two. */
  backstory: string;
  /** What the NPC wants. */
  goals: string[];
  /** What the NPC knows. */
  knowledge: string[];
  /** Shown to the model only once the relationship unlocks them (or guarded). */
  secrets: string[];
  /** Used when the model gives no usable emotion, and for fallback lines. */
  defaultEmotion: Emotion;
  /** Reply length limit in sentences (the prompt uses at least 1). */
  maxSentences: number;
}

/** The fields every character description starts with: an NPC persona and a decision actor. */
export interface PersonaHead {
  /** The trimmed, non-empty name. */
  name: string;
  /** The trimmed role (`""` when absent). */
  role: string;
  /** The trimmed personality (`""` when absent). */
  personality: string;
  /** Unknown-key warnings ("Unknown parameter '<path>.x' was ignored."). */
  warnings: string[];
}

/**
 * Reads the head of a persona object through `p` (whose prefix is the object's path): keys other than
 * {@link PERSONA_KEYS} become warnings, `name` is required and must not be empty once trimmed, `role` and
 * `personality` are trimmed. Shared by {@link parsePersona} and decision actors.
 */
export function parsePersonaHead(p: Params): PersonaHead {
  const warnings = p.unknownKeys(PERSONA_KEYS);
  const name = p.string("name").trim();
  if (name === "") throw BridgeError.invalidParams(`'${p.name("name")}' must not be empty.`);
  return {
    name,
    role: p.optionalString("role")?.trim() ?? "",
    personality: p.optionalString("personality")?.trim() ?? "",
    warnings,
  };
}

/** A parsed value and the warnings it raised. */
export interface Parsed<T> {
  /** The parsed value. */
  value: T;
  /** Warnings, e.g. unknown keys. */
  warnings: string[];
}

/**
 * Reads an emotion field leniently; an unknown word becomes `neutral` with a warning.
 * `name` is the full parameter name for the warning.
 */
export function parseEmotionParam(value: JsonValue, param: { name: string; warnings: string[] }): Emotion {
  const { name, warnings } = param;
  if (typeof value !== "string") {
    throw BridgeError.invalidParams(`Parameter '${name}' must be a string; got ${showValue(value)}.`);
  }
  const emotion = parseEmotion(value);
  if (emotion !== null) return emotion;
  warnings.push(`'${name}' is not a known emotion ('${value}'); using "neutral".`);
  return "neutral";
}

/**
 * Parses a persona object at `path` (`persona`, `state.persona`). Only `name` is required; `null` members
 * mean the default; unknown keys are warned about ("Unknown parameter 'persona.x' was ignored.").
 */
export function parsePersona(value: JsonValue | undefined, path: string): Parsed<Persona> {
  if (!isJsonObject(value)) {
    throw BridgeError.invalidParams(`'${path}' must be an object with at least a 'name'.`);
  }
  const p = new Params(value, `${path}.`);
  const { name, role, personality, warnings } = parsePersonaHead(p);
  const emotion = p.get("defaultEmotion");
  const persona: Persona = {
    name,
    role,
    personality,
    speakingStyle: p.optionalString("speakingStyle")?.trim() ?? "",
    backstory: p.optionalString("backstory")?.trim() ?? "",
    goals: p.optionalStringArray("goals") ?? [],
    knowledge: p.optionalStringArray("knowledge") ?? [],
    secrets: p.optionalStringArray("secrets") ?? [],
    defaultEmotion: emotion === undefined
      ? "neutral"
      : parseEmotionParam(emotion, { name: p.name("defaultEmotion"), warnings }),
    maxSentences: p.optionalInteger("maxSentences", PERSONA_BOUNDS.maxSentences) ??
      PERSONA_DEFAULTS.maxSentences,
  };
  return { value: persona, warnings };
}

/** The persona's JSON form (every field, in {@link PERSONA_KEYS} order). */
export function personaJson(persona: Persona): JsonObject {
  return {
    name: persona.name,
    role: persona.role,
    personality: persona.personality,
    speakingStyle: persona.speakingStyle,
    backstory: persona.backstory,
    goals: [...persona.goals],
    knowledge: [...persona.knowledge],
    secrets: [...persona.secrets],
    defaultEmotion: persona.defaultEmotion,
    maxSentences: persona.maxSentences,
  };
}
