/**
 * `oam serve` over a REAL llama.cpp server (the OpenAI-compatible backend with the tiny fixture model): a
 * json_schema answer or a tool call cut by `max_completion_tokens` comes back as OpenAI sends it (200,
 * `finish_reason: "length"`, the JSON or the call's arguments cut), streamed or not, after one upstream
 * request. Runs only with OAM_LLAMA_TESTS=1 (`deno task test:llama`).
 */
import assert from "node:assert/strict";
import { createOpenAIModel } from "../../src/models/openai_model.ts";
import { OpenAIServer } from "../../src/serve/openai_server.ts";
import { LLAMA_ENABLED, startLlamaServer } from "./llama_server.ts";

const SCHEMA_FORMAT = {
  type: "json_schema",
  json_schema: {
    name: "place",
    schema: {
      type: "object",
      properties: { city: { type: "string" }, country: { type: "string" } },
      required: ["city", "country"],
      additionalProperties: false,
    },
  },
};
const WEATHER = {
  type: "function",
  function: {
    name: "get_weather",
    description: "Get the current weather for a city.",
    parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  },
};

/** A streamed chunk, as far as these tests read it. */
interface Chunk {
  choices: Array<{
    delta: { content?: string; tool_calls?: Array<{ function: { name?: string; arguments?: string } }> };
    finish_reason: string | null;
  }>;
}

async function post(base: string, body: Record<string, unknown>): Promise<Response> {
  return await fetch(`${base}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "system", temperature: 0, ...body }),
  });
}

/** The `data:` payloads of a streamed answer, parsed (without `[DONE]`). */
async function chunks(response: Response): Promise<Chunk[]> {
  const text = await response.text();
  return text.split("\n\n").filter((e) => e.startsWith("data: ") && e !== "data: [DONE]")
    .map((e) => JSON.parse(e.slice(6)));
}

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
      await t.step("json_schema, not streamed and streamed", async () => {
        const request = {
          messages: [{ role: "user", content: "What is the capital of France?" }],
          max_completion_tokens: 5,
          response_format: SCHEMA_FORMAT,
        };
        const response = await post(base, request);
        const body = await response.json();
        assert.equal(response.status, 200, JSON.stringify(body));
        assert.equal(body.choices[0].finish_reason, "length");
        const content: string = body.choices[0].message.content;
        assert.ok(content.startsWith("{"), content);
        assert.throws(() => JSON.parse(content));
        assert.equal(body.usage.completion_tokens, 5);

        const streamed = await post(base, { ...request, stream: true });
        assert.equal(streamed.status, 200);
        const events = await chunks(streamed);
        assert.equal(events.map((c) => c.choices[0]?.delta.content ?? "").join(""), content);
        assert.equal(events.at(-1)!.choices[0].finish_reason, "length");
      });

      await t.step("a tool call cut in its arguments, not streamed and streamed", async () => {
        const request = {
          messages: [{ role: "user", content: "What is the weather in Oslo?" }],
          max_completion_tokens: 14,
          tools: [WEATHER],
        };
        const response = await post(base, request);
        const body = await response.json();
        assert.equal(response.status, 200, JSON.stringify(body));
        assert.equal(body.choices[0].finish_reason, "length");
        const calls = body.choices[0].message.tool_calls;
        assert.equal(calls?.length, 1, JSON.stringify(body));
        assert.equal(calls[0].function.name, "get_weather");
        const args: string = calls[0].function.arguments;
        assert.throws(() => JSON.parse(args), `cut arguments: ${args}`);

        const streamed = await post(base, { ...request, stream: true });
        assert.equal(streamed.status, 200);
        const events = await chunks(streamed);
        const deltas = events.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []);
        assert.equal(deltas[0]?.function.name, "get_weather", JSON.stringify(events));
        assert.equal(events.at(-1)!.choices[0].finish_reason, "length");
      });
    } finally {
      await server.stop();
      await llama.stop();
    }
  },
});
