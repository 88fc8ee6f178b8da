/**
 * planCompletion: what a Chat Completions request becomes for the agent (tools, tool policy, answer format,
 * sampling), and which error a request with several problems gets (model, messages, tools, tool_choice,
 * response_format, in that order).
 */
import assert from "node:assert/strict";
import type { AgentTool } from "../../src/agent/types.ts";
import type { LanguageModel } from "../../src/models/language_model.ts";
import { ScriptedModel } from "../../src/models/scripted.ts";
import { parseChatRequest } from "../../src/serve/chat_request.ts";
import { planCompletion } from "../../src/serve/completion_plan.ts";
import { OpenAIError } from "../../src/serve/openai_error.ts";
import { resolveServeConfiguration } from "../../src/serve/server_config.ts";
import type { JsonObject } from "../../src/protocol/json.ts";

const LOOKUP: AgentTool = {
  name: "lookup_price",
  description: "Price of an item.",
  jsonSchema: { type: "object", properties: { item: { type: "string" } } },
  generationSchema: { type: "object", properties: [] } as never,
  execution: "local",
  timeoutMs: 5000,
  run: () => ({ output: 1, isError: false }),
};
const config = resolveServeConfiguration({
  models: new Map([["system", new ScriptedModel({ steps: [] })]]),
  serverTools: [LOOKUP],
});

function tool(name: string, parameters: JsonObject = { type: "object", properties: {} }) {
  return { type: "function", function: { name, description: `${name}.`, parameters } };
}

function plan(body: JsonObject) {
  return planCompletion(parseChatRequest({ messages: [{ role: "user", content: "Hi" }], ...body }), config);
}

function rejects(body: JsonObject, param: string | null, code: string, message?: RegExp) {
  assert.throws(() => plan(body), (error: unknown) => {
    assert.ok(error instanceof OpenAIError, String(error));
    const json = error.toJson().error as JsonObject;
    assert.equal(json.param, param, String(json.message));
    assert.equal(json.code, code, String(json.message));
    if (message) assert.match(String(json.message), message);
    return true;
  });
}

Deno.test("planCompletion: client tools first, then the server's; the tool policy of each tool_choice", () => {
  const p = plan({ tools: [tool("get_weather")], temperature: 0.5 });
  assert.deepEqual(p.tools.map((t) => t.name), ["get_weather", "lookup_price"]);
  assert.deepEqual([...p.clientToolNames], ["get_weather"]);
  assert.deepEqual(p.policy, {
    choice: "auto",
    maxToolRounds: config.maxToolRounds,
    maxToolCalls: config.maxToolCalls,
    enabledTools: null,
  });
  assert.equal(plan({ tool_choice: "none" }).policy.choice, "none");
  assert.equal(plan({ tool_choice: "required" }).policy.choice, "required", "a server tool counts");
  assert.deepEqual(
    plan({
      tools: [tool("get_weather")],
      tool_choice: { type: "function", function: { name: "get_weather" } },
    })
      .policy.choice,
    { tool: "get_weather" },
  );
  const allowed = plan({
    tools: [tool("get_weather")],
    tool_choice: {
      type: "allowed_tools",
      allowed_tools: { mode: "required", tools: [{ type: "function", function: { name: "lookup_price" } }] },
    },
  }).policy;
  assert.deepEqual([allowed.choice, allowed.enabledTools], ["required", ["lookup_price"]]);
});

Deno.test("planCompletion: answer format, instructions and sampling options", () => {
  const text = plan({
    messages: [{ role: "system", content: "Be brief." }, { role: "user", content: "Hi" }],
  });
  assert.deepEqual(text.format, { kind: "text" });
  assert.equal(text.instructions, "Be brief.");
  const object = plan({ response_format: { type: "json_object" } });
  assert.deepEqual(object.format, { kind: "json_object" });
  assert.match(object.instructions ?? "", /JSON/);
  const schema = plan({
    response_format: {
      type: "json_schema",
      json_schema: {
        name: "quest-offer",
        schema: { type: "object", properties: { gold: { type: "integer" } } },
      },
    },
  }).format;
  assert.equal(schema.kind, "json_schema");
  assert.equal(schema.kind === "json_schema" && schema.schema.name, "questoffer");
  assert.deepEqual(plan({ temperature: 0, seed: 7 }).options, {
    sampling: { mode: "greedy" },
    reportCutOff: true,
  });
  assert.deepEqual(plan({ temperature: 0.7, top_p: 0.9, max_tokens: 40 }).options, {
    temperature: 0.7,
    sampling: { mode: "topP", p: 0.9 },
    maximumResponseTokens: 40,
    reportCutOff: true,
  });
  assert.deepEqual(plan({ seed: -1 }).options, {
    sampling: { mode: "topP", p: 1, seed: 2 ** 53 - 1 },
    reportCutOff: true,
  });
});

Deno.test("planCompletion: each problem's error, and the first problem's when there are several", () => {
  rejects(
    { tools: [tool("lookup_price")] },
    "tools[0].function.name",
    "invalid_value",
    /reserved by the server/,
  );
  rejects({ tools: [tool("respond_directly")] }, "tools[0].function.name", "invalid_value", /reserved/);
  rejects(
    { tool_choice: { type: "function", function: { name: "nope" } } },
    "tool_choice",
    "unknown_tool",
  );
  const badSchema = {
    type: "json_schema",
    json_schema: { name: "x", schema: { type: "object", properties: { a: { type: "nonsense" } } } },
  };
  // Model before messages before tools before tool_choice before response_format.
  rejects(
    {
      model: "gpt-9",
      messages: [{ role: "assistant", content: "Hi" }],
      tools: [tool("lookup_price")],
      tool_choice: { type: "function", function: { name: "nope" } },
      response_format: badSchema,
    },
    "model",
    "model_not_found",
  );
  rejects(
    {
      messages: [{ role: "assistant", content: "Hi" }],
      tools: [tool("lookup_price")],
      tool_choice: { type: "function", function: { name: "nope" } },
      response_format: badSchema,
    },
    "messages",
    "invalid_last_message",
  );
  rejects(
    {
      tools: [tool("lookup_price")],
      tool_choice: { type: "function", function: { name: "nope" } },
      response_format: badSchema,
    },
    "tools[0].function.name",
    "invalid_value",
  );
  rejects(
    { tool_choice: { type: "function", function: { name: "nope" } }, response_format: badSchema },
    "tool_choice",
    "unknown_tool",
  );
  assert.throws(() => plan({ response_format: badSchema }), /response_format|schema/i);
});

Deno.test("planCompletion: each completion runs on the model's own instance for one request, when it has one", () => {
  const made: LanguageModel[] = [];
  const shared: LanguageModel = {
    kind: "stateful",
    contextSize: 4096,
    trimsHistory: false,
    availability: () => Promise.resolve({ available: true, contextSize: 4096, supportedLanguages: [] }),
    step: () => Promise.resolve({ kind: "text", text: "shared", usage: null }),
    forRequest() {
      const fresh = { ...shared, forRequest: undefined };
      made.push(fresh);
      return fresh;
    },
  };
  const stateful = resolveServeConfiguration({ models: new Map([["system", shared]]) });
  const request = () => parseChatRequest({ messages: [{ role: "user", content: "Hi" }] });
  const first = planCompletion(request(), stateful).model;
  const second = planCompletion(request(), stateful).model;
  assert.deepEqual([first, second], made);
  assert.notEqual(first, second);
  assert.notEqual(first, shared);
  // A model without per-conversation state is shared.
  assert.equal(planCompletion(request(), config).model.kind, "scripted");
});

Deno.test("planCompletion: an unknown model id (an SDK's default) names the flag that serves it under that id", () => {
  rejects(
    { model: "gpt-4o-mini" },
    "model",
    "model_not_found",
    /^The model 'gpt-4o-mini' does not exist\. Available models: system\. To answer it with the server's model, start the server with --model-alias gpt-4o-mini=system\.$/,
  );
  // An id no shell line could carry as written gets no flag to copy.
  rejects({ model: "my model; rm" }, "model", "model_not_found", /Available models: system\.$/);
});
