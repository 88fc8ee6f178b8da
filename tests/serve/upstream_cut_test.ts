/**
 * `oam serve` over an OpenAI-compatible upstream (a fake one here): a JSON answer or tool call the token limit
 * cut off comes back as OpenAI sends it — HTTP 200, `finish_reason: "length"`, the JSON or the call's
 * arguments cut — streamed or not, after one upstream request. Over the bridge protocol the same cut answer
 * stays an invalid answer (`generation_failed`, asked for again first).
 */
import assert from "node:assert/strict";
import { createOpenAIModel } from "../../src/models/openai_model.ts";
import { BridgeError } from "../../src/protocol/errors.ts";
import { CutOffAnswer } from "../../src/models/cut_off.ts";
import type { StepRequest } from "../../src/models/language_model.ts";
import type { JsonValue } from "../../src/protocol/json.ts";
import { chunk, completion, json, MockServer, usageChunk } from "../models/openai_mock_server.ts";
import { ask, postChat, serve, sseData } from "./serve_fixture.ts";
import { SCHEMA_FORMAT, WEATHER } from "../llama/serve_cut_checks.ts";

const CUT_JSON = '{"city": "Pa';
const CUT_ARGS = '{"city": "';

/** A fake upstream: each chat request gets `answer` (a body, or SSE chunks when the request streams). */
function upstream(answer: { body: JsonValue; chunks: JsonValue[] }): MockServer {
  return new MockServer((request, _i, server) => {
    if (request.path.endsWith("/models")) return json({ object: "list", data: [{ id: "tiny" }] });
    const streamed = (request.body as { stream?: boolean }).stream === true;
    return streamed ? server.sse(answer.chunks) : json(answer.body);
  });
}

const cutJson = () =>
  upstream({
    body: completion(CUT_JSON, { finish: "length", usage: { prompt_tokens: 30, completion_tokens: 5 } }),
    chunks: [
      chunk({ role: "assistant", content: "" }),
      chunk({ content: '{"city": ' }),
      chunk({ content: '"Pa' }),
      chunk({}, "length"),
      usageChunk(30, 5),
    ],
  });

const cutCall = () =>
  upstream({
    body: completion("", {
      finish: "length",
      usage: { prompt_tokens: 40, completion_tokens: 14 },
      toolCalls: [{ id: "up_1", type: "function", function: { name: "get_weather", arguments: CUT_ARGS } }],
    }),
    chunks: [
      chunk({ role: "assistant", content: null }),
      chunk({
        tool_calls: [{
          index: 0,
          id: "up_1",
          type: "function",
          function: { name: "get_weather", arguments: "{" },
        }],
      }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '"city": "' } }] }),
      chunk({}, "length"),
      usageChunk(40, 14),
    ],
  });

Deno.test("a json_schema answer the upstream cut at max_completion_tokens is a 200 with the cut JSON and finish_reason length", async () => {
  const up = cutJson();
  try {
    await using s = await serve(createOpenAIModel({ baseURL: up.baseURL, model: "tiny" }));
    const response = await postChat(s.base, {
      messages: ask("Capital of France?"),
      max_completion_tokens: 5,
      response_format: SCHEMA_FORMAT,
    });
    const body = await response.json();
    assert.equal(response.status, 200, JSON.stringify(body));
    assert.equal(body.choices[0].message.content, CUT_JSON);
    assert.equal(body.choices[0].finish_reason, "length");
    assert.equal(body.usage.completion_tokens, 5);
    assert.equal(body.usage.prompt_tokens, 30);
    // One generation, as OpenAI: the same limit would cut a retry off again.
    assert.equal(up.chatBodies.length, 1);

    const streamed = await postChat(s.base, {
      messages: ask("Capital of France?"),
      max_tokens: 5,
      response_format: SCHEMA_FORMAT,
      stream: true,
      stream_options: { include_usage: true },
    });
    assert.equal(streamed.status, 200);
    const chunks = (await sseData(streamed)).slice(0, -1).map((d) => JSON.parse(d));
    const text = chunks.map((c) => c.choices[0]?.delta.content ?? "").join("");
    // Streamed JSON is sent as it is generated, in the compact form of the finished answer: the same cut.
    assert.equal(text, CUT_JSON.replace(": ", ":"));
    assert.equal(chunks.at(-2).choices[0].finish_reason, "length");
    assert.equal(chunks.at(-1).usage.completion_tokens, 5);
    assert.equal(up.chatBodies.length, 2);
  } finally {
    await up.close();
  }
});

Deno.test("a tool call the upstream cut at max_completion_tokens is a 200 with the call, its arguments cut, and finish_reason length", async () => {
  const up = cutCall();
  try {
    await using s = await serve(createOpenAIModel({ baseURL: up.baseURL, model: "tiny" }));
    const response = await postChat(s.base, {
      messages: ask("Weather in Oslo?"),
      max_completion_tokens: 14,
      tools: [WEATHER],
    });
    const body = await response.json();
    assert.equal(response.status, 200, JSON.stringify(body));
    const message = body.choices[0].message;
    assert.equal(body.choices[0].finish_reason, "length");
    assert.equal(message.tool_calls.length, 1);
    assert.equal(message.tool_calls[0].function.name, "get_weather");
    assert.equal(message.tool_calls[0].function.arguments, CUT_ARGS);
    assert.match(message.tool_calls[0].id, /^call_/);
    assert.equal(body.usage.completion_tokens, 14);
    assert.equal(up.chatBodies.length, 1);

    const streamed = await postChat(s.base, {
      messages: ask("Weather in Oslo?"),
      max_completion_tokens: 14,
      tools: [WEATHER],
      tool_choice: "required",
      stream: true,
    });
    assert.equal(streamed.status, 200);
    const chunks = (await sseData(streamed)).slice(0, -1).map((d) => JSON.parse(d));
    const deltas = chunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []);
    assert.equal(deltas[0].function.name, "get_weather");
    assert.equal(
      deltas.map((d: { function: { arguments?: string } }) => d.function.arguments ?? "").join(""),
      CUT_ARGS,
    );
    assert.equal(chunks.at(-1).choices[0].finish_reason, "length");
    assert.equal(up.chatBodies.length, 2);
  } finally {
    await up.close();
  }
});

function stepRequest(extra: Partial<StepRequest>): StepRequest {
  return {
    instructions: null,
    tools: [],
    toolCallingMode: "disallowed",
    history: [],
    prompt: "Capital of France?",
    responseSchema: {
      name: "place",
      generationSchema: SCHEMA_FORMAT.json_schema.schema,
      jsonSchema: SCHEMA_FORMAT.json_schema.schema,
    },
    options: { maximumResponseTokens: 5 },
    stream: false,
    signal: new AbortController().signal,
    ...extra,
  };
}

Deno.test("the backend reports a cut answer only when asked to: elsewhere it stays an invalid answer, asked for again", async () => {
  const up = cutJson();
  try {
    const model = createOpenAIModel({ baseURL: up.baseURL, model: "tiny" });
    const plain = await model.step(stepRequest({})).then(() => null, (e) => e);
    assert.ok(plain instanceof BridgeError);
    assert.ok(!(plain instanceof CutOffAnswer));
    assert.equal(plain.dataCode, "generation_failed");
    assert.equal(plain.data.attempts, 3);
    assert.equal(up.chatBodies.length, 3);

    const reported = await model.step(
      stepRequest({ options: { maximumResponseTokens: 5, reportCutOff: true } }),
    )
      .then(() => null, (e) => e);
    assert.ok(reported instanceof CutOffAnswer);
    assert.equal(reported.dataCode, "generation_failed");
    assert.deepEqual(reported.written, { text: CUT_JSON });
    assert.deepEqual(reported.usage, { inputTokens: 30, cachedInputTokens: 0, outputTokens: 5 });
    assert.equal(up.chatBodies.length, 4);
  } finally {
    await up.close();
  }
});

Deno.test("finish_reason is the upstream's: an answer that ends exactly at the limit is stop, a cut one length", async () => {
  const WHOLE = "Hello! How can I help you today?";
  // Ten tokens with the end token: the model finished on its own within a limit of ten.
  const whole = (request: { stream?: boolean }, server: MockServer) =>
    request.stream === true
      ? server.sse([
        chunk({ role: "assistant", content: "" }),
        chunk({ content: WHOLE }),
        chunk({}, "stop"),
        usageChunk(17, 10),
      ])
      : json(completion(WHOLE, { finish: "stop", usage: { prompt_tokens: 17, completion_tokens: 10 } }));
  // Cut at three tokens by a server that reports no usage (the estimate, 2 tokens, is under the limit).
  const cut = (request: { stream?: boolean }, server: MockServer) =>
    request.stream === true
      ? server.sse([
        chunk({ role: "assistant", content: "" }),
        chunk({ content: "1, 2, " }),
        chunk({}, "length"),
      ])
      : json({ ...(completion("1, 2, ", { finish: "length" }) as object), usage: null });
  const up = new MockServer((request, _i, server) => {
    if (request.path.endsWith("/models")) return json({ object: "list", data: [{ id: "tiny" }] });
    const body = request.body as { stream?: boolean; max_tokens?: number; max_completion_tokens?: number };
    return (body.max_tokens ?? body.max_completion_tokens) === 10 ? whole(body, server) : cut(body, server);
  });
  try {
    await using s = await serve(createOpenAIModel({ baseURL: up.baseURL, model: "tiny" }));
    for (const stream of [false, true]) {
      for (const [limit, expected] of [[10, "stop"], [3, "length"]] as const) {
        const response = await postChat(s.base, {
          messages: ask("Hello"),
          max_completion_tokens: limit,
          stream,
        });
        assert.equal(response.status, 200);
        const reason = stream
          ? (await sseData(response)).slice(0, -1).map((d) => JSON.parse(d)).at(-1).choices[0].finish_reason
          : (await response.json()).choices[0].finish_reason;
        assert.equal(reason, expected, `max_completion_tokens ${limit}, stream ${stream}`);
      }
    }
  } finally {
    await up.close();
  }
});

Deno.test("a tool call the upstream cut before its name was complete leaves no tool-call markup in the content", async () => {
  // What llama.cpp's server answers (not streamed) when the limit falls inside a Qwen/Hermes tool call: the
  // chat template's markup as text, since it could not parse a call out of it. Streamed, it sends nothing.
  const cases = [
    { content: '<tool_call>\n{"name', expected: "" },
    { content: "<tool_ca", expected: "" },
    { content: "Let me look.\n<tool_call>\n{", expected: "Let me look.\n" },
    { content: '[TOOL_CALLS][{"name": "get_', expected: "" },
    { content: "Oslo is < 5", expected: "Oslo is < 5" },
  ];
  for (const { content, expected } of cases) {
    const up = upstream({
      body: completion(content, { finish: "length", usage: { prompt_tokens: 40, completion_tokens: 6 } }),
      chunks: [],
    });
    try {
      await using s = await serve(createOpenAIModel({ baseURL: up.baseURL, model: "tiny" }));
      const response = await postChat(s.base, {
        messages: ask("Weather in Oslo?"),
        max_completion_tokens: 6,
        tools: [WEATHER],
      });
      const body = await response.json();
      assert.equal(response.status, 200, JSON.stringify(body));
      assert.equal(body.choices[0].finish_reason, "length");
      assert.equal(body.choices[0].message.content, expected, content);
      assert.equal(body.choices[0].message.tool_calls, undefined);
    } finally {
      await up.close();
    }
  }
});

Deno.test("without tools in the request, text that looks like tool-call markup is the answer", async () => {
  const up = upstream({ body: completion("<tool_call> is a tag", { finish: "length" }), chunks: [] });
  try {
    await using s = await serve(createOpenAIModel({ baseURL: up.baseURL, model: "tiny" }));
    const body = await (await postChat(s.base, { messages: ask("Tag?"), max_completion_tokens: 6 })).json();
    assert.equal(body.choices[0].message.content, "<tool_call> is a tag");
  } finally {
    await up.close();
  }
});
