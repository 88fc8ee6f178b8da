/**
 * The hint for a saved object sent as JSON text: a save file read and passed on without being parsed.
 * @module
 */

/**
 * ` It is JSON text: …` when `value` is a string holding a JSON object (a save read from a file and not
 * parsed), else `""`: appended to the error of a parameter that takes the object itself.
 *
 * @example
 * ```ts
 * import { jsonTextHint } from "./json_text.ts";
 * jsonTextHint('{"gold": 5}'); // " It is JSON text: send the object it holds (parse the saved text first: JSON.parse, json.loads)."
 * jsonTextHint("gold"); // ""
 * ```
 */
export function jsonTextHint(value: unknown): string {
  if (typeof value !== "string" || !value.trimStart().startsWith("{")) return "";
  try {
    const parsed: unknown = JSON.parse(value);
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return "";
  } catch {
    return "";
  }
  return " It is JSON text: send the object it holds (parse the saved text first: JSON.parse, json.loads).";
}
