/**
 * The memory tools `remember_fact` and `change_relationship`: local tools that write into the turn's
 * {@link MemoryStage}, committed only when the turn succeeds.
 * @module
 */
import type { JsonObject } from "../../protocol/json.ts";
import { convertSchema, toolArgumentsTypeName } from "../../schema/mod.ts";
import type { AgentTool, ToolOutcome } from "../../agent/types.ts";
import type { MemoryToolName } from "./npc_options.ts";
import { attitude, clampRelationship, factKey, type MemoryStage, type NpcMemory } from "./npc_memory.ts";

/** Tool name of `rememberFact`. */
export const REMEMBER_FACT_TOOL = "remember_fact";
/** Tool name of `changeRelationship`. */
export const CHANGE_RELATIONSHIP_TOOL = "change_relationship";

/** What the memory tools read and write. */
export interface MemoryToolHost {
  /** The committed memory. */
  memory(): NpcMemory;
  /** The stage of the running turn, or null outside a turn. */
  stage(): MemoryStage | null;
}

function localTool(
  name: string,
  description: string,
  jsonSchema: JsonObject,
  run: (args: JsonObject) => ToolOutcome,
): AgentTool {
  return {
    name,
    description,
    jsonSchema,
    generationSchema: convertSchema(jsonSchema, toolArgumentsTypeName(name)).generationSchema,
    execution: "local",
    timeoutMs: null,
    run: (args) => run(args),
  };
}

const NO_TURN: ToolOutcome = { output: "Memory can only change during a conversation turn.", isError: true };

/** `remember_fact(fact)`. */
export function rememberFactTool(host: MemoryToolHost): AgentTool {
  return localTool(
    REMEMBER_FACT_TOOL,
    "Store an important fact about the player or the world so you remember it in later conversations.",
    {
      type: "object",
      properties: {
        fact: { type: "string", description: "One short fact, for example 'The player's name is Aria.'" },
      },
      required: ["fact"],
    },
    (args) => {
      const stage = host.stage();
      if (!stage) return NO_TURN;
      const fact = typeof args.fact === "string" ? args.fact.trim() : "";
      if (fact === "") return { output: "The fact is empty.", isError: true };
      const key = factKey(fact);
      const known = [...host.memory().facts, ...stage.facts].some((f) => factKey(f) === key);
      if (known) return { output: "You already know that.", isError: false };
      stage.facts.push(fact);
      return { output: "Remembered.", isError: false };
    },
  );
}

/** `change_relationship(reason, delta)` with `delta` limited to ±max(1, `maxChange`). */
export function changeRelationshipTool(host: MemoryToolHost, maxChange: number): AgentTool {
  const limit = Math.max(1, maxChange);
  return localTool(
    CHANGE_RELATIONSHIP_TOOL,
    "Change how much you like the player, when they clearly please or offend you.",
    {
      type: "object",
      properties: {
        reason: { type: "string", description: "Why your feelings changed, in a few words." },
        delta: {
          type: "integer",
          minimum: -limit,
          maximum: limit,
          description: "Negative when the player upset you, positive when they pleased you.",
        },
      },
      required: ["reason", "delta"],
    },
    (args) => {
      const stage = host.stage();
      if (!stage) return NO_TURN;
      const raw = typeof args.delta === "number"
        ? args.delta
        : typeof args.delta === "string"
        ? Number(args.delta)
        : NaN;
      if (!Number.isFinite(raw)) return { output: "The delta must be a whole number.", isError: true };
      const delta = Math.max(-limit, Math.min(limit, Math.round(raw)));
      const base = host.memory().relationship;
      const next = clampRelationship(base + stage.delta + delta);
      stage.delta = next - base;
      return { output: `You now feel ${attitude(next)} toward the player (${next}).`, isError: false };
    },
  );
}

/** The enabled memory tools, in canonical order. */
export function memoryTools(
  names: readonly MemoryToolName[],
  options: { host: MemoryToolHost; maxChange: number },
): AgentTool[] {
  const { host, maxChange } = options;
  const tools: AgentTool[] = [];
  if (names.includes("rememberFact")) tools.push(rememberFactTool(host));
  if (names.includes("changeRelationship")) tools.push(changeRelationshipTool(host, maxChange));
  return tools;
}
