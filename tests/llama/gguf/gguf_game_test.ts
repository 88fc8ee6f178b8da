/**
 * The game methods on a llama model with a designer's schemas, through the wire with the fixture model: a
 * decision that must look something up with a client tool whose arguments hold a date, a nullable member
 * and a number enum; an NPC's structured reply grounded by such a tool; `content/generate` with numeric
 * bounds of any size, object and array literals, real dates and nullable members. What the game receives
 * (tool arguments, the reply, the content) and every structured answer the model gave are valid against their
 * schemas, formats included. Structure, not wording. Runs with OAM_GGUF_TESTS=1 (`deno task test:gguf`).
 */
import assert from "node:assert/strict";
import { Ajv } from "ajv";
import { createLlamaModel } from "../../../src/models/llama_model.ts";
import { closeLlamaModels } from "../../../src/models/llama_runtime.ts";
import type { LanguageModel, StepResult } from "../../../src/models/language_model.ts";
import type { JsonObject, JsonValue } from "../../../src/protocol/json.ts";
import { CHECKED_FORMATS } from "../../../src/schema/formats.ts";
import { WireClient } from "../../helpers/wire.ts";
import { fixtureConfig, GGUF_ENABLED } from "./fixture.ts";

/** A real model on a shared 2-core machine: loading and generating can take seconds under load. */
const SLOW_MS = 120_000;

/** A lookup a designer gives a decision or an NPC: a day, a count, a nullable note, a number enum. */
const LOOKUP: JsonObject = {
  type: "object",
  properties: {
    day: { type: "string", format: "date" },
    count: { type: "integer", minimum: 1, maximum: 5 },
    note: { type: ["string", "null"] },
    weight: { enum: [0.5, 1.5] },
  },
  required: ["day", "count", "note", "weight"],
};

/** A loot item: bounds of any size, exclusive and fractional ones, literals, dates, nullable members. */
const LOOT: JsonObject = {
  type: "object",
  properties: {
    name: { type: "string", minLength: 3, maxLength: 24 },
    price: { type: "integer", minimum: 1, maximum: 100000 },
    stock: { type: "integer", minimum: 0 },
    weight: { type: "number", exclusiveMinimum: 0, maximum: 50.5 },
    rarity: { enum: [{ tier: 1, label: "common" }, { tier: 2, label: "rare" }] },
    slots: { const: ["hand", "belt"] },
    found: { type: "string", format: "date" },
    expires: { type: ["string", "null"], format: "date-time" },
    owner: {
      type: ["object", "null"],
      properties: { name: { type: "string" } },
      required: ["name"],
      additionalProperties: false,
    },
    tags: { type: "array", items: { type: ["string", "null"] }, minItems: 1, maxItems: 3 },
  },
  required: ["name", "price", "stock", "weight", "rarity", "slots", "found", "expires", "owner", "tags"],
};

/** A structured answer the model gave, with the schema it answered. */
interface Answer {
  schema: JsonObject;
  value: JsonValue;
}

/** The llama model, recording each structured answer it gives (the game sees them only processed). */
function recording(inner: LanguageModel, answers: Answer[]): LanguageModel {
  return {
    kind: inner.kind,
    get contextSize() {
      return inner.contextSize;
    },
    trimsHistory: inner.trimsHistory,
    availability: () => inner.availability(),
    ...(inner.countTokens ? { countTokens: inner.countTokens.bind(inner) } : {}),
    async step(request): Promise<StepResult> {
      const result = await inner.step(request);
      if (result.kind === "structured" && request.responseSchema !== null) {
        answers.push({ schema: request.responseSchema.jsonSchema, value: result.value });
      }
      return result;
    },
  };
}

Deno.test({
  name: "gguf game: decisions, NPC replies and content hold a designer's schemas on a llama model",
  ignore: !GGUF_ENABLED,
  // node-llama-cpp's native addon keeps async work Deno's sanitizers cannot attribute to a test.
  sanitizeOps: false,
  sanitizeResources: false,
  async fn(t) {
    const config = await fixtureConfig();
    const answers: Answer[] = [];
    const client = new WireClient({ systemModel: () => recording(createLlamaModel(config), answers) });
    // A strict validator of its own, formats included (the test's, not the backend's ajv instance).
    const ajv = new Ajv({ strict: false, logger: false, formats: { ...CHECKED_FORMATS } });
    const valid = (schema: JsonObject, value: JsonValue, what: string) => {
      const validate = ajv.compile(schema);
      assert.ok(validate(value), `${what}: ${JSON.stringify(validate.errors)} in ${JSON.stringify(value)}`);
    };
    const answersValid = (what: string) => {
      assert.ok(answers.length > 0, `${what}: the model gave a structured answer`);
      for (const answer of answers.splice(0)) valid(answer.schema, answer.value, `${what} answer`);
    };

    /** Runs `method`, answering its tool calls with `output`; returns the result and the calls' arguments. */
    async function withLookups(method: string, params: JsonObject) {
      const id = client.request(method, params);
      const calls: JsonObject[] = [];
      while (true) {
        const message = await client.waitFor(
          (m) =>
            (m.method === "tool/call" && !calls.some((c) => c.id === m.id)) ||
            (m.id === id && !("method" in m)),
          SLOW_MS,
        );
        if (message.method !== "tool/call") {
          assert.ok("result" in message, `${method}: ${JSON.stringify(message)}`);
          return { result: message.result as JsonObject, calls: calls.map((c) => c.arguments as JsonObject) };
        }
        const call = (message.params as JsonObject).call as JsonObject;
        calls.push({ id: message.id as string, arguments: call.arguments as JsonValue });
        client.reply(message.id!, { output: "3 in stock, restocked on 2024-03-01." });
      }
    }

    try {
      await t.step(
        "decision/decide: the lookup's arguments and the decision hold their schemas",
        async () => {
          const options = ["buy", "haggle", "leave"];
          for (const situation of ["A merchant offers a sword.", "The shop is about to close."]) {
            const { result, calls } = await withLookups("decision/decide", {
              situation,
              options: options.map((id) => ({ id, description: `Choose to ${id}` })),
              tools: [{
                name: "check_stock",
                description: "Stock of the shop on a day.",
                parameters: LOOKUP,
              }],
              toolChoice: "required",
              maxToolRounds: 1,
            });
            assert.ok(calls.length > 0, "the decision looked something up");
            for (const args of calls) valid(LOOKUP, args, "check_stock arguments");
            assert.ok(options.includes(result.optionID as string), JSON.stringify(result));
            assert.equal(result.isFallback, false);
            answersValid("decision");
          }
        },
      );

      await t.step("npc/talk: a structured reply grounded by the lookup holds its schema", async () => {
        const emotions = ["neutral", "happy", "suspicious"];
        await client.call("npc/create", {
          npc: "gorm",
          persona: { name: "Gorm", role: "the village blacksmith" },
          tools: [{ name: "check_stock", description: "Stock of the forge on a day.", parameters: LOOKUP }],
          options: {
            replyFormat: "structured",
            groundingTool: "check_stock",
            maxToolRounds: 1,
            emotions,
            playerOptionCount: 2,
            compactAfterTurns: 0,
          },
        });
        for (const line of ["Do you have swords?", "Hello"]) {
          const { result, calls } = await withLookups("npc/talk", { npc: "gorm", line });
          for (const args of calls) valid(LOOKUP, args, "check_stock arguments");
          assert.ok(emotions.includes(result.emotion as string), JSON.stringify(result));
          assert.equal(typeof result.line, "string");
          assert.equal((result.playerOptions as JsonValue[]).length, 2, JSON.stringify(result));
          assert.equal(typeof result.endsConversation, "boolean");
          assert.equal(result.isFallback, false, JSON.stringify(result));
          answersValid("npc reply");
        }
      });

      await t.step("content/generate: bounds, literals, dates and nullable members hold", async () => {
        for (const prompt of ["A sword for a blacksmith's shop.", "Loot from a goblin.", "Hello"]) {
          const { result } = await withLookups("content/generate", { prompt, schema: LOOT });
          const content = result.content as JsonObject;
          valid(LOOT, content, "content");
          assert.deepEqual(content.slots, ["hand", "belt"]);
          assert.equal(result.warnings, undefined, JSON.stringify(result.warnings));
          answersValid("content");
        }
      });
    } finally {
      await client.close();
      await closeLlamaModels();
    }
  },
});
