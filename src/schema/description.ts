/**
 * The description text of a converted node: the schema's own `description`, the sentences a converter adds
 * ("Must match …", "Each item: …"), and, in parentheses, the constraints the model is told about but cannot
 * enforce (each also reported as a warning), `examples` and `default`.
 * @module
 */
import { type JsonObject, ownValue } from "../protocol/json.ts";
import { grammarEnforces } from "./grammar_rules.ts";
import { describeValue, nonEmptyString } from "./keyword_values.ts";
import type { Walk } from "./walk.ts";

/** String keywords that are described but not enforced. */
export const STRING_DESCRIBED = ["format", "minLength", "maxLength", "contentEncoding", "contentMediaType"];
/** Array keywords that are described but not enforced. */
export const ARRAY_DESCRIBED = ["uniqueItems", "contains"];
/** Number keywords that are described but not enforced. */
export const NUMBER_DESCRIBED = ["multipleOf"];
/** Object keywords that are described but not enforced. */
export const OBJECT_DESCRIBED = ["minProperties", "maxProperties", "patternProperties", "dependentRequired"];

/** What {@link describe} builds a description from. */
export interface DescriptionParts {
  /** The schema object described. */
  schema: JsonObject;
  /** Schema path of the warnings. */
  path: string;
  /** Keywords described to the model but not enforced (`*_DESCRIBED`). */
  described?: readonly string[];
  /** Full sentences appended to the schema's description. */
  sentences?: readonly string[];
}

/** The node's description (undefined when empty); warns for each described-but-not-enforced keyword. */
export function describe(walk: Walk, parts: DescriptionParts): string | undefined {
  const { schema, path, described = [], sentences = [] } = parts;
  const notes: string[] = [];
  for (const key of described) {
    if (!Object.hasOwn(schema, key)) continue;
    const value = schema[key];
    if (key === "uniqueItems" && value === false) continue;
    walk.note({ kind: "described", path, key, value, grammar: grammarEnforces(schema, key) });
    notes.push(`${key}: ${describeValue(value)}`);
  }
  const examples = ownValue(schema, "examples");
  if (Array.isArray(examples) && examples.length > 0) {
    notes.push(`examples: ${examples.slice(0, 3).map(describeValue).join(", ")}`);
  }
  if (Object.hasOwn(schema, "default")) notes.push(`default: ${describeValue(schema.default)}`);
  let text = nonEmptyString(schema, "description") ?? "";
  for (const sentence of sentences) {
    // "Gate name" + "Must be …" → "Gate name. Must be …" (the added sentences are full sentences).
    if (text !== "" && !/[.!?:;]$/.test(text)) text += ".";
    text = text === "" ? sentence : `${text} ${sentence}`;
  }
  if (notes.length > 0) text = text === "" ? `(${notes.join("; ")})` : `${text} (${notes.join("; ")})`;
  return text === "" ? undefined : text;
}
