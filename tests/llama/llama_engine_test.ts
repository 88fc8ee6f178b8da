/**
 * Bridge-level smoke test: JSON-RPC sessions created with `{"type": "openai", …}` run against a REAL
 * llama.cpp server (plain turn, forced client tool call, schema turn, cancellation). Structure only.
 */
import assert from "node:assert/strict";
import type { JsonObject } from "../../src/protocol/json.ts";
import { Wire } from "../models/openai_wire.ts";
import { LLAMA_ENABLED, startLlamaServer } from "./llama_server.ts";

const ignore = !LLAMA_ENABLED;

const WEATHER_TOOL = {
  name: "get_weather",
  description: "Get the current weather for a city.",
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
};

Deno.test({
  name: "llama.cpp: JSON-RPC sessions with an openai model",
  ignore,
  async fn(t) {
    const server = await startLlamaServer();
    const wire = new Wire();
    const model = { type: "openai", baseURL: server.baseURL, model: "tiny-chat" };
    let nextId = 1;
    const call = async (method: string, params: JsonObject): Promise<JsonObject> => {
      const id = nextId++;
      wire.send({ id, method, params });
      return await wire.response(id);
    };
    try {
      await t.step("plain turn", async () => {
        const created = await call("session/create", {
          session: "plain",
          model,
          options: { sampling: "greedy" },
        });
        assert.ok("result" in created, JSON.stringify(created));
        const response = await call("session/respond", { session: "plain", prompt: "Hello" });
        const result = response.result as JsonObject;
        assert.equal(typeof result.text, "string");
        const usage = result.usage as JsonObject;
        assert.ok((usage.inputTokens as number) > 0 && (usage.outputTokens as number) > 0);
      });

      await t.step("forced client tool call, then an answer", async () => {
        await call("session/create", {
          session: "weather",
          tools: [WEATHER_TOOL],
          model,
          options: { toolChoice: "required", sampling: "greedy", maxResponseTokens: 64 },
        });
        const id = nextId++;
        wire.send({
          id,
          method: "session/respond",
          params: { session: "weather", prompt: "What is the weather in Oslo?" },
        });
        const toolCall = await wire.waitFor((m) => m.method === "tool/call");
        const requested = (toolCall.params as JsonObject).call as JsonObject;
        assert.equal(requested.name, "get_weather");
        assert.equal(typeof (requested.arguments as JsonObject).city, "string");
        wire.send({ id: toolCall.id as string, result: { output: "Rain, 4 degrees." } });
        const response = await wire.response(id);
        assert.ok("result" in response, JSON.stringify(response));
        const result = response.result as JsonObject;
        assert.equal(typeof result.text, "string");
        assert.equal((result.toolCalls as JsonObject[]).length >= 1, true);
        const steps = result.steps as JsonObject[];
        assert.equal(steps[0].toolCallingMode, "required");
      });

      await t.step("schema turn", async () => {
        await call("session/create", { session: "schema", model, options: { sampling: "greedy" } });
        const response = await call("session/respond", {
          session: "schema",
          prompt: "What is the capital of France?",
          schema: {
            type: "object",
            properties: { city: { type: "string" }, sure: { type: "boolean" } },
            required: ["city", "sure"],
          },
        });
        assert.ok("result" in response, JSON.stringify(response));
        const result = response.result as JsonObject;
        const structured = result.structured as JsonObject;
        assert.deepEqual(Object.keys(structured), ["city", "sure"]);
        assert.equal(result.text, JSON.stringify(structured));
      });

      await t.step("session/cancel mid-stream", async () => {
        await call("session/create", { session: "story", model, options: { temperature: 1 } });
        const id = nextId++;
        wire.send({
          id,
          method: "session/respond",
          params: { session: "story", prompt: "Tell me a very long story about Oslo.", stream: true },
        });
        await wire.waitFor((m) =>
          m.method === "session/event" && ((m.params as JsonObject).event as JsonObject).type === "text"
        );
        const cancelled = await call("session/cancel", { session: "story" });
        assert.ok("result" in cancelled);
        const response = await wire.response(id);
        assert.equal((response.error as JsonObject).code, -32009);
      });
    } finally {
      await wire.engine.shutdown();
      await server.stop();
    }
  },
});
