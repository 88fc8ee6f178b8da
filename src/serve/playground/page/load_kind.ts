/**
 * What a file chosen with Load file… is, by its shape: a save state (`{npc, state, world}` or a transcript), a
 * script (a list of steps, or `{"steps": […]}`), a persona file (an object with the persona file's keys), or
 * none of these: then a message that says what the file looks like and what the page takes, and the page
 * changes nothing. Text that is not JSON at all stays a persona file (or a script, by its `.steps.json` name),
 * so the editor shows where the syntax breaks. Pure: no DOM.
 * @module
 */
import { isJsonObject, type JsonObject, type JsonValue } from "../../../protocol/json.ts";
import { nearestName } from "../../../protocol/edit_distance.ts";
import { STEP_KEYS } from "../../../protocol/script_keys.ts";
import { OPTION_KEYS, PERSONA_KEYS } from "../../../game/npc/keys.ts";
import { parseJsonc } from "./document.ts";
import { FILE_KEYS } from "./fields.ts";

/** What a loaded file is: a kind the page takes, or a refusal that says why. */
export type LoadKind = { kind: "state" | "script" | "persona" } | { refused: string };

/** What Load file… takes, said after a refusal. */
const TAKES = 'Load file… takes a persona file (an object such as {"persona": {"name": "Gorm"}}), ' +
  'a script (a list of steps such as [{"text": "Hello."}]) or a save state (from Download state).';

/** Whether `value` is a save state: an object with a `state` or a `transcript` object. */
function isState(value: JsonValue): boolean {
  return isJsonObject(value) && (isJsonObject(value.state) || isJsonObject(value.transcript));
}

/** Whether `value` is a step: an object with a member a step has. */
function isStep(value: JsonValue): boolean {
  return isJsonObject(value) && Object.keys(value).some((key) => STEP_KEYS.includes(key));
}

/** Whether `value` is a tool definition: `{name, description?, parameters?}` or `{type: "function", function}`. */
function isTool(value: JsonValue): boolean {
  if (!isJsonObject(value)) return false;
  if (value.type === "function" && isJsonObject(value.function)) return true;
  return typeof value.name === "string" && (Object.hasOwn(value, "parameters") ||
    Object.hasOwn(value, "description") || Object.hasOwn(value, "execution"));
}

/** How many keys of `value` are in `keys`. */
function keysIn(value: JsonObject, keys: readonly string[]): number {
  return Object.keys(value).filter((key) => keys.includes(key)).length;
}

/** Whether `value` is a persona file's object: it has a key of the file, or a persona field's or an option's. */
function isPersonaFile(value: JsonValue): boolean {
  if (!isJsonObject(value)) return false;
  return keysIn(value, FILE_KEYS) + keysIn(value, PERSONA_KEYS) + keysIn(value, OPTION_KEYS) > 0;
}

/** A short description of a JSON value that is none of the kinds, for the refusal. */
function looksLike(value: JsonValue): string {
  if (Array.isArray(value)) {
    const n = value.length;
    if (n === 0) return "an empty list";
    const items = `${n} item${n === 1 ? "" : "s"}`;
    if (value.every(isTool)) return `a list of tools (${items} with a "name" and "parameters")`;
    if (value.every(isState)) return `a list of save states (${items})`;
    if (value.every(isPersonaFile)) return `a list of persona files or personas (${items})`;
    const kinds = [...new Set(value.map(kindOf))];
    return `a list of ${kinds.join(" and ")} (${items})`;
  }
  if (isJsonObject(value)) {
    const keys = Object.keys(value);
    if (keys.length === 0) return "an empty object";
    const shown = keys.slice(0, 4).map((k) => `"${k}"`).join(", ") + (keys.length > 4 ? ", …" : "");
    return `an object with ${shown} (a world snapshot or other data?)`;
  }
  return kindOf(value).replace(/s$/, "").replace(/^(\w)/, (c) => /[aeiou]/.test(c) ? `an ${c}` : `a ${c}`);
}

/** The kind of a JSON value, in the plural: "objects", "strings". */
function kindOf(value: JsonValue): string {
  if (value === null) return "nulls";
  if (Array.isArray(value)) return "lists";
  if (isJsonObject(value)) return "objects";
  return `${typeof value}s`;
}

/**
 * What the file `name` with text `text` is for Load file…: `{kind}` (a save state, a script or a persona file),
 * or `{refused}` with the message to show (nothing is loaded).
 *
 * @example
 * ```ts
 * loadKind("steps.json", '[{"text": "Hello."}]'); // { kind: "script" }
 * const kind = loadKind("tools.json", '[{"name": "check_stock", "parameters": {}}]');
 * "refused" in kind && kind.refused.startsWith("tools.json looks like a list of tools"); // true
 * ```
 */
export function loadKind(name: string, text: string): LoadKind {
  const parsed = parseJsonc(text);
  // Not JSON: the editor (or the Model tab's script box, for a steps file) shows where the syntax breaks.
  if (parsed.problem) return { kind: /\.steps\.jsonc?$/i.test(name) ? "script" : "persona" };
  const value = parsed.value;
  if (isState(value)) return { kind: "state" };
  if (Array.isArray(value) && value.length > 0 && value.every(isJsonObject) && value.some(isStep)) {
    return { kind: "script" };
  }
  if (isJsonObject(value) && !isJsonObject(value.persona) && isScriptObject(value)) {
    return { kind: "script" };
  }
  if (isPersonaFile(value)) return { kind: "persona" };
  return {
    refused: `${name} looks like ${
      looksLike(value)
    }, not a file Load file… takes. ${TAKES} Nothing was changed.`,
  };
}

/** Whether the object `value` is a script: it has `steps` (or a key that misspells it, or `fallback`). */
function isScriptObject(value: JsonObject): boolean {
  if (Array.isArray(value.steps)) return true;
  return Object.keys(value).some((key) => nearestName(key, ["steps", "fallback"]) !== undefined);
}

/**
 * What the file `text` chosen with Load script… looks like when it is JSON that is neither a script, nor a
 * persona file or a save state (which the page names on their own); null otherwise (text to fix in the
 * script box included).
 *
 * @example
 * ```ts
 * notAScriptLooks('[{"name": "check_stock", "parameters": {}}]');
 * // 'a list of tools (1 item with a "name" and "parameters")'
 * notAScriptLooks('{"step": [{"text": "Hi"}]}'); // null: the script box asks "did you mean 'steps'?"
 * ```
 */
export function notAScriptLooks(text: string): string | null {
  const kind = loadKind("", text);
  return "refused" in kind ? looksLike(parseJsonc(text).value ?? null) : null;
}
