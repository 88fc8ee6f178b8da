/**
 * What the model sees for `content/generate` (reference-behavior §2.15): the instructions (given or the
 * default) and the prompt with the context appended as facts.
 * @module
 */
import { compactJson, type JsonValue } from "../../protocol/json.ts";

/** Instructions used when the request gives none (or only whitespace). */
export const DEFAULT_CONTENT_INSTRUCTIONS: string =
  "You write content for a video game. Match the requested format exactly. Keep the text short and vivid, " +
  "and stay consistent with the request and its facts.";

/** Root type name of the content schema. */
export const CONTENT_SCHEMA_NAME = "Content";

/** The given instructions (trimmed) or the default. */
export function contentInstructions(instructions: string | undefined): string {
  const trimmed = instructions?.trim() ?? "";
  return trimmed === "" ? DEFAULT_CONTENT_INSTRUCTIONS : trimmed;
}

/** The prompt, plus "\nFacts: <compact JSON>" when there is a context (a string context is JSON-quoted). */
export function contentPrompt(prompt: string, context: JsonValue | undefined): string {
  return context === undefined || context === null ? prompt : `${prompt}\nFacts: ${compactJson(context)}`;
}
