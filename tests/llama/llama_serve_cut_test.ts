/**
 * `oam serve` over a REAL llama.cpp server (the OpenAI-compatible backend with the tiny fixture model): a
 * json_schema answer or a tool call cut by `max_completion_tokens` comes back as OpenAI sends it (200,
 * `finish_reason: "length"`, the JSON or the call's arguments cut), streamed or not, after one upstream
 * request; a call cut before its name leaves no chat-template markup behind; json_object gives an object and
 * json_schema streams as it is generated. Runs only with OAM_LLAMA_TESTS=1 (`deno task test:llama`).
 */
import { createOpenAIModel } from "../../src/models/openai_model.ts";
import { OpenAIServer } from "../../src/serve/openai_server.ts";
import { LLAMA_ENABLED, startLlamaServer } from "./llama_server.ts";
import assert from "node:assert/strict";
import {
  checkCutJson,
  checkCutToolCall,
  checkJsonObject,
  checkSchemaStreams,
  post,
  WEATHER,
} from "./serve_cut_checks.ts";

Deno.test({
  name:
    "llama.cpp serve: JSON and tool calls cut by max_completion_tokens are 200s with finish_reason length",
  ignore: !LLAMA_ENABLED,
  async fn(t) {
    const llama = await startLlamaServer();
    const server = new OpenAIServer({
      port: 0,
      models: new Map([["system", createOpenAIModel({ baseURL: llama.baseURL, model: "tiny-chat" })]]),
    });
    await server.start();
    const base = `http://127.0.0.1:${server.port}`;
    try {
      await t.step("json_schema, not streamed and streamed", () => checkCutJson(base, 5));

      await t.step(
        "a tool call cut in its arguments, not streamed and streamed",
        () => checkCutToolCall(base, { max_completion_tokens: 14 }),
      );

      await t.step("a tool call cut before its name leaves no tool-call markup in the content", async () => {
        for (const limit of [1, 3, 6]) {
          for (const stream of [false, true]) {
            const response = await post(base, {
              messages: [{ role: "user", content: "What is the weather in Oslo?" }],
              tools: [WEATHER],
              max_completion_tokens: limit,
              stream,
            });
            const text = await response.text();
            assert.equal(response.status, 200, text);
            assert.ok(
              !/"content":"[^"]*<|<tool/.test(text),
              `max_completion_tokens ${limit}, stream ${stream}: ${text}`,
            );
            assert.ok(text.includes('"finish_reason":"length"'), text);
          }
        }
      });

      await t.step("json_object gives a JSON object, not streamed and streamed", () => checkJsonObject(base));

      await t.step("json_schema streamed in deltas", () => checkSchemaStreams(base));
    } finally {
      await server.stop();
      await llama.stop();
    }
  },
});
