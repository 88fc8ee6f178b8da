/**
 * The `actor` of a decision: who decides. Either a persona object sent with the request or the persona of an
 * existing NPC (looked up by id). Only the parts that shape a decision are kept: name, role, personality
 * and goals.
 * @module
 */
import { BridgeError } from "../../protocol/errors.ts";
import { isJsonObject, type JsonObject, type JsonValue } from "../../protocol/json.ts";
import { Params, showValue } from "../../protocol/params.ts";
import { notFoundError } from "../../util/object_ids.ts";
import { NPC_KIND } from "../game_kinds.ts";
import { parsePersonaHead } from "../npc/persona.ts";
import { listSentence, sentence } from "../npc/prose.ts";

/** What a decision needs to know about its actor. */
export interface Actor {
  /** The character's name. */
  name: string;
  /** Who the character is (`""` when unknown). */
  role: string;
  /** A sentence or two about the character (`""` when unknown). */
  personality: string;
  /** What the character wants. */
  goals: string[];
}

/** A parsed actor and the warnings its object raised. */
export interface ParsedActor {
  actor: Actor;
  /** Unknown-key warnings of the persona object. */
  warnings: string[];
}

/**
 * Parses the `actor` param at `p.name("actor")`: an NPC id (resolved with `npcPersona`; unknown →
 * `-32050 npc_not_found`) or a persona object (`name` required; read like an NPC persona's head, see
 * {@link parsePersonaHead}; keys other than the NPC persona fields are warned about).
 */
export function parseActor(
  p: Params,
  npcs: {
    persona: (id: string) => JsonObject | undefined;
    /** The error of an id no NPC has (default: `No NPC with id '…'.`). */
    notFound?: (id: string) => BridgeError;
  },
): ParsedActor | null {
  const value = p.get("actor");
  if (value === undefined) return null;
  if (typeof value === "string") {
    const persona = npcs.persona(value);
    if (persona === undefined) {
      throw npcs.notFound?.(value) ?? notFoundError(NPC_KIND, value);
    }
    return { actor: actorFromPersona(persona, value), warnings: [] };
  }
  if (!isJsonObject(value)) {
    throw BridgeError.invalidParams(
      `'${p.name("actor")}' must be a persona object or an NPC id; got ${showValue(value)}.`,
    );
  }
  const a = new Params(value, `${p.name("actor")}.`);
  const { name, role, personality, warnings } = parsePersonaHead(a);
  const actor: Actor = { name, role, personality, goals: a.optionalStringArray("goals") ?? [] };
  return { actor, warnings };
}

/** The actor of an NPC's persona JSON (lenient: fields of the wrong type are skipped). */
export function actorFromPersona(persona: JsonObject, fallbackName: string): Actor {
  const text = (key: string): string => {
    const v: JsonValue | undefined = Object.hasOwn(persona, key) ? persona[key] : undefined;
    return typeof v === "string" ? v.trim() : "";
  };
  const rawGoals = Object.hasOwn(persona, "goals") ? persona.goals : undefined;
  const goals = Array.isArray(rawGoals) ? rawGoals.filter((g): g is string => typeof g === "string") : [];
  return { name: text("name") || fallbackName, role: text("role"), personality: text("personality"), goals };
}

/**
 * The lines that tell the model whose decision it is:
 * "You decide for <name>, <role>.", "Personality: …", "Goals: a; b."
 */
export function actorLines(actor: Actor): string[] {
  const lines = [
    sentence(
      actor.role === "" ? `You decide for ${actor.name}` : `You decide for ${actor.name}, ${actor.role}`,
    ),
  ];
  if (actor.personality !== "") lines.push(`Personality: ${sentence(actor.personality)}`);
  const goals = listSentence(actor.goals);
  if (goals !== "") lines.push(`Goals: ${goals}`);
  return lines;
}
