/**
 * The Model tab's script: why it cannot be used, and the `model` it gives new NPCs.
 * @module
 */
import { isJsonObject, type JsonValue } from "../../../protocol/json.ts";
import { BridgeError } from "../../../protocol/errors.ts";
import { parseScript, scriptWarnings } from "../../../protocol/script_parse.ts";
import { parseJsonc } from "./document.ts";

/**
 * Why the script `text` (JSONC: a list of steps, or `{"steps": […], "fallback": step}`) cannot be used, or null.
 * Past the page's own checks (empty, not JSON, neither a list nor an object) it is the bridge's: the steps are
 * parsed by the code the bridge parses a scripted `model` with ({@link parseScript}), so a script the page
 * calls ready is one `npc/create` takes, and its messages name the member as the bridge does (`'script.steps[0].text'`).
 *
 * @example
 * ```ts
 * scriptProblem('[{"text": "Hello."}]'); // null
 * scriptProblem('{"steps": [{"text": 3}]}'); // "The script: 'script.steps[0].text' must be a string."
 * ```
 */
export function scriptProblem(text: string): string | null {
  if (text.trim() === "") return "The script is empty: add steps, or use the bridge's model.";
  const parsed = parseJsonc(text, "The script");
  if (parsed.problem) return parsed.problem.message;
  const value = parsed.value;
  if (!Array.isArray(value) && !isJsonObject(value)) {
    return 'The script must be a list of steps or {"steps": […], "fallback": step}.';
  }
  // (An object's own `type` would replace "scripted" in the model the page sends: another model would run.)
  if (isJsonObject(value) && Object.hasOwn(value, "type") && value.type !== "scripted") {
    return `The script: 'script.type' must be "scripted" or left out.`;
  }
  try {
    parseScript(value, "script");
  } catch (error) {
    if (error instanceof BridgeError) return `The script: ${error.message}`;
    throw error;
  }
  return null;
}

/**
 * What the bridge will warn about the script `text` at Start (members it ignores, such as `"step"` for
 * `"steps"`), in the bridge's words; none while {@link scriptProblem} finds a problem.
 *
 * @example
 * ```ts
 * scriptNotes('[{"text": "Hi", "delay": 500}]');
 * // ["Unknown parameter 'script[0].delay' was ignored (did you mean 'delayMs'?)."]
 * ```
 */
export function scriptNotes(text: string): string[] {
  if (scriptProblem(text) !== null) return [];
  return scriptWarnings(parseJsonc(text).value ?? null, "script");
}

/**
 * The `model` param of new NPCs that play the script `text`, or undefined when it is neither a list nor an
 * object.
 *
 * @example
 * ```ts
 * scriptModel('[{"text": "Hello."}]'); // { type: "scripted", steps: [{ text: "Hello." }] }
 * ```
 */
export function scriptModel(text: string): JsonValue | undefined {
  const value = parseJsonc(text).value;
  if (Array.isArray(value)) return { type: "scripted", steps: value };
  if (isJsonObject(value)) return { type: "scripted", ...value };
  return undefined;
}

/**
 * What a file chosen with Load script… is when it is plainly not a script: `"persona"` (a persona file: an
 * object with a `persona` object and no `steps`), `"state"` (a save state: an object with a `state` or a
 * `transcript` object), else null (a script, or text to fix in the script box).
 *
 * @example
 * ```ts
 * import { notAScript } from "./script_check.ts";
 * notAScript('{"persona": {"name": "Gorm"}}'); // "persona"
 * notAScript('[{"text": "Rain again."}]'); // null
 * ```
 */
export function notAScript(text: string): "persona" | "state" | null {
  const value = parseJsonc(text).value;
  if (!isJsonObject(value)) return null;
  if (isJsonObject(value.state) || isJsonObject(value.transcript)) return "state";
  if (isJsonObject(value.persona) && !Array.isArray(value.steps)) return "persona";
  return null;
}
