/**
 * NPC options (§6 `npc/create` `options`): every option with its default, validation with the protocol's
 * messages, unknown-key warnings, and the JSON form saved by `npc/state` and patched by `npc/update`.
 * @module
 */
import { BridgeError } from "../../protocol/errors.ts";
import { compactJson, type JsonObject, type JsonValue } from "../../protocol/json.ts";
import { Params } from "../../protocol/params.ts";
import { didYouMean, nearestName } from "../../protocol/edit_distance.ts";
import type { ToolChoice } from "../../agent/types.ts";
import { parseToolChoice, toolChoiceJson } from "../../agent/tool_definitions.ts";
import { parseWorldPath, WorldError, type WorldState } from "../world/mod.ts";
import { missingPathWarning } from "../world/missing_path.ts";
import type { Emotion } from "./emotions.ts";
import { type Parsed, parseEmotionParam } from "./persona.ts";
import { OPTION_KEYS } from "./keys.ts";
import { OPTION_BOUNDS, OPTION_DEFAULTS } from "../../protocol/npc_defaults.ts";

export { OPTION_KEYS };

/** How the NPC's reply is generated (see the `replyFormat` trade-off in §6). */
export type ReplyFormat = "automatic" | "structured" | "text";

/** A memory tool, by its option name. */
export type MemoryToolName = "rememberFact" | "changeRelationship";

/** Every NPC option. */
export interface NpcOptions {
  /** Structured, text, or structured with a text retry. */
  replyFormat: ReplyFormat;
  /** A tool forced on the first step of every turn, or null. */
  groundingTool: string | null;
  /** Default tool choice when there is no grounding tool. */
  toolChoice: ToolChoice;
  /** Model steps per turn that may call tools. */
  maxToolRounds: number;
  /** Tool calls per turn. */
  maxToolCalls: number;
  /** Client tool timeout in ms; null waits forever. */
  toolTimeoutMs: number | null;
  /** Paths `read_world_state` may read (`""` = everything, `[]` = no read tool). */
  worldReadable: string[];
  /** Paths `update_world_state` may change (`[]` = no write tool). */
  worldWritable: string[];
  /** Paths summarized into every prompt. */
  worldContextPaths: string[];
  /** Enabled memory tools, in canonical order. */
  memoryTools: MemoryToolName[];
  /** Most facts kept (oldest dropped). */
  maxFacts: number;
  /** Largest relationship change per `change_relationship` call. */
  maxRelationshipChange: number;
  /** Relationship from which secrets enter the prompt; null always includes them with a guarding rule. */
  secretsUnlockAtRelationship: number | null;
  /** Emotions the model may choose from (empty = all). */
  emotions: Emotion[];
  /** Suggested player replies (0…4, structured replies only). */
  playerOptionCount: number;
  /** Whether the reply may end the conversation. */
  canEndConversation: boolean;
  /** Appended to the instructions. */
  extraInstructions: string | null;
  /** Background summarization after this many turns (0 = never). */
  compactAfterTurns: number;
  /** Turns kept verbatim by compaction. */
  keepRecentTurns: number;
  /** Answer blocked turns with a fallback line instead of an error. */
  fallbackOnGuardrail: boolean;
  /** Rotated fallback lines (defaults when none). */
  fallbackLines: string[];
  /** Sampling temperature, or the model default. */
  temperature: number | null;
  /** Reply token limit, or none. */
  maximumResponseTokens: number | null;
  /** Token limit of barks. */
  barkMaximumTokens: number;
}

/** The options of an NPC created without `options`. */
export function defaultOptions(defaultTimeoutMs: number | null): NpcOptions {
  const { toolTimeoutSeconds: _, ...d } = OPTION_DEFAULTS;
  return {
    ...d,
    toolTimeoutMs: defaultTimeoutMs,
    worldReadable: [...d.worldReadable],
    worldWritable: [...d.worldWritable],
    worldContextPaths: [...d.worldContextPaths],
    memoryTools: [...d.memoryTools],
    emotions: [...d.emotions],
    fallbackLines: [...d.fallbackLines],
  };
}

const MEMORY_LIST_MESSAGE = `must be a list such as ["rememberFact", "changeRelationship"], "all" or "none".`;

function memoryToolName(item: JsonValue, name: string): MemoryToolName {
  if (item === "rememberFact" || item === "remember_fact") return "rememberFact";
  if (item === "changeRelationship" || item === "change_relationship") return "changeRelationship";
  throw BridgeError.invalidParams(
    `'${name}' contains unknown memory tool ${
      compactJson(item)
    }; known: "rememberFact", "changeRelationship".`,
  );
}

/** Parses `memoryTools`: a list of names (camelCase or tool names), `"all"`, `"none"` or a bit mask (1, 2). */
export function parseMemoryTools(value: JsonValue, name: string): MemoryToolName[] {
  let set: Set<MemoryToolName>;
  if (value === "all") set = new Set(["rememberFact", "changeRelationship"]);
  else if (value === "none") set = new Set();
  else if (typeof value === "number" && Number.isInteger(value) && value >= 0 && value <= 3) {
    set = new Set();
    if (value & 1) set.add("rememberFact");
    if (value & 2) set.add("changeRelationship");
  } else if (Array.isArray(value)) {
    set = new Set(value.map((item) => memoryToolName(item, name)));
  } else {
    throw BridgeError.invalidParams(`'${name}' ${MEMORY_LIST_MESSAGE}`);
  }
  return (["rememberFact", "changeRelationship"] as const).filter((t) => set.has(t));
}

/** The options that name world paths. */
export const WORLD_PATH_KEYS = ["worldReadable", "worldWritable", "worldContextPaths"] as const;

/** An option that names world paths. */
export type WorldPathKey = typeof WORLD_PATH_KEYS[number];

/** What a world path option does with a path once it exists (the end of its missing-path warning). */
const WORLD_PATH_EFFECT: Record<WorldPathKey, string> = {
  worldReadable: "read_world_state can read it once it is created",
  worldWritable: "update_world_state may create it",
  worldContextPaths: "the prompt shows it once it is created",
};

/**
 * A warning for each path of the world path options (`keys`, default all three) that world `world.id` does
 * not hold now: allowed, since the game or the NPC may create it later, but most often a typo
 * (`quests.dragn`). Each names the option entry (`options.worldContextPaths[0]`) and what the world has there.
 */
export function worldPathWarnings(
  o: NpcOptions,
  at: { world: WorldState; id: string; path: string; keys?: readonly WorldPathKey[] },
): string[] {
  const warnings: string[] = [];
  for (const key of at.keys ?? WORLD_PATH_KEYS) {
    o[key].forEach((path, i) => {
      const warning = missingPathWarning(at.world, {
        path,
        id: at.id,
        name: `${at.path}.${key}[${i}]`,
        effect: WORLD_PATH_EFFECT[key],
      });
      if (warning !== null) warnings.push(warning);
    });
  }
  return warnings;
}

function worldPaths(p: Params, key: string, fallback: string[]): string[] {
  const paths = p.optionalStringArray(key);
  if (paths === undefined) return fallback;
  paths.forEach((path, i) => {
    try {
      parseWorldPath(path);
    } catch (error) {
      if (error instanceof WorldError) {
        throw BridgeError.invalidParams(`'${p.name(key)}[${i}]': ${error.message}`);
      }
      throw error;
    }
  });
  return paths;
}

/**
 * Parses `options` at `path` (`options`, `state.options`). Absent keys and `null` members take the
 * defaults, except an explicit `null` `secretsUnlockAtRelationship`, which selects the guarded mode.
 * `defaultTimeoutMs` is the engine's tool timeout (null = none).
 */
export function parseNpcOptions(
  value: JsonObject | undefined,
  param: { path: string; defaultTimeoutMs: number | null },
): Parsed<NpcOptions> {
  const { path, defaultTimeoutMs } = param;
  const o = defaultOptions(defaultTimeoutMs);
  if (value === undefined) return { value: o, warnings: [] };
  const p = new Params(value, `${path}.`);
  const warnings = p.unknownKeys(OPTION_KEYS);
  const format = p.optionalString("replyFormat");
  if (format !== undefined) {
    if (format !== "automatic" && format !== "structured" && format !== "text") {
      const meant = nearestName(format, ["automatic", "structured", "text"]);
      throw BridgeError.invalidParams(
        `'${p.name("replyFormat")}' must be one of "automatic", "structured", "text"; got '${format}'` +
          `${didYouMean(meant)}.`,
      );
    }
    o.replyFormat = format;
  }
  const grounding = p.optionalString("groundingTool");
  if (grounding !== undefined) o.groundingTool = grounding;
  const choice = p.get("toolChoice");
  if (choice !== undefined) o.toolChoice = parseToolChoice(choice, p.name("toolChoice"));
  o.maxToolRounds = p.optionalInteger("maxToolRounds", { min: 0 }) ?? o.maxToolRounds;
  o.maxToolCalls = p.optionalInteger("maxToolCalls", { min: 0 }) ?? o.maxToolCalls;
  const timeout = p.optionalSeconds("toolTimeoutSeconds");
  if (timeout !== undefined) o.toolTimeoutMs = timeout;
  o.worldReadable = worldPaths(p, "worldReadable", o.worldReadable);
  o.worldWritable = worldPaths(p, "worldWritable", o.worldWritable);
  o.worldContextPaths = worldPaths(p, "worldContextPaths", o.worldContextPaths);
  const memoryTools = p.get("memoryTools");
  if (memoryTools !== undefined) o.memoryTools = parseMemoryTools(memoryTools, p.name("memoryTools"));
  o.maxFacts = p.optionalInteger("maxFacts", { min: 0 }) ?? o.maxFacts;
  o.maxRelationshipChange = p.optionalInteger("maxRelationshipChange", OPTION_BOUNDS.maxRelationshipChange) ??
    o.maxRelationshipChange;
  if (p.has("secretsUnlockAtRelationship") && p.raw.secretsUnlockAtRelationship === null) {
    o.secretsUnlockAtRelationship = null;
  } else {
    o.secretsUnlockAtRelationship = p.optionalInteger("secretsUnlockAtRelationship") ??
      o.secretsUnlockAtRelationship;
  }
  const emotions = p.optionalArray("emotions");
  if (emotions !== undefined) {
    const list: Emotion[] = [];
    emotions.forEach((item, i) => {
      const emotion = parseEmotionParam(item, { name: `${p.name("emotions")}[${i}]`, warnings });
      if (!list.includes(emotion)) list.push(emotion);
    });
    o.emotions = list;
  }
  const count = p.optionalInteger("playerOptionCount");
  if (count !== undefined) {
    const { min, max } = OPTION_BOUNDS.playerOptionCount;
    if (count < min || count > max) {
      throw BridgeError.invalidParams(`'${p.name("playerOptionCount")}' must be between ${min} and ${max}.`);
    }
    o.playerOptionCount = count;
  }
  o.canEndConversation = p.optionalBool("canEndConversation") ?? o.canEndConversation;
  const extra = p.optionalString("extraInstructions");
  if (extra !== undefined) o.extraInstructions = extra;
  o.compactAfterTurns = p.optionalInteger("compactAfterTurns", { min: 0 }) ?? o.compactAfterTurns;
  o.keepRecentTurns = p.optionalInteger("keepRecentTurns", { min: 0 }) ?? o.keepRecentTurns;
  o.fallbackOnGuardrail = p.optionalBool("fallbackOnGuardrail") ?? o.fallbackOnGuardrail;
  o.fallbackLines = p.optionalStringArray("fallbackLines") ?? o.fallbackLines;
  o.temperature = p.optionalNumber("temperature", { min: 0 }) ?? o.temperature;
  o.maximumResponseTokens = p.optionalInteger("maximumResponseTokens", { min: 1 }) ?? o.maximumResponseTokens;
  o.barkMaximumTokens = p.optionalInteger("barkMaximumTokens", { min: 1 }) ?? o.barkMaximumTokens;
  return { value: o, warnings };
}

/** The JSON form of every option (saved by `npc/state`; `toolTimeoutSeconds` 0 = no limit). */
export function optionsJson(o: NpcOptions): JsonObject {
  return {
    replyFormat: o.replyFormat,
    groundingTool: o.groundingTool,
    toolChoice: toolChoiceJson(o.toolChoice),
    maxToolRounds: o.maxToolRounds,
    maxToolCalls: o.maxToolCalls,
    toolTimeoutSeconds: o.toolTimeoutMs === null ? 0 : o.toolTimeoutMs / 1000,
    worldReadable: [...o.worldReadable],
    worldWritable: [...o.worldWritable],
    worldContextPaths: [...o.worldContextPaths],
    memoryTools: [...o.memoryTools],
    maxFacts: o.maxFacts,
    maxRelationshipChange: o.maxRelationshipChange,
    secretsUnlockAtRelationship: o.secretsUnlockAtRelationship,
    emotions: [...o.emotions],
    playerOptionCount: o.playerOptionCount,
    canEndConversation: o.canEndConversation,
    extraInstructions: o.extraInstructions,
    compactAfterTurns: o.compactAfterTurns,
    keepRecentTurns: o.keepRecentTurns,
    fallbackOnGuardrail: o.fallbackOnGuardrail,
    fallbackLines: [...o.fallbackLines],
    temperature: o.temperature,
    maximumResponseTokens: o.maximumResponseTokens,
    barkMaximumTokens: o.barkMaximumTokens,
  };
}
