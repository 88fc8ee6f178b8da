import assert from "node:assert/strict";
import { scripted, WireClient } from "../helpers/wire.ts";
import type { BridgeConfiguration } from "../../src/engine/configuration.ts";
import type { LanguageModel, StepRequest } from "../../src/models/language_model.ts";
import { parseScript, ScriptedModel } from "../../src/models/scripted.ts";
import type { JsonObject, JsonValue } from "../../src/protocol/json.ts";
import { completion, json, MockServer } from "../models/openai_mock_server.ts";

/** A "probe" model type: plays a script like the scripted model and records every step request. */
function probeConfig(requests: StepRequest[]): Partial<BridgeConfiguration> {
  return {
    modelFactory: (spec) => {
      if (spec.type !== "probe" || !("raw" in spec)) return undefined;
      const inner = new ScriptedModel(parseScript(spec.raw, spec.path));
      const model: LanguageModel = {
        kind: "probe",
        contextSize: 8192,
        trimsHistory: false,
        availability: () => inner.availability(),
        step: (request) => {
          requests.push(request);
          return inner.step(request);
        },
      };
      return model;
    },
  };
}

function probe(...steps: JsonValue[]): JsonObject {
  return { type: "probe", steps };
}

const DEFAULT_INSTRUCTIONS =
  "You write content for a video game. Match the requested format exactly. Keep the " +
  "text short and vivid, and stay consistent with the request and its facts.";

const ITEM_SCHEMA = {
  type: "object",
  properties: {
    name: { type: "string" },
    price: { type: "integer", minimum: 1 },
    rarity: { type: "string", enum: ["common", "rare"] },
  },
  required: ["name", "price", "rarity"],
};

async function failure(c: WireClient, params: JsonObject): Promise<JsonObject> {
  const r = await c.response(c.request("content/generate", params));
  assert.ok("error" in r, `content/generate should fail: ${JSON.stringify(r)}`);
  return r.error as JsonObject;
}

Deno.test("content/generate: keys come back in schema order; no warnings key when there are none", async () => {
  const c = new WireClient();
  const id = c.request("content/generate", {
    prompt: "A sword for the blacksmith's shop.",
    schema: ITEM_SCHEMA,
    model: scripted({ json: { rarity: "rare", price: 45, name: "Oakcleaver" } }),
  });
  await c.response(id);
  assert.deepEqual(c.lines, [
    `{"jsonrpc":"2.0","id":${id},"result":{"content":{"name":"Oakcleaver","price":45,"rarity":"rare"}}}`,
  ]);
  await c.close();
});

Deno.test("content/generate: instructions, prompt with facts, root name Content, no tools", async () => {
  const requests: StepRequest[] = [];
  const c = new WireClient(probeConfig(requests));
  const answer = { json: { name: "x", price: 1, rarity: "common" } };
  await c.call("content/generate", {
    prompt: "A rumor.",
    schema: ITEM_SCHEMA,
    // Parsed, so that `__proto__` is an own key (as it is when it arrives over the wire).
    context: JSON.parse('{"town":"Oak","__proto__":1}'),
    temperature: 0.2,
    model: probe(answer),
  });
  await c.call("content/generate", {
    prompt: "A rumor.",
    schema: { ...ITEM_SCHEMA, title: "Item" },
    context: "It is night",
    instructions: "  Write like a bard.  ",
    model: probe(answer),
  });
  await c.call("content/generate", {
    prompt: "A rumor.",
    schema: ITEM_SCHEMA,
    context: null,
    instructions: "   ",
    model: probe(answer),
  });
  assert.equal(requests.length, 3);
  assert.equal(requests[0].instructions, DEFAULT_INSTRUCTIONS);
  assert.equal(requests[0].prompt, 'A rumor.\nFacts: {"town":"Oak","__proto__":1}');
  assert.deepEqual(requests[0].options, { temperature: 0.2 });
  assert.equal(requests[0].toolCallingMode, "disallowed");
  assert.deepEqual(requests[0].tools, []);
  assert.equal(requests[0].responseSchema?.name, "Content");
  assert.equal(requests[0].responseSchema?.generationSchema.title, "Content");
  assert.deepEqual(requests[0].responseSchema?.jsonSchema, ITEM_SCHEMA);
  assert.equal(requests[1].instructions, "Write like a bard.");
  assert.equal(requests[1].prompt, 'A rumor.\nFacts: "It is night"');
  assert.equal(requests[1].responseSchema?.generationSchema.title, "Item");
  assert.equal(requests[2].instructions, DEFAULT_INSTRUCTIONS);
  assert.equal(requests[2].prompt, "A rumor.");
  await c.close();
});

Deno.test("content/generate: client tools — tool/call params {requestId, call}, tool mode auto", async () => {
  const requests: StepRequest[] = [];
  const c = new WireClient(probeConfig(requests));
  c.request("content/generate", {
    prompt: "A rumor about the mill.",
    schema: { type: "object", properties: { rumor: { type: "string" } }, required: ["rumor"] },
    tools: [{
      name: "town_facts",
      description: "Facts about a place in town.",
      parameters: { type: "object", properties: { place: { type: "string" } } },
    }],
    toolTimeoutSeconds: 30,
    model: probe(
      { toolCalls: [{ name: "town_facts", arguments: { place: "mill" } }] },
      { template: '{"rumor":"They say {toolOutput}."}' },
    ),
  }, "g1");
  const call = await c.toolCall(1);
  const params = call.params as JsonObject;
  assert.deepEqual(Object.keys(params), ["requestId", "call"]);
  assert.equal(params.requestId, "g1");
  assert.deepEqual({ ...(params.call as JsonObject), id: "x" }, {
    id: "x",
    name: "town_facts",
    arguments: { place: "mill" },
  });
  c.reply(call.id as string, { output: "the mill wheel turns at night" });
  const response = await c.response("g1");
  assert.deepEqual(response.result, { content: { rumor: "They say the mill wheel turns at night." } });
  assert.deepEqual(c.related("g1").map(WireClient.kind), ["tool/call", "response"]);
  assert.deepEqual(requests.map((r) => r.toolCallingMode), ["allowed", "allowed"]);
  await c.close();
});

Deno.test("content/generate: warnings for unknown keys, schema constraints and tools", async () => {
  const c = new WireClient();
  const result = await c.call("content/generate", {
    prompt: "A code.",
    schema: { type: "object", properties: { code: { type: "string", pattern: "^[A-Z]+$" } } },
    tools: [{ name: "look" }],
    colour: "red",
    model: scripted({ json: { code: "AB" } }),
  });
  assert.deepEqual(result, {
    content: { code: "AB" },
    warnings: [
      "Unknown parameter 'colour' was ignored.",
      "#/properties/code: pattern '^[A-Z]+$' is described to the model but not enforced",
      "look: no description; the model may not know when to call it.",
    ],
  });
  await c.close();
});

Deno.test("content/generate: warnings for schema mistakes that would otherwise pass in silence (a misspelt keyword, a required name that is no property, an empty enum, keywords not supported)", async () => {
  const c = new WireClient();
  const result = await c.call("content/generate", {
    prompt: "A quest.",
    schema: {
      type: "object",
      properties: {
        title: { type: "string", maxLenght: 40 },
        reward: { type: "integer", minimum: 1, maxium: 500 },
        tags: { type: "array", item: { type: "string" } },
        mood: { type: "string", enum: [] },
        giver: { type: "string", not: { const: "the player" } },
        "x-note": { type: "string", "x-required": true, Description: "Who asks" },
      },
      requried: ["title"],
      required: ["title", "rewards"],
      if: { required: ["reward"] },
      then: { required: ["tags"] },
    },
    model: scripted({ json: { title: "Rats" } }),
  });
  assert.deepEqual(result, {
    content: { title: "Rats" },
    warnings: [
      "#: unknown keyword 'requried' is ignored (did you mean 'required'?)",
      "#: 'if' is not supported and is ignored (neither enforced nor described to the model)",
      "#: 'then' is not supported and is ignored (neither enforced nor described to the model)",
      "#: 'required' names 'rewards', which is not one of the properties (title, reward, tags, mood, giver, x-note)",
      "#/properties/title: unknown keyword 'maxLenght' is ignored (did you mean 'maxLength'?)",
      "#/properties/reward: unknown keyword 'maxium' is ignored (did you mean 'maximum'?)",
      "#/properties/tags: unknown keyword 'item' is ignored (did you mean 'items'?)",
      "#/properties/tags: array without 'items' is generated as an array of strings",
      "#/properties/mood: 'enum' is empty, so no value could match; it is ignored",
      "#/properties/giver: 'not' is not supported and is ignored (neither enforced nor described to the model)",
      "#/properties/x-note: unknown keyword 'Description' is ignored (did you mean 'description'?)",
    ],
  });
  await c.close();
});

Deno.test("content/generate: invalid params and schemas fail before any model call", async () => {
  const requests: StepRequest[] = [];
  const c = new WireClient(probeConfig(requests));
  const model = probe({ json: {} });
  assert.deepEqual(await failure(c, { schema: ITEM_SCHEMA, model }), {
    code: -32602,
    message: "Missing required parameter 'prompt'.",
    data: { code: "invalid_params" },
  });
  assert.deepEqual(await failure(c, { prompt: "p", model }), {
    code: -32602,
    message: "Missing required parameter 'schema'.",
    data: { code: "invalid_params" },
  });
  assert.deepEqual(await failure(c, { prompt: "p", schema: "object", model }), {
    code: -32602,
    message: `Parameter 'schema' must be an object; got "object".`,
    data: { code: "invalid_params" },
  });
  const invalid = await failure(c, {
    prompt: "p",
    schema: { type: "object", properties: { a: { type: "array", items: 5 } } },
    model,
  });
  assert.equal(invalid.code, -32007);
  assert.deepEqual(invalid.data, {
    code: "invalid_schema",
    path: "schema",
    schemaPath: "#/properties/a/items",
  });
  assert.match(invalid.message as string, /^schema: expected a schema object/);
  const unsupported = await failure(c, { prompt: "p", schema: { type: "frob" }, model });
  assert.deepEqual(unsupported.data, { code: "invalid_schema", path: "schema", schemaPath: "#" });
  const badTool = await failure(c, {
    prompt: "p",
    schema: ITEM_SCHEMA,
    tools: [{ name: "t", description: "d", parameters: { type: "frob" } }],
    model,
  });
  assert.deepEqual(badTool.data, { code: "invalid_schema", path: "tools[0].parameters", schemaPath: "#" });
  assert.deepEqual(await failure(c, { prompt: "p", schema: ITEM_SCHEMA, temperature: "hot", model }), {
    code: -32602,
    message: `Parameter 'temperature' must be a number; got "hot".`,
    data: { code: "invalid_params" },
  });
  assert.equal(requests.length, 0);
  await c.close();
});

Deno.test("content/generate: model errors are returned; cancelled at shutdown", async () => {
  const c = new WireClient();
  assert.deepEqual(
    await failure(c, {
      prompt: "p",
      schema: ITEM_SCHEMA,
      model: scripted({ error: "guardrail_violation", message: "Blocked." }),
    }),
    { code: -32002, message: "Blocked.", data: { code: "guardrail_violation" } },
  );
  const id = c.request("content/generate", {
    prompt: "p",
    schema: ITEM_SCHEMA,
    model: scripted({ json: {}, delayMs: 60_000 }),
  });
  await c.close();
  assert.equal(((await c.response(id)).error as JsonObject).code, -32009);
});

Deno.test("content/generate: an invalid answer's message names the schema's warnings that explain the schema it was held to", async () => {
  // `a` has no type (only a `not`, which is ignored), so it is generated as a string: the step's number was
  // refused with "must be string", a type the schema never said, and the warnings saying why were dropped.
  const c = new WireClient();
  const error = await failure(c, {
    prompt: "p",
    schema: { type: "object", properties: { a: { not: { type: "string" } } } },
    model: scripted({ json: { a: 1 } }),
  });
  assert.equal(error.code, -32012);
  assert.equal(
    error.message,
    "The model gave an invalid answer: the answer does not match the response schema: #/properties/a: must be " +
      "string. It was step 1 of 1, and no step is left for its retry: fix that step, or add a step after it for " +
      "the retry to play. The schema's warnings: #/properties/a: 'not' is not supported and is ignored (neither " +
      "enforced nor described to the model); #/properties/a: schema without a type is generated as a string.",
  );
  assert.deepEqual(Object.keys(error.data as JsonObject), ["code", "problem"]);
  // Without schema warnings the message is the model's alone.
  const plain = await failure(c, {
    prompt: "p",
    schema: ITEM_SCHEMA,
    model: scripted({ json: { name: "x" } }),
  });
  assert.ok(!String(plain.message).includes("warnings"), String(plain.message));
  await c.close();
});

Deno.test("content/generate: an object schema without properties, at the root or inside, is warned about: it is generated as {}", async () => {
  const c = new WireClient();
  assert.deepEqual(
    await c.call("content/generate", {
      prompt: "A sword.",
      schema: { type: "object" },
      model: scripted({ json: {} }),
    }),
    {
      content: {},
      warnings: ["#: object without 'properties' is generated as {}; list the properties it should have"],
    },
  );
  const nested = await c.call("content/generate", {
    prompt: "A sword.",
    schema: {
      type: "object",
      properties: {
        name: { type: "string" },
        stats: { type: "object", properties: {} },
        tags: { type: "array", items: { type: "object", description: "A tag." } },
        owner: { type: "object", properties: { name: { type: "string" } } },
      },
    },
    model: scripted({ json: { name: "Sword", stats: {}, tags: [], owner: { name: "Gorm" } } }),
  });
  assert.deepEqual(nested.warnings, [
    "#/properties/stats: object without 'properties' is generated as {}; list the properties it should have",
    "#/properties/tags/items: object without 'properties' is generated as {}; list the properties it should have",
  ]);
  // A free-form object (additionalProperties) has the converter's own warning, once.
  const free = await c.call("content/generate", {
    prompt: "Loot.",
    schema: { type: "object", additionalProperties: { type: "integer" } },
    model: scripted({ json: {} }),
  });
  assert.equal(
    (free.warnings as string[]).filter((w) => w.includes("empty object") || w.includes("{}")).length,
    1,
  );
  await c.close();
});

Deno.test("content/generate: an openai model, which gets the schema as written, is not told an object is {}", async () => {
  const server = new MockServer(() => json(completion('{"gold": 3}')));
  const c = new WireClient();
  try {
    const result = await c.call("content/generate", {
      prompt: "Loot.",
      schema: { type: "object" },
      model: { type: "openai", baseURL: server.baseURL, model: "mock-model" },
    });
    assert.deepEqual(result, { content: { gold: 3 } });
  } finally {
    await c.close();
    await server.close();
  }
});

Deno.test("content/generate: the warning follows the model that runs, not the spec (a host's default model)", async () => {
  // `oam stdio --model gguf:…` answers a request without `model` with its llama model.
  const script = parseScript([{ json: { gold: 3 } }], "script");
  const llama = (): LanguageModel => {
    const inner = new ScriptedModel(structuredClone(script));
    return {
      kind: "llama",
      contextSize: 8192,
      trimsHistory: false,
      availability: () => inner.availability(),
      step: (request) => inner.step({ ...request, responseSchema: null }),
    };
  };
  const c = new WireClient({ systemModel: llama });
  const result = await c.call("content/generate", { prompt: "Loot.", schema: { type: "object" } });
  assert.deepEqual(result, { content: { gold: 3 } });
  await c.close();
});
