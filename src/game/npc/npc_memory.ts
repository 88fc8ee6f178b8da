/**
 * An NPC's memory (§6 `memory`): facts, relationship and a summary of older turns; its JSON form and the
 * per-turn stage that memory tools write into. (The model learns the memory from the turns' prompts, see
 * npc_context.ts.)
 * @module
 */
import type { JsonObject } from "../../protocol/json.ts";
import { Params } from "../../protocol/params.ts";
import type { Parsed } from "./persona.ts";
import { MEMORY_KEYS } from "./keys.ts";
import { RELATIONSHIP_BOUNDS } from "../../protocol/npc_defaults.ts";

export { MEMORY_KEYS };

/** Lowest relationship. */
export const RELATIONSHIP_MIN: number = RELATIONSHIP_BOUNDS.min;
/** Highest relationship. */
export const RELATIONSHIP_MAX: number = RELATIONSHIP_BOUNDS.max;

/** What the NPC remembers. */
export interface NpcMemory {
  /** Remembered facts, oldest first. */
  facts: string[];
  /** Attitude toward the player, -100…100. */
  relationship: number;
  /** Summary of compacted turns, or null. */
  summary: string | null;
}

export function emptyMemory(): NpcMemory {
  return { facts: [], relationship: 0, summary: null };
}

/** Parses `memory` at `path` (absent → empty). */
export function parseMemory(value: JsonObject | undefined, path: string): Parsed<NpcMemory> {
  if (value === undefined) return { value: emptyMemory(), warnings: [] };
  const p = new Params(value, `${path}.`);
  const warnings = p.unknownKeys(MEMORY_KEYS);
  const facts = (p.optionalStringArray("facts") ?? []).map((f) => f.trim()).filter((f) => f !== "");
  const relationship = p.optionalNumber("relationship", { min: RELATIONSHIP_MIN, max: RELATIONSHIP_MAX }) ??
    0;
  const summary = p.optionalString("summary")?.trim() ?? "";
  return {
    value: { facts, relationship: Math.round(relationship), summary: summary === "" ? null : summary },
    warnings,
  };
}

/** `{facts, relationship, summary?}`. */
export function memoryJson(memory: NpcMemory): JsonObject {
  const out: JsonObject = { facts: [...memory.facts], relationship: memory.relationship };
  if (memory.summary !== null) out.summary = memory.summary;
  return out;
}

/** A word for a relationship value. */
export function attitude(relationship: number): string {
  if (relationship < -60) return "hostile";
  if (relationship < -20) return "unfriendly";
  if (relationship <= 20) return "neutral";
  if (relationship <= 60) return "friendly";
  return "trusting";
}

/** Clamps to -100…100 (NaN → 0). */
export function clampRelationship(value: number): number {
  if (Number.isNaN(value)) return 0;
  return Math.max(RELATIONSHIP_MIN, Math.min(RELATIONSHIP_MAX, Math.round(value)));
}

/** A fact reduced for duplicate checks: lower case, letters and digits only, single spaces. */
export function factKey(fact: string): string {
  return fact.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, " ").trim();
}

/** Memory changes made during one turn; committed only when the turn succeeds. */
export class MemoryStage {
  /** Facts to add, in order. */
  readonly facts: string[] = [];
  /** Relationship change so far. */
  delta = 0;

  /** True when nothing was staged. */
  get empty(): boolean {
    return this.facts.length === 0 && this.delta === 0;
  }
}

/** The memory after committing `change.stage`: facts appended and trimmed to `change.maxFacts`, relationship clamped. */
export function applyStage(memory: NpcMemory, change: { stage: MemoryStage; maxFacts: number }): NpcMemory {
  const { stage, maxFacts } = change;
  let facts = [...memory.facts, ...stage.facts];
  if (facts.length > maxFacts) facts = facts.slice(facts.length - maxFacts);
  return {
    facts,
    relationship: clampRelationship(memory.relationship + stage.delta),
    summary: memory.summary,
  };
}
