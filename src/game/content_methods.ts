/**
 * `content/generate` (PROTOCOL.md §6, reference-behavior §2.15): schema-shaped content (items, quests,
 * rumors, loot) from a one-off agent turn. Validation (including the eager schema conversion) happens
 * synchronously; the generation runs concurrently.
 * @module
 */
import { BridgeError } from "../protocol/errors.ts";
import type { JsonObject, JsonValue } from "../protocol/json.ts";
import { Agent } from "../agent/agent.ts";
import { DEFAULT_POLICY, type ToolPolicy, type TurnInput } from "../agent/types.ts";
import type { MethodRegistry } from "../engine/extension.ts";
import type { HandlerContext } from "../engine/context.ts";
import {
  convertForParam,
  parseToolDefinitions,
  placeToolWarnings,
  toolCountWarning,
  toolTimeoutMsOf,
} from "../agent/tool_definitions.ts";
import { withSchemaWarnings } from "../agent/schema_warnings.ts";
import { orderBySchema } from "../schema/mod.ts";
import { freeFormWarnings } from "../schema/free_form.ts";
import { warningsFor } from "../schema/model_notes.ts";
import { CONTENT_SCHEMA_NAME, contentInstructions, contentPrompt } from "./content/content_prompt.ts";
import type { GameContext } from "./game_context.ts";
import { modelSpecWarnings } from "../models/registry.ts";

/** Keys of `content/generate`. */
const CONTENT_KEYS = [
  "prompt",
  "schema",
  "instructions",
  "context",
  "tools",
  "toolTimeoutSeconds",
  "temperature",
  "model",
] as const;

/** Message when the model gave no structured answer. */
export const NO_CONTENT_MESSAGE = "The model produced no structured content.";

/**
 * The `content/generate` method.
 *
 * @example
 * ```ts
 * import { BridgeEngine } from "../composition.ts";
 * const engine = new BridgeEngine();
 * await engine.call("content/generate", {
 *   prompt: "A rumor heard in the tavern.",
 *   schema: { type: "object", properties: { rumor: { type: "string" } }, required: ["rumor"] },
 *   model: { type: "scripted", steps: [{ json: { rumor: "The mill is haunted." } }] },
 * }); // {content: {rumor: "The mill is haunted."}}
 * ```
 */
export class ContentMethods {
  /** Registers `content/generate`. */
  register(registry: MethodRegistry, _game: GameContext): void {
    registry.register("content/generate", (r) => this.#generate(r));
  }

  #generate(r: HandlerContext): Promise<JsonValue> {
    const p = r.params;
    const warnings = p.unknownKeys(CONTENT_KEYS);
    const prompt = p.string("prompt");
    const schema = p.optionalObject("schema");
    if (schema === undefined) throw p.missingParameter("schema");
    const conversion = convertForParam(schema, { rootName: CONTENT_SCHEMA_NAME, path: p.name("schema") });
    const schemaWarningsAt = warnings.length;
    const instructions = contentInstructions(p.optionalString("instructions"));
    const context = p.get("context");
    const timeout = p.optionalSeconds("toolTimeoutSeconds");
    const tools = parseToolDefinitions(p.get("tools"), {
      path: p.name("tools"),
      defaultTimeoutMs: timeout === undefined ? toolTimeoutMsOf(r.settings.toolTimeoutSeconds) : timeout,
    });
    const toolWarningsFor = placeToolWarnings(warnings, tools);
    const countWarning = toolCountWarning(tools.tools.length);
    if (countWarning) warnings.push(countWarning);
    const temperature = p.optionalNumber("temperature", { min: 0 });
    const spec = r.parseModel(p.get("model"), p.name("model"));
    warnings.push(...modelSpecWarnings(spec));
    const model = r.createModel(spec);
    toolWarningsFor(model.kind); // before the insertion below, which moves them
    // The schema's warnings for the model that runs (a host's default model may be a llama or openai one):
    // objects without properties, and what a llama model's grammar enforces.
    const schemaWarnings = [
      ...warningsFor(conversion.warningNotes, { model: model.kind }),
      ...freeFormWarnings(conversion.freeForm, { model: model.kind, plainObjects: true }),
    ];
    warnings.splice(schemaWarningsAt, 0, ...schemaWarnings);
    const agent = new Agent({
      model,
      instructions,
      tools: tools.tools,
      settings: { options: temperature === undefined ? {} : { temperature } },
    });
    const policy: ToolPolicy = { ...DEFAULT_POLICY, choice: tools.tools.length === 0 ? "none" : "auto" };
    const input: TurnInput = {
      prompt: contentPrompt(prompt, context),
      schema: {
        name: CONTENT_SCHEMA_NAME,
        generationSchema: conversion.generationSchema,
        jsonSchema: schema,
      },
      policy,
      stream: false,
    };
    return r.drive(
      (sink) => agent.runTurn(input, sink, r.signal),
      { stream: false, context: {}, eventMethod: "content/event" },
    ).then((result) => {
      if (result.structured === undefined) throw BridgeError.of("generation_failed", NO_CONTENT_MESSAGE);
      const out: JsonObject = { content: orderBySchema(result.structured, schema) };
      if (warnings.length > 0) out.warnings = warnings;
      return out;
    }, (error) => {
      throw withSchemaWarnings(error, schemaWarnings);
    });
  }
}
