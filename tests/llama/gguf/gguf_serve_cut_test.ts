/**
 * `oam serve` on the in-process GGUF backend with the fixture model: a json_schema answer or a tool call cut
 * by `max_completion_tokens` comes back as OpenAI sends it (200, `finish_reason: "length"`, the JSON or the
 * call's arguments cut), streamed or not; each request's prompt shows its own tools only, and a conversation's
 * next request still reuses the cached prompt. Runs with OAM_GGUF_TESTS=1 (`deno task test:gguf`).
 */
import assert from "node:assert/strict";
import { createLlamaModel } from "../../../src/models/llama_model.ts";
import { closeLlamaModels } from "../../../src/models/llama_runtime.ts";
import { OpenAIServer } from "../../../src/serve/openai_server.ts";
import { fixtureConfig, GGUF_ENABLED } from "./fixture.ts";

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

async function post(base: string, body: Record<string, unknown>): Promise<Response> {
  return await fetch(`${base}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "system", temperature: 0, ...body }),
  });
}

/** A streamed chunk, as far as these tests read it. */
interface Chunk {
  choices: Array<{
    delta: { content?: string; tool_calls?: Array<{ function: { name?: string; arguments?: string } }> };
    finish_reason: string | null;
  }>;
}

/** The `data:` payloads of a streamed answer, parsed (without `[DONE]`). */
async function chunks(response: Response): Promise<Chunk[]> {
  const text = await response.text();
  return text.split("\n\n").filter((e) => e.startsWith("data: ") && e !== "data: [DONE]")
    .map((e) => JSON.parse(e.slice(6)));
}

Deno.test({
  name: "gguf serve: JSON and tool calls cut by max_completion_tokens are 200s with finish_reason length",
  ignore: !GGUF_ENABLED,
  // node-llama-cpp's native addon keeps async work Deno's sanitizers cannot attribute to a test.
  sanitizeOps: false,
  sanitizeResources: false,
  async fn(t) {
    const model = createLlamaModel(await fixtureConfig());
    const server = new OpenAIServer({ port: 0, models: new Map([["system", model]]) });
    await server.start();
    const base = `http://127.0.0.1:${server.port}`;
    try {
      await t.step(
        "the next request of a conversation reuses the prompt the last one left in the cache",
        async () => {
          const first = [{ role: "user", content: "Hello" }];
          const answer = (await (await post(base, { messages: first, max_completion_tokens: 12 })).json())
            .choices[0].message;
          const next = [...first, { role: "assistant", content: answer.content }, {
            role: "user",
            content: "Count to five.",
          }];
          const body = await (await post(base, { messages: next, max_completion_tokens: 4 })).json();
          assert.ok(body.usage.prompt_tokens_details.cached_tokens > 0, JSON.stringify(body.usage));
        },
      );

      await t.step("a request without tools is not shown the tools of an earlier request", async () => {
        const plain = { messages: [{ role: "user", content: "Hello" }], max_completion_tokens: 4 };
        const before = await (await post(base, plain)).json();
        const withTools = await post(base, { ...plain, tools: [WEATHER] });
        assert.equal(withTools.status, 200);
        const toolsPrompt = (await withTools.json()).usage.prompt_tokens;
        assert.ok(toolsPrompt > before.usage.prompt_tokens, "the tool list is in the prompt");
        const after = await (await post(base, plain)).json();
        assert.equal(after.usage.prompt_tokens, before.usage.prompt_tokens, "the same prompt as before");
      });

      await t.step("json_schema, not streamed and streamed", async () => {
        const request = {
          messages: [{ role: "user", content: "What is the capital of France?" }],
          max_completion_tokens: 4,
          response_format: SCHEMA_FORMAT,
        };
        const response = await post(base, request);
        const body = await response.json();
        assert.equal(response.status, 200, JSON.stringify(body));
        assert.equal(body.choices[0].finish_reason, "length");
        const content: string = body.choices[0].message.content;
        assert.ok(content.startsWith("{"), content);
        assert.throws(() => JSON.parse(content));
        assert.equal(body.usage.completion_tokens, 4);

        const streamed = await post(base, { ...request, stream: true });
        assert.equal(streamed.status, 200);
        const events = await chunks(streamed);
        assert.equal(events.map((c) => c.choices[0]?.delta.content ?? "").join(""), content);
        assert.equal(events.at(-1)!.choices[0].finish_reason, "length");
      });

      await t.step("a required tool call, not streamed and streamed", async () => {
        const request = {
          messages: [{ role: "user", content: "What is the weather in Oslo?" }],
          max_completion_tokens: 4,
          tools: [WEATHER],
          tool_choice: "required",
        };
        const response = await post(base, request);
        const body = await response.json();
        assert.equal(response.status, 200, JSON.stringify(body));
        assert.equal(body.choices[0].finish_reason, "length");
        const calls = body.choices[0].message.tool_calls;
        assert.equal(calls.length, 1, JSON.stringify(body));
        assert.equal(calls[0].function.name, "get_weather");
        const args: string = calls[0].function.arguments;
        assert.throws(() => JSON.parse(args), `cut arguments: ${args}`);

        const streamed = await post(base, { ...request, stream: true });
        assert.equal(streamed.status, 200);
        const events = await chunks(streamed);
        const deltas = events.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []);
        assert.equal(deltas[0].function.name, "get_weather");
        assert.equal(events.at(-1)!.choices[0].finish_reason, "length");
      });
    } finally {
      await server.stop();
      await closeLlamaModels();
    }
  },
});
