/**
 * `session/respond` with an object schema that has no `properties`: the models that generate it as `{}` (the
 * on-device and scripted ones) get a warning naming it, the same one `content/generate` gives; an `openai`
 * model, which gets the schema as written and may fill the object, does not.
 */
import assert from "node:assert/strict";
import { scripted, WireClient } from "../helpers/wire.ts";
import type { JsonObject } from "../../src/protocol/json.ts";
import { completion, json, MockServer } from "../models/openai_mock_server.ts";

const PLAIN = "object without 'properties' is generated as {}; list the properties it should have";

Deno.test("session/respond: an object schema without properties is warned about on the scripted model", async () => {
  const c = new WireClient();
  await c.call("session/create", { session: "s", model: scripted({ json: {} }, { json: { name: "Bag" } }) });
  const bare = await c.call("session/respond", { session: "s", prompt: "Loot.", schema: { type: "object" } });
  assert.deepEqual(bare.structured, {});
  assert.deepEqual(bare.warnings, [`#: ${PLAIN}`]);
  const nested = await c.call("session/respond", {
    session: "s",
    prompt: "Loot.",
    schema: { type: "object", properties: { name: { type: "string" }, stats: { type: "object" } } },
  });
  assert.deepEqual(nested.warnings, [`#/properties/stats: ${PLAIN}`]);
  await c.close();
});

Deno.test("session/respond: an object schema with properties, or that asks for {}, has no such warning", async () => {
  const c = new WireClient();
  await c.call("session/create", { session: "s", model: scripted({ json: {} }, { json: { a: "x" } }) });
  const empty = await c.call("session/respond", {
    session: "s",
    prompt: "Nothing.",
    schema: { type: "object", additionalProperties: false },
  });
  assert.equal(empty.warnings, undefined);
  const full = await c.call("session/respond", {
    session: "s",
    prompt: "A.",
    schema: { type: "object", properties: { a: { type: "string" } } },
  });
  assert.equal(full.warnings, undefined);
  await c.close();
});

Deno.test("session/respond: an openai model, which gets the schema as written, is not told it gets {}", async () => {
  const server = new MockServer(() => json(completion('{"gold": 3}')));
  const c = new WireClient();
  try {
    await c.call("session/create", {
      session: "s",
      model: { type: "openai", baseURL: server.baseURL, model: "mock-model" },
    });
    const result = await c.call("session/respond", {
      session: "s",
      prompt: "Loot.",
      schema: { type: "object" },
    });
    assert.deepEqual(result.structured, { gold: 3 });
    assert.equal(result.warnings, undefined, JSON.stringify(result.warnings));
    const body = server.chatBodies[0] as JsonObject;
    assert.deepEqual(((body.response_format as JsonObject).json_schema as JsonObject).schema, {
      type: "object",
    });
  } finally {
    await c.close();
    await server.close();
  }
});

Deno.test("session/respond: an invalid answer's message names the schema's warnings, as content/generate's does", async () => {
  const c = new WireClient();
  await c.call("session/create", { session: "s", model: scripted({ json: { bag: { gold: 3 } } }) });
  c.request("session/respond", {
    session: "s",
    prompt: "Loot.",
    schema: { type: "object", properties: { bag: { type: "object" } } },
  }, 1);
  const error = (await c.response(1)).error as JsonObject;
  assert.equal(error.code, -32012);
  assert.ok(
    String(error.message).endsWith(`The schema's warnings: #/properties/bag: ${PLAIN}.`),
    String(error.message),
  );
  // A turn without schema warnings keeps the model's message alone.
  await c.call("session/create", { session: "t", model: scripted({ json: { a: 1 } }) });
  c.request("session/respond", {
    session: "t",
    prompt: "A.",
    schema: { type: "object", properties: { a: { type: "string" } } },
  }, 2);
  const plain = (await c.response(2)).error as JsonObject;
  assert.ok(!String(plain.message).includes("warnings"), String(plain.message));
  await c.close();
});

Deno.test("session/respond: a scripted answer's failure names the place in the designer's schema, not the generation schema's $defs", async () => {
  const c = new WireClient();
  await c.call("session/create", { session: "s", model: scripted({ json: { reward: { amount: 9999 } } }) });
  c.request("session/respond", {
    session: "s",
    prompt: "A reward.",
    schema: {
      type: "object",
      properties: { reward: { type: "object", properties: { amount: { type: "integer", maximum: 500 } } } },
    },
  }, 1);
  const error = (await c.response(1)).error as JsonObject;
  assert.ok(
    String(error.message).startsWith(
      "The model gave an invalid answer: the answer does not match the response schema: " +
        "#/properties/reward/properties/amount: must be <= 500. It was step 1 of 1",
    ),
    String(error.message),
  );
  assert.equal(
    (error.data as JsonObject).problem,
    "the answer does not match the response schema: #/properties/reward/properties/amount: must be <= 500",
  );
  await c.close();
});
