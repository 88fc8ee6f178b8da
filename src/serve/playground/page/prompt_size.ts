/**
 * Whether a persona fits its model's context, before Start: the page's estimate of the tokens the persona's
 * own text puts into every prompt (persona fields, extra instructions, initial memory, client tools), by the
 * bridge's rule of thumb (3 UTF-8 bytes a token). It leaves out what the bridge adds (its instructions, the
 * built-in tools, the world), so it is a lower bound: a persona over the context by this count is over it by
 * the bridge's too, and the bridge still warns after Start about one that is over only with its additions.
 * Pure: no DOM.
 * @module
 */
import { isJsonObject, type JsonObject, type JsonValue } from "../../../protocol/json.ts";
import { fieldOf } from "./fields.ts";

/**
 * The context size of the scripted model (the Model tab's script): the bridge's `SCRIPTED_CONTEXT_SIZE`,
 * which a test pins (the page does not bundle the model's module).
 */
export const SCRIPT_CONTEXT_SIZE = 8192;

/** Bytes of prompt text per token, as the bridge estimates a prompt (`Npc.promptEstimate`). */
const BYTES_PER_TOKEN = 3;

/** The persona fields whose text goes into every prompt (secrets are left out until they unlock). */
const PROMPT_FIELDS = ["name", "role", "personality", "speakingStyle", "backstory", "goals", "knowledge"];

const encoder = new TextEncoder();

/** The UTF-8 bytes of a text, or of the texts of a list; 0 for anything else. */
function bytesOf(value: JsonValue | undefined): number {
  if (typeof value === "string") return encoder.encode(value).length;
  if (Array.isArray(value)) return value.reduce<number>((n, item) => n + bytesOf(item), 0);
  return 0;
}

/** One part of the estimate: what it is (as the advice names it), where it is, and its bytes. */
interface Part {
  /** "the backstory", "the tools". */
  what: string;
  /** A form field's path (`persona.backstory`), or `tools`. */
  path: string;
  bytes: number;
}

/** The parts of a persona file's value that go into every prompt. */
function partsOf(value: JsonObject): Part[] {
  const persona = isJsonObject(value.persona) ? value.persona : {};
  const options = isJsonObject(value.options) ? value.options : {};
  const memory = isJsonObject(value.memory) ? value.memory : {};
  const field = (section: string, key: string, from: JsonObject): Part => ({
    what: `the ${(fieldOf(section, key)?.label ?? key).toLowerCase()}`,
    path: `${section}.${key}`,
    bytes: bytesOf(from[key]),
  });
  const tools = Array.isArray(value.tools) ? value.tools.filter(isJsonObject) : [];
  const toolBytes = tools.reduce((n, t) =>
    n + bytesOf(t.name) + bytesOf(t.description) +
    (t.parameters === undefined ? 0 : encoder.encode(JSON.stringify(t.parameters)).length), 0);
  return [
    ...PROMPT_FIELDS.map((key) => field("persona", key, persona)),
    field("options", "extraInstructions", options),
    field("memory", "facts", memory),
    field("memory", "summary", memory),
    { what: "the tools", path: "tools", bytes: toolBytes },
  ];
}

/** The estimate of a persona's prompt: its tokens (a lower bound) and its largest part. */
export interface PromptSize {
  /** Tokens the persona's own text takes in every prompt (estimated). */
  tokens: number;
  /** The largest part: what it is ("the backstory") and where (`persona.backstory`, or `tools`). */
  largest: { what: string; path: string };
}

/**
 * The tokens a persona file's value puts into every prompt, at least (see the module's note), and its
 * largest part.
 *
 * @example
 * ```ts
 * const size = promptSize({ persona: { name: "Gorm", backstory: "x".repeat(30_000) } });
 * size.tokens; // 10002
 * size.largest.path; // "persona.backstory"
 * ```
 */
export function promptSize(value: JsonObject): PromptSize {
  const parts = partsOf(value);
  const bytes = parts.reduce((n, p) => n + p.bytes, 0);
  const largest = parts.reduce((a, b) => b.bytes > a.bytes ? b : a);
  return { tokens: Math.ceil(bytes / BYTES_PER_TOKEN), largest: { what: largest.what, path: largest.path } };
}

/**
 * The warning to show before Start when a persona does not fit the `contextSize`-token context of the model
 * its NPC runs on, with the part to shorten first; null when it fits (or the size is not known).
 *
 * @example
 * ```ts
 * const persona = { persona: { name: "Gorm", backstory: "x".repeat(30_000) } };
 * contextWarning(persona, 8192)?.warning.startsWith("The persona takes at least about 10,002 tokens"); // true
 * contextWarning(persona, null); // null: the model's context size is not known yet
 * ```
 */
export function contextWarning(
  value: JsonObject,
  contextSize: number | null,
): { warning: string; path: string } | null {
  if (contextSize === null || contextSize <= 0) return null;
  const size = promptSize(value);
  if (size.tokens <= contextSize) return null;
  return {
    warning: `The persona takes at least about ${size.tokens.toLocaleString("en-US")} tokens (estimated), ` +
      `more than the model's ${contextSize}-token context: its turns will not fit. Shorten ${size.largest.what}.`,
    path: size.largest.path,
  };
}
