/**
 * A designer's schemas on a llama model, through the wire with the fixture model: non-string `enum`s and
 * `const`s in a `session/respond` schema and in a client tool's parameters come back as the JSON values the
 * schema names (numbers, booleans), and the structural features the GGUF grammar enforces (nested objects,
 * array item counts, optional members, closed objects, unions, string lengths and the date, time,
 * date-time, uuid and ipv4 formats) give answers valid against the client's schema. Structure, not wording.
 * Runs with OAM_GGUF_TESTS=1 (`deno task test:gguf`).
 */
import assert from "node:assert/strict";
import { Ajv } from "ajv";
import { createLlamaModel } from "../../../src/models/llama_model.ts";
import { closeLlamaModels } from "../../../src/models/llama_runtime.ts";
import type { JsonObject } from "../../../src/protocol/json.ts";
import { isIpv4, isUuid } from "../../../src/schema/format_names.ts";
import { WireClient } from "../../helpers/wire.ts";
import { fixtureConfig, GGUF_ENABLED } from "./fixture.ts";

/** A real model on a shared 2-core machine: loading and generating can take seconds under load. */
const SLOW_MS = 120_000;

async function callSlow(client: WireClient, method: string, params?: JsonObject): Promise<JsonObject> {
  const response = await client.response(client.request(method, params), SLOW_MS);
  if ("error" in response) throw new Error(`${method} failed: ${JSON.stringify(response.error)}`);
  return response.result as JsonObject;
}

const NON_STRING: JsonObject = {
  type: "object",
  properties: {
    reasoning: { type: "string" },
    level: { enum: [1, 2, 3] },
    range: { type: "integer", enum: [1, 5, 10] },
    hostile: { enum: [true, false] },
    weight: { enum: [0.5, 1.5] },
    mood: { enum: ["calm", 2, true] },
    version: { const: 7 },
  },
  required: ["reasoning", "level", "range", "hostile", "weight", "mood", "version"],
};

const SHAPES: JsonObject = {
  type: "object",
  additionalProperties: false,
  properties: {
    npc: {
      type: "object",
      properties: {
        name: { type: "string" },
        tags: { type: "array", items: { type: "string" }, minItems: 2, maxItems: 3 },
      },
      required: ["name", "tags"],
      additionalProperties: false,
    },
    items: {
      type: "array",
      items: {
        type: "object",
        properties: { id: { type: "integer", minimum: 1, maximum: 5 }, qty: { type: "number" } },
        required: ["id"],
      },
      minItems: 1,
      maxItems: 2,
    },
    note: { type: ["string", "null"] },
    mood: { anyOf: [{ type: "string", enum: ["calm", "angry"] }, { type: "integer" }] },
  },
  required: ["npc", "items", "mood"],
};

/** A designer's string constraints: a name of at least 12 characters, a short tag, a date, a time, a stamp. */
const STRING_LIMITS: JsonObject = {
  type: "object",
  properties: {
    name: { type: "string", minLength: 12 },
    tag: { type: "string", minLength: 2, maxLength: 3 },
    when: { type: "string", format: "date" },
    at: { type: "string", format: "time" },
    stamp: { type: "string", format: "date-time" },
  },
  required: ["name", "tag", "when", "at", "stamp"],
};

/** A guard's id and address: the formats the answer grammar writes with rules of its own. */
const NAMES: JsonObject = {
  type: "object",
  properties: { id: { type: "string", format: "uuid" }, host: { type: "string", format: "ipv4" } },
  required: ["id", "host"],
};

Deno.test({
  name: "gguf schemas: a designer's enums, consts and shapes on a llama model",
  ignore: !GGUF_ENABLED,
  // node-llama-cpp's native addon keeps async work Deno's sanitizers cannot attribute to a test.
  sanitizeOps: false,
  sanitizeResources: false,
  async fn(t) {
    const config = await fixtureConfig();
    const llama = { type: "llama", ...config } as unknown as JsonObject;
    const client = new WireClient({ systemModel: () => createLlamaModel(config) });
    // Formats are checked by hand below: ajv would print an "unknown format" line for each.
    const ajv = new Ajv({ strict: false, logger: false });
    try {
      await t.step(
        "session/respond: non-string enums and consts come back as numbers and booleans",
        async () => {
          await callSlow(client, "session/create", { session: "s", model: llama });
          const validate = ajv.compile(NON_STRING);
          for (const prompt of ["The stranger asks you to open the gate.", "Hello"]) {
            const result = await callSlow(client, "session/respond", {
              session: "s",
              prompt,
              schema: NON_STRING,
            });
            const structured = result.structured as JsonObject;
            assert.ok(
              validate(structured),
              `${JSON.stringify(validate.errors)} in ${JSON.stringify(structured)}`,
            );
            assert.equal(typeof structured.level, "number");
            assert.equal(typeof structured.hostile, "boolean");
            assert.equal(structured.version, 7);
          }
        },
      );

      await t.step(
        "a client tool's non-string enum arguments come back as numbers and booleans",
        async () => {
          const parameters: JsonObject = {
            type: "object",
            properties: { level: { enum: [1, 2, 3] }, loud: { enum: [true, false] } },
            required: ["level", "loud"],
          };
          await callSlow(client, "session/create", {
            session: "t",
            tools: [{ name: "set_alarm", description: "Set the alarm level.", parameters }],
            options: { toolChoice: "required", maxToolRounds: 1 },
            model: llama,
          });
          const id = client.request("session/respond", { session: "t", prompt: "Raise the alarm." });
          // The call, or the turn's failure (an answer that does not match the tool's schema ends the turn).
          const first = await client.waitFor(
            (m) => m.method === "tool/call" || (m.id === id && !("method" in m)),
            SLOW_MS,
          );
          assert.equal(first.method, "tool/call", JSON.stringify(first));
          const call = first;
          const args = ((call.params as JsonObject).call as JsonObject).arguments as JsonObject;
          const validate = ajv.compile(parameters);
          assert.ok(validate(args), `${JSON.stringify(validate.errors)} in ${JSON.stringify(args)}`);
          client.reply(call.id!, { output: "done" });
          const response = await client.response(id, SLOW_MS);
          assert.ok("result" in response, JSON.stringify(response));
        },
      );

      await t.step(
        "string lengths and date, time and date-time formats are enforced, without a warning",
        async () => {
          await callSlow(client, "session/create", { session: "v", model: llama });
          const validate = ajv.compile(STRING_LIMITS);
          for (const prompt of ["Hello", "What is the capital of France?"]) {
            const result = await callSlow(client, "session/respond", {
              session: "v",
              prompt,
              schema: STRING_LIMITS,
            });
            const structured = result.structured as JsonObject;
            assert.ok(
              validate(structured),
              `${JSON.stringify(validate.errors)} in ${JSON.stringify(structured)}`,
            );
            // ajv here checks no format: the shapes the grammar writes (RFC 3339, milliseconds optional).
            assert.match(structured.when as string, /^\d{4}-\d{2}-\d{2}$/);
            assert.match(structured.at as string, /^\d{2}:\d{2}:\d{2}(\.\d{3})?(Z|[+-]\d{2}:\d{2})$/);
            assert.match(
              structured.stamp as string,
              /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{3})?(Z|[+-]\d{2}:\d{2})$/,
            );
            assert.equal(result.warnings, undefined, JSON.stringify(result.warnings));
          }
        },
      );

      await t.step("uuid and ipv4 formats are generated valid, without a warning", async () => {
        await callSlow(client, "session/create", { session: "w", model: llama });
        for (const prompt of ["Hello", "Register the new gate guard."]) {
          const result = await callSlow(client, "session/respond", { session: "w", prompt, schema: NAMES });
          const structured = result.structured as JsonObject;
          assert.ok(isUuid(structured.id as string), JSON.stringify(structured));
          assert.ok(isIpv4(structured.host as string), JSON.stringify(structured));
          assert.equal(result.warnings, undefined, JSON.stringify(result.warnings));
        }
      });

      await t.step("nested objects, item counts, optional members, closed objects, unions", async () => {
        await callSlow(client, "session/create", { session: "u", model: llama });
        const validate = ajv.compile(SHAPES);
        for (const prompt of ["Hello", "Count to five."]) {
          const result = await callSlow(client, "session/respond", { session: "u", prompt, schema: SHAPES });
          const structured = result.structured as JsonObject;
          assert.ok(
            validate(structured),
            `${JSON.stringify(validate.errors)} in ${JSON.stringify(structured)}`,
          );
        }
      });
    } finally {
      await client.close();
      await closeLlamaModels();
    }
  },
});
