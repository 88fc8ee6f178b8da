/**
 * `response_format: json_object`: the JSON object in a model's answer, tolerating code fences and prose
 * around it.
 * @module
 */
import { isJsonObject } from "../protocol/json.ts";

function parsesAsObject(text: string): boolean {
  try {
    return isJsonObject(JSON.parse(text));
  } catch {
    return false;
  }
}

/**
 * The JSON object text in `text`, or null when there is none.
 *
 * @example
 * ```ts
 * import { extractJsonObject } from "./json_object.ts";
 * const fence = "`".repeat(3);
 * extractJsonObject(`${fence}json\n{"a": 1}\n${fence}`); // '{"a": 1}'
 * extractJsonObject("Sure! {\"a\": 1} Hope that helps."); // '{"a": 1}'
 * ```
 */
export function extractJsonObject(text: string): string | null {
  let candidate = text.trim();
  if (candidate.startsWith("```")) {
    const nl = candidate.indexOf("\n");
    candidate = nl === -1 ? "" : candidate.slice(nl + 1);
    const fence = candidate.lastIndexOf("```");
    if (fence !== -1) candidate = candidate.slice(0, fence);
    candidate = candidate.trim();
  }
  if (parsesAsObject(candidate)) return candidate;
  const open = candidate.indexOf("{");
  const close = candidate.lastIndexOf("}");
  if (open === -1 || close <= open) return null;
  const inner = candidate.slice(open, close + 1);
  return parsesAsObject(inner) ? inner : null;
}
