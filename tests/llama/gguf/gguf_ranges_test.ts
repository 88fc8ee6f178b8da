/**
 * A designer's numeric bounds and object literals on a llama model, through the wire with the fixture model:
 * integer ranges of any size, one-sided bounds, a number range with a fraction, bounds past what the grammar
 * writes or not whole, exclusive bounds, a date that exists, and object and array `const`/`enum` values
 * all come back valid against the client's schema on the first try, without a warning for what the grammar
 * enforces. Runs with OAM_GGUF_TESTS=1 (`deno task test:gguf`).
 */
import assert from "node:assert/strict";
import { Ajv } from "ajv";
import { createLlamaModel } from "../../../src/models/llama_model.ts";
import { closeLlamaModels } from "../../../src/models/llama_runtime.ts";
import type { JsonObject } from "../../../src/protocol/json.ts";
import { WireClient } from "../../helpers/wire.ts";
import { fixtureConfig, GGUF_ENABLED } from "./fixture.ts";

/** A real model on a shared 2-core machine: loading and generating can take seconds under load. */
const SLOW_MS = 120_000;

const BOUNDED: JsonObject = {
  type: "object",
  properties: {
    gold: { type: "integer", minimum: 0 },
    price: { type: "integer", minimum: 1, maximum: 1000 },
    debt: { type: "integer", maximum: -5 },
    confidence: { type: "number", minimum: 0, maximum: 1 },
    temperature: { type: "number", minimum: -12.5, maximum: 40.25 },
    loot: { const: { item: "sword", qty: 1 } },
    route: { enum: [["north", "east"], ["south"]] },
    due: { type: "string", format: "date" },
  },
  required: ["gold", "price", "debt", "confidence", "temperature", "loot", "route", "due"],
};

/**
 * Bounds the grammar cannot write as they are: huge, at 2^53, not whole, tiny, exclusive (draft 6's form;
 * draft 4's boolean form is refused by the answer's validation, see the unit tests of the grammar plan).
 */
const EDGES: JsonObject = {
  type: "object",
  properties: {
    far: { type: "number", minimum: -1e300, maximum: 1e300 },
    wide: { type: "integer", minimum: -(2 ** 53), maximum: 2 ** 53 },
    half: { type: "integer", minimum: 0.5, maximum: 3.5 },
    above: { type: "number", exclusiveMinimum: 0, exclusiveMaximum: 1 },
    tiny: { type: "number", minimum: 1e-7, maximum: 0.001 },
  },
  required: ["far", "wide", "half", "above", "tiny"],
};

async function respond(client: WireClient, session: string, prompt: string, schema: JsonObject) {
  const response = await client.response(
    client.request("session/respond", { session, prompt, schema }),
    SLOW_MS,
  );
  assert.ok("result" in response, `${prompt}: ${JSON.stringify(response)}`);
  return response.result as JsonObject;
}

Deno.test({
  name: "gguf ranges: a designer's numeric bounds and object literals hold on a llama model",
  ignore: !GGUF_ENABLED,
  // node-llama-cpp's native addon keeps async work Deno's sanitizers cannot attribute to a test.
  sanitizeOps: false,
  sanitizeResources: false,
  async fn(t) {
    const config = await fixtureConfig();
    const llama = { type: "llama", ...config } as unknown as JsonObject;
    const client = new WireClient({ systemModel: () => createLlamaModel(config) });
    const ajv = new Ajv({ strict: false, logger: false });
    const prompts = ["Hello", "Count to five.", "What is the capital of France?", "Open the gate."];
    try {
      await t.step(
        "integer ranges of any size, one-sided bounds, number ranges, object literals",
        async () => {
          await client.call("session/create", { session: "r", model: llama });
          const validate = ajv.compile(BOUNDED);
          for (const prompt of prompts) {
            const result = await respond(client, "r", prompt, BOUNDED);
            const answer = result.structured as JsonObject;
            assert.ok(validate(answer), `${JSON.stringify(validate.errors)} in ${JSON.stringify(answer)}`);
            assert.deepEqual(answer.loot, { item: "sword", qty: 1 });
            // A day the calendar has (ajv here checks no format): the date reads back as itself.
            const due = answer.due as string;
            assert.equal(new Date(`${due}T00:00:00Z`).toISOString().slice(0, 10), due);
            assert.equal(result.warnings, undefined, JSON.stringify(result.warnings));
          }
        },
      );

      await t.step(
        "huge, unsafe, fractional and exclusive bounds: valid answers, never a broken grammar",
        async () => {
          await client.call("session/create", { session: "e", model: llama });
          const validate = ajv.compile(EDGES);
          for (const prompt of prompts) {
            const result = await respond(client, "e", prompt, EDGES);
            const answer = result.structured as JsonObject;
            assert.ok(validate(answer), `${JSON.stringify(validate.errors)} in ${JSON.stringify(answer)}`);
            // ±2^53 is one past the safe integers: held at ±(2^53−1), and the designer is told so (nothing else).
            assert.deepEqual(result.warnings, [
              "#/properties/wide: integer lower bound -9007199254740992 is clamped to -9007199254740991, " +
              "the smallest safe integer (-(2^53-1))",
              "#/properties/wide: integer upper bound 9007199254740992 is clamped to 9007199254740991, " +
              "the largest safe integer (2^53-1)",
            ]);
          }
        },
      );
    } finally {
      await client.close();
      await closeLlamaModels();
    }
  },
});
