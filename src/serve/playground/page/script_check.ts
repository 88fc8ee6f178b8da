/**
 * The Model tab's script: why it cannot be used, and the `model` it gives new NPCs.
 * @module
 */
import { isJsonObject, type JsonValue } from "../../../protocol/json.ts";
import { parseJsonc } from "./document.ts";

/**
 * Why the script `text` (JSONC: a list of steps, or `{"steps": […], "fallback": step}`) cannot be used, or null.
 *
 * @example
 * ```ts
 * scriptProblem('[{"text": "Hello."}]'); // null
 * scriptProblem("[1]"); // "Step 1 must be an object with one of text, toolCalls, json, template, error."
 * ```
 */
export function scriptProblem(text: string): string | null {
  if (text.trim() === "") return "The script is empty: add steps, or use the bridge's model.";
  const parsed = parseJsonc(text, "The script");
  if (parsed.problem) return parsed.problem.message;
  const value = parsed.value;
  const steps = Array.isArray(value) ? value : isJsonObject(value) ? value.steps : undefined;
  if (!Array.isArray(steps)) {
    return 'The script must be a list of steps or {"steps": […], "fallback": step}.';
  }
  const kinds = ["text", "toolCalls", "json", "template", "error"];
  const bad = steps.findIndex((step) => !isJsonObject(step) || !kinds.some((k) => Object.hasOwn(step, k)));
  if (bad >= 0) return `Step ${bad + 1} must be an object with one of ${kinds.join(", ")}.`;
  return null;
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
