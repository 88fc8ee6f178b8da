/**
 * The OpenAI backend behind the JSON-RPC engine: a session created with `{"type": "openai", …}` runs its
 * turns against the mock server, and what the agent loop hands the backend reaches the server as
 * chat messages with matching tool-call ids.
 */
import assert from "node:assert/strict";
import type { JsonObject, JsonValue } from "../../src/protocol/json.ts";
import { chunk, completion, json, MockServer, toolCall, usageChunk } from "./openai_mock_server.ts";
import { Wire } from "./openai_wire.ts";

Deno.test("openai engine: a session with a client tool runs through the backend", async () => {
  const server = new MockServer([
    () => json(completion(null, { toolCalls: [toolCall("call_srv_1", "get_weather", '{"city":"Oslo"}')] })),
    (_r, _i, s) =>
      s.sse([
        chunk({ role: "assistant", content: "" }),
        chunk({ content: "Rain " }),
        chunk({ content: "in Oslo." }, "stop"),
        usageChunk(30, 4),
      ]),
  ]);
  const wire = new Wire();
  try {
    wire.send({
      id: 1,
      method: "session/create",
      params: {
        session: "s",
        instructions: "You report the weather.",
        tools: [{
          name: "get_weather",
          description: "Weather of a city.",
          parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
        }],
        options: { toolChoice: "required", sampling: "greedy", maxResponseTokens: 100 },
        model: { type: "openai", baseURL: server.baseURL, model: "mock-model" },
      },
    });
    const created = await wire.response(1);
    assert.ok("result" in created, JSON.stringify(created));
    wire.send({
      id: 2,
      method: "session/respond",
      params: { session: "s", prompt: "Weather in Oslo?", stream: true },
    });
    const call = await wire.waitFor((m) => m.method === "tool/call");
    const callParams = (call.params as JsonObject).call as JsonObject;
    assert.equal(callParams.name, "get_weather");
    assert.deepEqual(callParams.arguments, { city: "Oslo" });
    wire.send({ id: call.id as string, result: { output: "Rain, 4 °C" } });
    const response = await wire.response(2);
    assert.ok("result" in response, JSON.stringify(response));
    const result = response.result as JsonObject;
    assert.equal(result.text, "Rain in Oslo.");
    assert.equal(((result.toolCalls as JsonObject[])[0].call as JsonObject).name, "get_weather");

    // What the server saw: step 0 forced the tool, step 1 continued with the tool output.
    const [first, second] = server.chatBodies as JsonObject[];
    assert.equal(first.tool_choice, "required");
    assert.equal(first.temperature, 0);
    assert.equal(first.max_tokens, 100);
    assert.deepEqual((first.messages as JsonValue[]).slice(0, 2), [
      { role: "system", content: "You report the weather." },
      { role: "user", content: "Weather in Oslo?" },
    ]);
    assert.equal(second.stream, true);
    const messages = second.messages as JsonObject[];
    const assistant = messages.find((m) => m.role === "assistant") as JsonObject;
    const tool = messages.find((m) => m.role === "tool") as JsonObject;
    const ids = (assistant.tool_calls as JsonObject[]).map((c) => c.id);
    assert.equal(ids.length, 1);
    assert.equal(tool.tool_call_id, ids[0], "tool output id matches the call id");
    assert.equal(messages.at(-1), tool, "a continuation step sends no empty user message");
    assert.notEqual(second.tool_choice, "required");
  } finally {
    await wire.engine.shutdown();
    await server.close();
  }
});

Deno.test("openai engine: a bad openai model parameter is rejected with -32602", async () => {
  const wire = new Wire();
  try {
    wire.send({
      id: 1,
      method: "session/create",
      params: { model: { type: "openai", baseURL: "ftp://x", model: "m" } },
    });
    const response = await wire.response(1);
    const error = response.error as JsonObject;
    assert.equal(error.code, -32602);
    assert.match(String(error.message), /'model.baseURL' must be an http\(s\) URL/);
  } finally {
    await wire.engine.shutdown();
  }
});
