/**
 * Every field of a persona file the playground's form edits: the `Persona` fields, the NPC options and the
 * initial memory of PROTOCOL.md §6, with the spec's defaults, limits and help, and a check of a value that
 * mirrors the bridge's own (the bridge stays the judge: its answer to `npc/create` is shown as well).
 * Pure data and functions: no DOM, so the table is tested against the bridge's key lists.
 * @module
 */
import { EMOTIONS } from "../../../game/npc/emotions.ts";
import type { JsonValue } from "../../../protocol/json.ts";
import { isPrintableId } from "../../../util/ids.ts";
import { OPTION_BOUNDS, PERSONA_BOUNDS, RELATIONSHIP_BOUNDS } from "../../../protocol/npc_defaults.ts";

/** Where a field lives in the persona file (`file`: a top-level key). */
export type Section = "file" | "persona" | "options" | "memory";

/** How a field is edited and checked. */
export type FieldKind =
  | "text" // a string (one line)
  | "longtext" // a string (several lines)
  | "list" // strings, one per line
  | "paths" // world paths, one per line
  | "integer"
  | "number"
  | "seconds" // 0…86400, 0 = no limit
  | "boolean"
  | "choice" // one of `choices`
  | "emotion" // one emotion
  | "emotions" // a subset of the emotions
  | "memoryTools"
  | "toolChoice"
  | "tool" // a tool name
  | "unlock" // an integer, or null for "always, guarded"
  | "id"; // 1–128 printable characters

/** One editable field. */
export interface FieldSpec {
  /** The section it belongs to. */
  section: Section;
  /** Its key in the section. */
  key: string;
  /** Label in the form. */
  label: string;
  /** How it is edited. */
  kind: FieldKind;
  /** The default as the spec states it (shown when the field is empty). */
  defaultText: string;
  /** One line of help from the spec. */
  help: string;
  /** Required (only `persona.name`). */
  required?: boolean;
  /** Lowest allowed number. */
  min?: number;
  /** Highest allowed number. */
  max?: number;
  /** Allowed values of a `choice`. */
  choices?: readonly string[];
}

/** The emotions of the protocol. */
export const EMOTION_NAMES: readonly string[] = EMOTIONS;

/** The memory tools an NPC can be given. */
export const MEMORY_TOOLS = ["rememberFact", "changeRelationship"] as const;

/** Top-level keys of a persona file (`oam npc` and `loadPersona` read the same ones). */
export const FILE_KEYS = ["npc", "persona", "options", "tools", "memory", "world", "greeting"] as const;

/** Keys of a client tool definition (PROTOCOL.md §9). */
export const TOOL_KEYS = ["name", "description", "parameters", "execution", "timeoutSeconds"] as const;

/** Tool names: 1–64 of `A–Z a–z 0–9 _ - .`. */
export const TOOL_NAME = /^[A-Za-z0-9_.-]{1,64}$/;

/** The built-in tools an NPC may get (world and memory tools). */
export const BUILTIN_TOOLS = [
  "read_world_state",
  "update_world_state",
  "remember_fact",
  "change_relationship",
];

const s = (
  section: Section,
  key: string,
  label: string,
  kind: FieldKind,
  defaultText: string,
  help: string,
  extra: Partial<FieldSpec> = {},
): FieldSpec => ({ section, key, label, kind, defaultText, help, ...extra });

/** Every field, in the spec's order within each section. */
export const FIELDS: readonly FieldSpec[] = [
  s(
    "file",
    "npc",
    "NPC id",
    "id",
    "generated (npc1, …)",
    "1–128 printable characters; the id the game uses.",
  ),
  s(
    "file",
    "greeting",
    "Greeting",
    "longtext",
    "none",
    "An opening situation: the default situation of a bark.",
  ),
  s("persona", "name", "Name", "text", "required", "Only required field, e.g. “Gorm”.", { required: true }),
  s("persona", "role", "Role", "text", '""', "e.g. “the village blacksmith”."),
  s("persona", "personality", "Personality", "longtext", '""', "A sentence or two."),
  s("persona", "speakingStyle", "Speaking style", "longtext", '""', "A sentence or two."),
  s("persona", "backstory", "Backstory", "longtext", '""', "A sentence or two."),
  s("persona", "goals", "Goals", "list", "[]", "What the NPC wants; one per line."),
  s("persona", "knowledge", "Knowledge", "list", "[]", "What the NPC knows; one per line."),
  s(
    "persona",
    "secrets",
    "Secrets",
    "list",
    "[]",
    "Left out of the prompt until the relationship reaches “Secrets unlock at”; one per line.",
  ),
  s(
    "persona",
    "defaultEmotion",
    "Default emotion",
    "emotion",
    "neutral",
    "Used when the model gives none, and for fallback lines.",
  ),
  s(
    "persona",
    "maxSentences",
    "Max sentences",
    "integer",
    "2",
    "Reply length limit.",
    PERSONA_BOUNDS.maxSentences,
  ),

  s(
    "options",
    "replyFormat",
    "Reply format",
    "choice",
    "automatic",
    "structured, then a text retry if blocked " +
      "(automatic); JSON with player options (structured); “[emotion] line” (text).",
    {
      choices: ["automatic", "structured", "text"],
    },
  ),
  s(
    "options",
    "groundingTool",
    "Grounding tool",
    "tool",
    "none",
    "A tool the NPC must call first on every turn (e.g. check_stock, read_world_state).",
  ),
  s(
    "options",
    "toolChoice",
    "Tool choice",
    "toolChoice",
    "explicit",
    "Used when there is no grounding tool. explicit: the first step calls a tool or respond_directly.",
  ),
  s(
    "options",
    "maxToolRounds",
    "Max tool rounds",
    "integer",
    "2",
    "Model steps per turn that may call tools.",
    {
      min: 0,
    },
  ),
  s("options", "maxToolCalls", "Max tool calls", "integer", "6", "Tool calls per turn.", { min: 0 }),
  s(
    "options",
    "toolTimeoutSeconds",
    "Tool timeout (s)",
    "seconds",
    "120",
    "Time the game has to answer a tool call; 0 = forever. A tool's own timeout wins.",
    OPTION_BOUNDS.toolTimeoutSeconds,
  ),
  s(
    "options",
    "worldReadable",
    "World readable",
    "paths",
    '[""] (everything)',
    'Paths read_world_state may read, one per line ("." = everything); [] in JSONC = no read tool.',
  ),
  s(
    "options",
    "worldWritable",
    "World writable",
    "paths",
    "[] (no write tool)",
    "Paths update_world_state may change, one per line.",
  ),
  s(
    "options",
    "worldContextPaths",
    "World context paths",
    "paths",
    "[]",
    "Paths summarized into every prompt (grounding without a tool round).",
  ),
  s(
    "options",
    "memoryTools",
    "Memory tools",
    "memoryTools",
    "none",
    "Let the model store facts (remember_fact) and change its attitude (change_relationship).",
  ),
  s("options", "maxFacts", "Max facts", "integer", "12", "Facts kept; the oldest are dropped.", { min: 0 }),
  s(
    "options",
    "maxRelationshipChange",
    "Max relationship change",
    "integer",
    "10",
    "Largest change per change_relationship call.",
    OPTION_BOUNDS.maxRelationshipChange,
  ),
  s(
    "options",
    "secretsUnlockAtRelationship",
    "Secrets unlock at",
    "unlock",
    "50",
    "Relationship from which secrets enter the prompt; “always” includes them with a rule to guard them.",
  ),
  s(
    "options",
    "emotions",
    "Emotions",
    "emotions",
    "all",
    "Emotions the model may choose from (none checked = all).",
  ),
  s(
    "options",
    "playerOptionCount",
    "Player options",
    "integer",
    "3",
    "Suggested player replies (structured replies only).",
    OPTION_BOUNDS.playerOptionCount,
  ),
  s(
    "options",
    "canEndConversation",
    "Can end conversation",
    "boolean",
    "true",
    "Whether a reply may end it.",
  ),
  s(
    "options",
    "extraInstructions",
    "Extra instructions",
    "longtext",
    "none",
    "Appended to the persona's instructions.",
  ),
  s(
    "options",
    "compactAfterTurns",
    "Compact after turns",
    "integer",
    "8",
    "Background summarization of older turns; 0 disables it.",
    { min: 0 },
  ),
  s("options", "keepRecentTurns", "Keep recent turns", "integer", "2", "Turns compaction keeps verbatim.", {
    min: 0,
  }),
  s(
    "options",
    "fallbackOnGuardrail",
    "Fallback on guardrail",
    "boolean",
    "true",
    "A blocked turn returns a fallback line instead of error -32002.",
  ),
  s(
    "options",
    "fallbackLines",
    "Fallback lines",
    "list",
    "neutral lines",
    "Rotated fallback lines; one per line.",
  ),
  s("options", "temperature", "Temperature", "number", "model default", "Sampling temperature.", { min: 0 }),
  s(
    "options",
    "maximumResponseTokens",
    "Max response tokens",
    "integer",
    "model default",
    "Longest reply in tokens.",
    { min: 1 },
  ),
  s("options", "barkMaximumTokens", "Bark max tokens", "integer", "48", "Longest bark in tokens.", {
    min: 1,
  }),

  s("memory", "facts", "Facts", "list", "[]", "What the NPC remembers at the start; one per line."),
  s(
    "memory",
    "relationship",
    "Relationship",
    "number",
    "0",
    "Attitude toward the player at the start.",
    RELATIONSHIP_BOUNDS,
  ),
  s("memory", "summary", "Summary", "longtext", "none", "A summary of earlier conversations."),
];

/** The field of `section.key`, if the form has one. */
export function fieldOf(section: string, key: string): FieldSpec | undefined {
  return FIELDS.find((f) => f.section === section && f.key === key);
}

/**
 * The hint under a field: "Required", its default (an optional text or list: "Optional", not the JSON of its
 * empty default) and its limits, then its help.
 */
export function fieldHint(spec: FieldSpec): string {
  const limits: string[] = [];
  if (spec.min !== undefined && spec.max !== undefined) limits.push(`${spec.min}–${spec.max}`);
  else if (spec.min !== undefined) limits.push(`≥ ${spec.min}`);
  else if (spec.max !== undefined) limits.push(`≤ ${spec.max}`);
  const empty = spec.defaultText === '""' || spec.defaultText === "[]";
  const head = spec.required ? "Required" : empty ? "Optional" : `Default: ${spec.defaultText}`;
  return [head, ...limits].join(" · ") + `. ${spec.help}`;
}

/** The keys of a section, in order. */
export function keysOf(section: Section): string[] {
  return FIELDS.filter((f) => f.section === section).map((f) => f.key);
}

function show(value: JsonValue): string {
  return JSON.stringify(value);
}

function range(spec: FieldSpec): string {
  if (spec.min !== undefined && spec.max !== undefined) return `from ${spec.min} to ${spec.max}`;
  if (spec.min !== undefined) return `≥ ${spec.min}`;
  if (spec.max !== undefined) return `≤ ${spec.max}`;
  return "";
}

/** The largest integer JSON keeps exact (2^53-1): the bridge refuses an integer field past it. */
const SAFE_INTEGER = Number.MAX_SAFE_INTEGER;

/**
 * Why whole number `value` of field `spec` is past the safe integers (±(2^53-1)), which the bridge refuses
 * (JSON no longer keeps such an integer exact), or null; `or` follows the range ('or "always" (null)').
 * Named by its path, as the bridge names it: the range of a field with no bound of its own is not shown
 * beside the field's other checks.
 */
function unsafeInteger(spec: FieldSpec, value: number, or = ""): string | null {
  if (Math.abs(value) <= SAFE_INTEGER) return null;
  const where = spec.section === "file" ? spec.key : `${spec.section}.${spec.key}`;
  const low = spec.min ?? -SAFE_INTEGER;
  const high = spec.max ?? SAFE_INTEGER;
  return `'${where}' must be a whole number from ${low} to ${high} (2^53-1, the largest integer JSON keeps ` +
    `exact)${or}; got ${show(value)}.`;
}

function checkNumber(spec: FieldSpec, value: JsonValue, integer: boolean): string | null {
  const what = integer ? "a whole number" : "a number";
  const limits = range(spec);
  const expected = limits === "" ? what : `${what} ${limits}`;
  if (typeof value !== "number" || !Number.isFinite(value)) {
    return `Must be ${expected}; got ${quoted(value)}.`;
  }
  if (integer && !Number.isInteger(value)) return `Must be ${expected}; got ${value}.`;
  if ((spec.min !== undefined && value < spec.min) || (spec.max !== undefined && value > spec.max)) {
    return `Must be ${expected}; got ${show(value)}.`;
  }
  return integer ? unsafeInteger(spec, value) : null;
}

/**
 * `value` as JSON; a text that reads as a number, `true` or `false` adds what to write instead (a designer new
 * to JSON writes `"3"` for 3).
 */
function quoted(value: JsonValue): string {
  if (typeof value === "string" && /^\s*(-?\d+(\.\d+)?|true|false)\s*$/.test(value)) {
    return `${show(value)}, a text: write ${value.trim()} without quotes`;
  }
  return show(value);
}

function checkStrings(value: JsonValue, what: string): string | null {
  if (typeof value === "string") {
    return `Must be a list of ${what}, e.g. ${show([value])}; got ${show(value)}.`;
  }
  if (!Array.isArray(value)) return `Must be a list of ${what}; got ${show(value)}.`;
  const bad = value.findIndex((item) => typeof item !== "string");
  return bad === -1 ? null : `Item ${bad + 1} must be text; got ${show(value[bad])}.`;
}

/** Why `path` is not a world path the bridge accepts, or null (the bridge's `parseWorldPath` rules). */
export function worldPathProblem(path: string): string | null {
  let text = path.trim();
  if (text === "" || text === "$" || text === "/" || text === ".") return null;
  if (text.startsWith("$.")) text = text.slice(2);
  else if (text.startsWith("/")) text = text.slice(1);
  if (text === "") return null;
  const leadingBracket = text.startsWith("[");
  const segments = text.replaceAll("[", ".").replaceAll("]", "").replaceAll("/", ".").split(".");
  if (leadingBracket && segments[0] === "") segments.shift();
  if (segments.length === 0 || segments.some((segment) => segment === "")) {
    return `'${path}' is not a valid path. Use dot-separated keys such as 'player.gold'.`;
  }
  return null;
}

/** The result of checking a value: an error blocks the start, a warning is only shown. */
export interface Check {
  /** The bridge would reject the value. */
  error?: string;
  /** The bridge would accept it with a warning or a fallback. */
  warning?: string;
}

/** The value {@link checkField} checks, and what it is checked against. */
export interface CheckFieldOptions {
  /**
   * The field's value: `undefined` (or left out) when absent, and the default applies; `null` is the
   * default as well, except for `secretsUnlockAtRelationship`, where it means "always, guarded".
   */
  value?: JsonValue;
  /** The tool names the NPC will have (for the grounding tool and `{"tool": …}`); none when left out. */
  tools?: readonly string[];
}

/** Checks the value of field `spec` as the bridge would: an error, a warning, or nothing to say. */
export function checkField(spec: FieldSpec, { value, tools = [] }: CheckFieldOptions): Check {
  if (value === undefined || (value === null && spec.kind !== "unlock")) {
    return spec.required ? { error: `${spec.label} is required.` } : {};
  }
  switch (spec.kind) {
    case "text":
    case "longtext":
      return checkText(spec, value);
    case "list":
      return errorOf(checkStrings(value, "texts"));
    case "paths":
      return checkPaths(value);
    case "integer":
    case "number":
    case "seconds":
      return checkNumeric(spec, value);
    case "boolean":
      return typeof value === "boolean" ? {} : { error: `Must be true or false; got ${quoted(value)}.` };
    case "choice":
      return typeof value === "string" && spec.choices?.includes(value)
        ? {}
        : { error: `Must be one of ${spec.choices?.map((c) => `"${c}"`).join(", ")}; got ${show(value)}.` };
    case "emotion":
      return checkEmotion(value);
    case "emotions":
      return checkEmotions(value);
    case "memoryTools":
      return checkMemoryTools(value);
    case "toolChoice":
      return checkToolChoice(value, tools);
    case "tool":
      if (typeof value !== "string") return { error: `Must be a tool name; got ${show(value)}.` };
      return checkToolName(value, tools);
    case "id":
      return checkId(value);
    case "unlock":
      if (value === null) return {};
      if (typeof value === "number" && Number.isInteger(value)) {
        return errorOf(unsafeInteger(spec, value, ', or "always" (null)'));
      }
      return { error: `Must be a whole number, or "always" (null); got ${show(value)}.` };
  }
}

/** A check with `problem` as its error (none when null). */
function errorOf(problem: string | null): Check {
  return problem ? { error: problem } : {};
}

/** Text (`text`, `longtext`): a required one must not be blank. */
function checkText(spec: FieldSpec, value: JsonValue): Check {
  if (typeof value !== "string") return { error: `Must be text; got ${show(value)}.` };
  if (spec.required && value.trim() === "") return { error: `${spec.label} must not be empty.` };
  const length = [...value.trim()].length;
  if (spec.section === "persona" && spec.key === "name" && length > LONG_NAME) {
    return {
      warning:
        `The name is ${length.toLocaleString("en-US")} characters long: the NPC's name goes into every ` +
        "prompt, and the game shows it where the NPC speaks. Keep it to a few words; the rest belongs in Role, " +
        "Personality or Backstory.",
    };
  }
  return {};
}

/**
 * Characters past which a persona's name is taken for a paste into the wrong field (a warning: the bridge
 * takes any length, and puts the name in every prompt).
 */
const LONG_NAME = 80;

/** World paths, one per item. */
function checkPaths(value: JsonValue): Check {
  const problem = checkStrings(value, "world paths");
  if (problem) return { error: problem };
  for (const path of value as string[]) {
    const bad = worldPathProblem(path);
    if (bad) return { error: bad };
  }
  return {};
}

/** A number in the field's range (`integer`: whole; `seconds`: 0…86400, said in its own words). */
function checkNumeric(spec: FieldSpec, value: JsonValue): Check {
  const problem = checkNumber(spec, value, spec.kind === "integer");
  if (problem && spec.kind === "seconds") {
    return {
      error: `Must be a number of seconds from 0 to 86400 (0 means no limit); got ${quoted(value)}.`,
    };
  }
  return errorOf(problem);
}

/** One emotion: an unknown one is a warning (the bridge reads it leniently). */
function checkEmotion(value: JsonValue): Check {
  if (typeof value !== "string") return { error: `Must be an emotion; got ${show(value)}.` };
  return EMOTION_NAMES.includes(value)
    ? {}
    : { warning: `'${value}' is not a known emotion; the bridge reads it leniently or uses "neutral".` };
}

/** A list of emotions: unknown ones are a warning. */
function checkEmotions(value: JsonValue): Check {
  const problem = checkStrings(value, "emotions");
  if (problem) return { error: problem };
  const unknown = (value as string[]).filter((e) => !EMOTION_NAMES.includes(e));
  return unknown.length === 0 ? {} : {
    warning: `Not known emotions: ${unknown.join(", ")}; the bridge reads them leniently or uses "neutral".`,
  };
}

/** `"all"`, `"none"`, a count 0…3, or a list of memory tool names. */
function checkMemoryTools(value: JsonValue): Check {
  if (value === "all" || value === "none") return {};
  if (typeof value === "number" && Number.isInteger(value) && value >= 0 && value <= 3) return {};
  if (!Array.isArray(value)) {
    return { error: 'Must be a list such as ["rememberFact", "changeRelationship"], "all" or "none".' };
  }
  const known = ["rememberFact", "changeRelationship", "remember_fact", "change_relationship"];
  const bad = value.find((item) => typeof item !== "string" || !known.includes(item));
  return bad === undefined
    ? {}
    : { error: `Unknown memory tool ${show(bad)}; known: "rememberFact", "changeRelationship".` };
}

/** A tool choice keyword, or `{"tool": name}` naming one of the NPC's tools. */
function checkToolChoice(value: JsonValue, tools: readonly string[]): Check {
  if (value === "auto" || value === "none" || value === "required" || value === "explicit") return {};
  if (
    typeof value === "object" && value !== null && !Array.isArray(value) &&
    typeof value.tool === "string" &&
    Object.keys(value).length === 1
  ) {
    return checkToolName(value.tool, tools);
  }
  return {
    error: `Must be "auto", "none", "required", "explicit" or {"tool": name}; got ${show(value)}.`,
  };
}

/** One of the NPC's tools. */
function checkToolName(name: string, tools: readonly string[]): Check {
  return tools.includes(name)
    ? {}
    : { error: `The NPC has no tool '${name}' (it has: ${tools.join(", ") || "none"}).` };
}

/** An id: 1–128 printable characters (counted as the bridge counts them: an emoji is one). */
function checkId(value: JsonValue): Check {
  if (typeof value !== "string") return { error: `Must be text; got ${show(value)}.` };
  if (!isPrintableId(value)) {
    return { error: "Must be 1–128 printable characters." };
  }
  return {};
}
