/**
 * What the model sees for a decision: the instructions (default or given, plus the actor), the prompt
 * (situation, facts, options) and the response schema `{reasoning, choice, confidence}` — reasoning first so
 * the model thinks before it commits to an option id.
 * @module
 */
import { compactJson, type JsonObject } from "../../protocol/json.ts";
import type { ResponseSchema } from "../../models/language_model.ts";
import { convertSchema } from "../../schema/mod.ts";
import { actorLines } from "./actor.ts";
import type { DecisionOption, DecisionSpec } from "./decision_request.ts";

/** Instructions used when the request gives none. */
export const DEFAULT_DECISION_INSTRUCTIONS: string =
  "You choose what characters in a video game do. Pick the option that suits the character and the " +
  "situation best. First give a one-sentence reason, then the id of the option, then how confident you are " +
  "from 0 to 100.";

/** Root type name of the decision schema. */
export const DECISION_SCHEMA_NAME = "Decision";

/** The instructions: `instructions` (or the default), then the actor's lines, joined with newlines. */
export function decisionInstructions(spec: DecisionSpec, instructions: string | null): string {
  const lines = [instructions ?? DEFAULT_DECISION_INSTRUCTIONS];
  if (spec.actor) lines.push(...actorLines(spec.actor));
  return lines.join("\n");
}

/**
 * The prompt: "Situation: …", "Facts: <compact JSON>" (when there is context), "Options:" and one
 * "- <id>: <description>" (or "- <id>") line per option.
 */
export function decisionPrompt(spec: DecisionSpec): string {
  const situation = spec.situation.trim();
  const lines = [`Situation: ${situation === "" ? "(none given)" : situation}`];
  if (spec.context !== undefined) lines.push(`Facts: ${compactJson(spec.context)}`);
  lines.push("Options:");
  for (const option of spec.options) {
    lines.push(option.description === "" ? `- ${option.id}` : `- ${option.id}: ${option.description}`);
  }
  return lines.join("\n");
}

/** The JSON Schema of a decision answer: `reasoning`, `choice` (enum of ids), `confidence` (0…100). */
export function decisionJsonSchema(options: readonly DecisionOption[]): JsonObject {
  return {
    type: "object",
    properties: {
      reasoning: { type: "string", description: "Why this option fits, in one short sentence." },
      choice: {
        type: "string",
        enum: options.map((o) => o.id),
        description: "The id of the option you pick.",
      },
      confidence: {
        type: "integer",
        minimum: 0,
        maximum: 100,
        description: "How sure you are of the choice, from 0 to 100.",
      },
    },
    required: ["reasoning", "choice", "confidence"],
    additionalProperties: false,
  };
}

/** The response schema of a decision (converted from {@link decisionJsonSchema}). */
export function decisionSchema(options: readonly DecisionOption[]): ResponseSchema {
  const jsonSchema = decisionJsonSchema(options);
  const { generationSchema } = convertSchema(jsonSchema, DECISION_SCHEMA_NAME);
  return { name: DECISION_SCHEMA_NAME, generationSchema, jsonSchema };
}
