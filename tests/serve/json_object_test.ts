/**
 * `response_format: json_object` on backends that can constrain an answer to JSON (an OpenAI-compatible server,
 * the in-process GGUF model): the answer is generated under an "any JSON object" schema, so a model that would
 * write prose writes an object; others (the on-device model, a script) get the instruction only, and their
 * answer's object is taken out of any prose or code fence around it.
 */
import assert from "node:assert/strict";
// deno-lint-ignore no-import-prefix -- a test-only dependency, pinned here rather than in the import map
import OpenAI from "npm:openai@7.55.0";
import { createLlamaModel } from "../../src/models/llama_model.ts";
import { grammarSchema } from "../../src/models/llama_schema.ts";
import { createOpenAIModel } from "../../src/models/openai_model.ts";
import { ScriptedModel } from "../../src/models/scripted.ts";
import { parseChatRequest } from "../../src/serve/chat_request.ts";
import { JSON_OBJECT_SCHEMA, planCompletion } from "../../src/serve/completion_plan.ts";
import { resolveServeConfiguration } from "../../src/serve/server_config.ts";
import type { LanguageModel } from "../../src/models/language_model.ts";
import type { JsonObject } from "../../src/protocol/json.ts";
import { chunk, completion, json, MockServer, usageChunk } from "../models/openai_mock_server.ts";
import { ask, postChat, serve, sseData } from "./serve_fixture.ts";

const JSON_OBJECT = { type: "json_object" };

function planFor(model: LanguageModel) {
  const config = resolveServeConfiguration({ models: new Map([["system", model]]) });
  return planCompletion(
    parseChatRequest({ messages: [{ role: "user", content: "Hi" }], response_format: JSON_OBJECT }),
    config,
  );
}

Deno.test("json_object constrains the answer where the backend can: an OpenAI-compatible server, a GGUF model", () => {
  for (
    const model of [
      createOpenAIModel({ baseURL: "http://127.0.0.1:9/v1", model: "tiny" }),
      createLlamaModel({ path: "/nonexistent/tiny.gguf" }),
    ]
  ) {
    const plan = planFor(model);
    assert.deepEqual(plan.format, { kind: "json_object", schema: JSON_OBJECT_SCHEMA }, model.kind);
    assert.match(plan.instructions ?? "", /JSON object/);
  }
  assert.deepEqual(planFor(new ScriptedModel({ steps: [] })).format, { kind: "json_object" });
});

Deno.test("json_object with tools the model may call: a server is not sent the schema, which would disable tool calling on llama.cpp", () => {
  const weather = {
    type: "function",
    function: {
      name: "get_weather",
      parameters: { type: "object", properties: { city: { type: "string" } } },
    },
  };
  const formatOf = (model: LanguageModel, extra: JsonObject) =>
    planCompletion(
      parseChatRequest({
        messages: [{ role: "user", content: "Hi" }],
        response_format: JSON_OBJECT,
        tools: [weather],
        ...extra,
      }),
      resolveServeConfiguration({ models: new Map([["system", model]]) }),
    ).format;
  const server = createOpenAIModel({ baseURL: "http://127.0.0.1:9/v1", model: "tiny" });
  assert.deepEqual(formatOf(server, {}), { kind: "json_object" });
  assert.deepEqual(formatOf(server, { tool_choice: "none" }), {
    kind: "json_object",
    schema: JSON_OBJECT_SCHEMA,
  });
  // The GGUF backend calls tools first and then generates the answer under the grammar.
  const gguf = createLlamaModel({ path: "/nonexistent/tiny.gguf" });
  assert.deepEqual(formatOf(gguf, {}), { kind: "json_object", schema: JSON_OBJECT_SCHEMA });
});

Deno.test("the GGUF grammar of json_object's schema admits any object", () => {
  assert.deepEqual(JSON_OBJECT_SCHEMA.jsonSchema, { type: "object" });
  assert.deepEqual(grammarSchema(JSON_OBJECT_SCHEMA.generationSchema), {
    type: "object",
    properties: {},
    required: [],
    additionalProperties: true,
  });
});

Deno.test("json_object over an OpenAI-compatible server asks it for a JSON object schema and answers its object", async () => {
  const answer = '{"capital": "Paris", "country": {"name": "France"}}';
  const compact = JSON.stringify(JSON.parse(answer));
  const up = new MockServer((request, _i, server) => {
    if (request.path.endsWith("/models")) return json({ object: "list", data: [{ id: "tiny" }] });
    return (request.body as JsonObject).stream === true
      ? server.sse([
        chunk({ role: "assistant", content: "" }),
        chunk({ content: answer }),
        chunk({}, "stop"),
        usageChunk(20, 12),
      ])
      : json(completion(answer, { usage: { prompt_tokens: 20, completion_tokens: 12 } }));
  });
  try {
    await using s = await serve(createOpenAIModel({ baseURL: up.baseURL, model: "tiny" }));
    const response = await postChat(s.base, {
      messages: ask("Capital of France?"),
      response_format: JSON_OBJECT,
    });
    const body = await response.json();
    assert.equal(response.status, 200, JSON.stringify(body));
    assert.equal(body.choices[0].message.content, compact);
    assert.equal(body.choices[0].finish_reason, "stop");
    const sent = up.chatBodies[0] as JsonObject;
    assert.deepEqual(sent.response_format, {
      type: "json_schema",
      json_schema: { name: "JsonObject", schema: { type: "object" } },
    });

    const streamed = await postChat(s.base, {
      messages: ask("Capital of France?"),
      response_format: JSON_OBJECT,
      stream: true,
    });
    assert.equal(streamed.status, 200);
    const chunks = (await sseData(streamed)).slice(0, -1).map((d) => JSON.parse(d));
    assert.equal(chunks.map((c) => c.choices[0]?.delta.content ?? "").join(""), compact);
    assert.equal(chunks.at(-1).choices[0].finish_reason, "stop");
  } finally {
    await up.close();
  }
});

Deno.test("json_object over a server that still answers prose: tried again, then a 500 invalid_json_output naming the output", async () => {
  const up = new MockServer((request) => {
    if (request.path.endsWith("/models")) return json({ object: "list", data: [{ id: "tiny" }] });
    return json(completion("Paris."));
  });
  try {
    await using s = await serve(createOpenAIModel({ baseURL: up.baseURL, model: "tiny" }));
    const response = await postChat(s.base, {
      messages: ask("Capital of France?"),
      response_format: JSON_OBJECT,
    });
    const error = (await response.json()).error;
    assert.equal(response.status, 500);
    assert.deepEqual([error.type, error.code], ["server_error", "invalid_json_output"]);
    assert.match(error.message, /JSON/);
    assert.equal(up.chatBodies.length, 3, "three attempts, each telling the model what was wrong");
    // The server tried already: an SDK's own retries would only run the same attempts again.
    assert.equal(response.headers.get("x-should-retry"), "false");

    const client = new OpenAI({ baseURL: `${s.base}/v1`, apiKey: "x" });
    const failed = await client.chat.completions.create({
      model: "system",
      messages: [{ role: "user", content: "Capital of France?" }],
      response_format: { type: "json_object" },
    }).then(() => null, (e) => e);
    assert.ok(failed instanceof OpenAI.InternalServerError, String(failed));
    assert.equal(up.chatBodies.length, 6, "one request of the SDK's: three attempts, not nine");
  } finally {
    await up.close();
  }
});

Deno.test("a json_schema of any object ({type: object}) is not narrowed to {} where the backend constrains answers", () => {
  const gguf = resolveServeConfiguration({
    models: new Map([["system", createLlamaModel({ path: "/nonexistent/tiny.gguf" })]]),
  });
  const planned = (schema: JsonObject) => {
    const request = parseChatRequest({
      messages: [{ role: "user", content: "Hi" }],
      response_format: { type: "json_schema", json_schema: { name: "any", schema } },
    });
    const format = planCompletion(request, gguf).format;
    assert.equal(format.kind, "json_schema");
    return format.kind === "json_schema" ? format.schema : JSON_OBJECT_SCHEMA;
  };
  const anyObject: JsonObject[] = [
    { type: "object" },
    { type: "object", additionalProperties: true, description: "Any." },
  ];
  for (const schema of anyObject) {
    const { generationSchema, jsonSchema } = planned(schema);
    assert.equal((grammarSchema(generationSchema) as JsonObject).additionalProperties, true);
    assert.deepEqual(jsonSchema, schema, "answers are still checked against the client's schema");
  }
  const closed = planned({ type: "object", additionalProperties: false });
  assert.equal((grammarSchema(closed.generationSchema) as JsonObject).additionalProperties, false);
});
