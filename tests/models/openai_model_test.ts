import assert from "node:assert/strict";
import type { StepRequest, StepResult, StepTool } from "../../src/models/language_model.ts";
import { createOpenAIModel, OPENAI_STEP_ATTEMPTS } from "../../src/models/openai_model.ts";
import type { OpenAIModelConfig } from "../../src/models/openai_config.ts";
import { BridgeError } from "../../src/protocol/errors.ts";
import type { JsonObject, JsonValue } from "../../src/protocol/json.ts";
import type { ConversationEntry } from "../../src/protocol/transcript.ts";
import { withDeadline } from "../helpers/deadline.ts";
import {
  chunk,
  completion,
  IntendedFailure,
  json,
  type MockHandler,
  MockServer,
  RawText,
  type RecordedRequest,
  toolCall,
  usageChunk,
} from "./openai_mock_server.ts";

const WEATHER: StepTool = {
  name: "get_weather",
  description: "Current weather of a city.",
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  jsonSchema: {
    type: "object",
    properties: { city: { type: "string" }, unit: { type: "string", enum: ["c", "f"] } },
    required: ["city"],
    additionalProperties: false,
  },
};
const TIME: StepTool = {
  name: "get_time",
  description: "",
  parameters: { type: "object", properties: {} },
  jsonSchema: {},
};

function stepRequest(overrides: Partial<StepRequest> = {}): StepRequest {
  return {
    instructions: null,
    tools: [],
    toolCallingMode: "allowed",
    history: [],
    prompt: "Hello",
    responseSchema: null,
    options: {},
    stream: false,
    signal: new AbortController().signal,
    ...overrides,
  };
}

async function withServer(
  handlers: ConstructorParameters<typeof MockServer>[0],
  run: (server: MockServer, config: OpenAIModelConfig) => Promise<void>,
  config: Partial<OpenAIModelConfig> = {},
): Promise<void> {
  const server = new MockServer(handlers);
  try {
    await run(server, { baseURL: server.baseURL, model: "mock-model", ...config });
  } finally {
    await server.close();
  }
}

async function rejection(promise: Promise<unknown>): Promise<BridgeError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof BridgeError, `expected a BridgeError, got ${error}`);
    return error;
  }
  assert.fail("expected the step to fail");
}

const okText = () => json(completion("Hi there."));

Deno.test("openai model: kind, trimsHistory and default context size", () => {
  const model = createOpenAIModel({ baseURL: "http://127.0.0.1:9/v1", model: "m" });
  assert.equal(model.kind, "openai");
  assert.equal(model.trimsHistory, false);
  assert.equal(model.contextSize, 4096);
});

Deno.test("openai model: plain turn maps instructions, history and prompt; usage mapped", async () => {
  const history: ConversationEntry[] = [
    { id: "p1", role: "user", contents: [{ type: "text", id: "s1", text: "Open the gate." }], options: {} },
    {
      id: "c1",
      role: "response",
      toolCalls: [{ id: "call_1", name: "open_gate", arguments: '{"gate":"north"}' }],
      contents: [],
      assets: [],
    },
    {
      id: "call_1",
      role: "tool",
      toolCallID: "call_1",
      toolName: "open_gate",
      contents: [{
        type: "structure",
        id: "s2",
        structure: { source: "open_gate", content: { opened: false } },
      }],
    },
    { id: "r1", role: "response", contents: [{ type: "text", id: "s3", text: "It is jammed." }], assets: [] },
  ];
  await withServer(
    () =>
      json(
        completion("Hi there.", {
          usage: { prompt_tokens: 40, completion_tokens: 3, prompt_tokens_details: { cached_tokens: 32 } },
        }),
      ),
    async (server, config) => {
      const model = createOpenAIModel(config);
      const result = await model.step(
        stepRequest({ instructions: "You are a guard.", history, prompt: "Why?" }),
      );
      assert.deepEqual(result, {
        kind: "text",
        text: "Hi there.",
        usage: { inputTokens: 40, cachedInputTokens: 32, outputTokens: 3 },
      });
      assert.equal(server.requests.length, 1);
      const request = server.requests[0];
      assert.equal(request.method, "POST");
      assert.equal(request.path, "/v1/chat/completions");
      assert.equal(request.headers.get("content-type"), "application/json");
      assert.equal(request.headers.get("authorization"), null);
      assert.deepEqual(request.body, {
        model: "mock-model",
        messages: [
          { role: "system", content: "You are a guard." },
          { role: "user", content: "Open the gate." },
          {
            role: "assistant",
            content: null,
            tool_calls: [{
              id: "call_1",
              type: "function",
              function: { name: "open_gate", arguments: '{"gate":"north"}' },
            }],
          },
          { role: "tool", tool_call_id: "call_1", content: '{"opened":false}' },
          { role: "assistant", content: "It is jammed." },
          { role: "user", content: "Why?" },
        ],
      });
    },
  );
});

Deno.test("openai model: a continuation step sends no empty user message", async () => {
  const history: ConversationEntry[] = [
    { id: "p1", role: "user", contents: [{ type: "text", id: "s1", text: "Weather in Oslo?" }], options: {} },
    {
      id: "c1",
      role: "response",
      toolCalls: [{ id: "call_9", name: "get_weather", arguments: '{"city":"Oslo"}' }],
      contents: [],
      assets: [],
    },
    {
      id: "call_9",
      role: "tool",
      toolCallID: "call_9",
      toolName: "get_weather",
      contents: [{ type: "text", id: "s2", text: "Rain, 4 °C" }],
    },
  ];
  await withServer(okText, async (server, config) => {
    await createOpenAIModel(config).step(stepRequest({ history, prompt: "", tools: [WEATHER] }));
    const body = server.chatBodies[0] as JsonObject;
    const messages = body.messages as JsonObject[];
    assert.equal(messages.length, 3);
    assert.deepEqual(messages[2], { role: "tool", tool_call_id: "call_9", content: "Rain, 4 °C" });
    assert.equal(body.tool_choice, "auto");
  });
});

Deno.test("openai model: sampling options are mapped", async () => {
  await withServer(okText, async (server, config) => {
    const model = createOpenAIModel(config);
    await model.step(stepRequest({ options: { temperature: 0.7, maximumResponseTokens: 64 } }));
    await model.step(stepRequest({ options: { temperature: 0.7, sampling: { mode: "greedy" } } }));
    await model.step(stepRequest({ options: { sampling: { mode: "topK", k: 5, seed: 42 } } }));
    await model.step(stepRequest({ options: { sampling: { mode: "topP", p: 0.9 } } }));
    const fields = server.chatBodies.map((b) => {
      const { model: _m, messages: _messages, ...rest } = b as JsonObject;
      return rest;
    });
    assert.deepEqual(fields, [
      { temperature: 0.7, max_tokens: 64 },
      { temperature: 0 },
      { top_k: 5, seed: 42 },
      { top_p: 0.9 },
    ]);
  });
});

Deno.test("openai model: apiKey and custom headers are sent", async () => {
  await withServer(okText, async (server, config) => {
    await createOpenAIModel(config).step(stepRequest());
    const headers = server.requests[0].headers;
    assert.equal(headers.get("authorization"), "Bearer sk-test");
    assert.equal(headers.get("x-team"), "npc");
  }, { apiKey: "sk-test", headers: { "X-Team": "npc" } });
});

Deno.test("openai model: streaming text with exact SSE framing, snapshots and usage", async () => {
  // Pauses between the writes: each write arrives on its own, so each becomes a snapshot.
  const gap = { delayMs: 15 };
  await withServer(
    (_r: RecordedRequest, _i: number, s: MockServer) =>
      s.sse([
        chunk({ role: "assistant", content: "" }),
        chunk({ content: "Hel" }),
        gap,
        new RawText('data: {"choices":[{"index":0,"delta":{"content":"lo"},'),
        gap,
        new RawText('"finish_reason":null}]}\r\n\r\n'),
        gap,
        chunk({ content: "!" }),
        gap,
        chunk({}, "stop"),
        usageChunk(12, 3, 8),
      ]),
    async (srv, config) => {
      const snapshots: string[] = [];
      const result = await createOpenAIModel(config).step(
        stepRequest({ stream: true, onText: (s) => snapshots.push(s) }),
      );
      assert.deepEqual(snapshots, ["Hel", "Hello", "Hello!"]);
      assert.deepEqual(result, {
        kind: "text",
        text: "Hello!",
        usage: { inputTokens: 12, cachedInputTokens: 8, outputTokens: 3 },
      });
      const body = srv.chatBodies[0] as JsonObject;
      assert.equal(body.stream, true);
      assert.deepEqual(body.stream_options, { include_usage: true });
      assert.equal(srv.requests[0].headers.get("accept"), "text/event-stream");
    },
  );
});

Deno.test("openai model: stream events that arrive together give one snapshot (one text event)", async () => {
  const events = ["Hel", "lo", ",", " you", "!"].map((content) =>
    `data: ${JSON.stringify(chunk({ content }))}\n\n`
  );
  await withServer(
    (_r: RecordedRequest, _i: number, s: MockServer) =>
      s.sse([new RawText(events.join("")), { delayMs: 15 }, chunk({}, "stop")]),
    async (_srv, config) => {
      const snapshots: string[] = [];
      const result = await createOpenAIModel(config).step(
        stepRequest({ stream: true, onText: (s) => snapshots.push(s) }),
      );
      assert.deepEqual(snapshots, ["Hello, you!"]);
      assert.equal((result as { text: string }).text, "Hello, you!");
    },
  );
});

Deno.test("openai model: streamed tool-call deltas split across chunks are assembled by index", async () => {
  await withServer(
    (_r, _i, s) =>
      s.sse([
        chunk({ role: "assistant", content: null }),
        chunk({
          tool_calls: [{
            index: 0,
            id: "call_a",
            type: "function",
            function: { name: "get_weather", arguments: "" },
          }],
        }),
        chunk({ tool_calls: [{ index: 0, function: { arguments: '{"ci' } }] }),
        chunk({
          tool_calls: [{
            index: 1,
            id: "call_b",
            type: "function",
            function: { name: "get_", arguments: "{}" },
          }],
        }),
        chunk({ tool_calls: [{ index: 0, function: { arguments: 'ty": "Oslo", "unit"' } }] }),
        chunk({ tool_calls: [{ index: 1, function: { name: "time" } }] }),
        chunk({ tool_calls: [{ index: 0, function: { arguments: ': "c"}' } }] }),
        chunk({}, "tool_calls"),
        usageChunk(50, 20),
      ]),
    async (srv, config) => {
      const texts: string[] = [];
      const result = await createOpenAIModel(config).step(
        stepRequest({ stream: true, tools: [WEATHER, TIME], onText: (s) => texts.push(s) }),
      );
      assert.deepEqual(texts, []);
      assert.deepEqual(result, {
        kind: "toolCalls",
        calls: [
          { name: "get_weather", arguments: { city: "Oslo", unit: "c" }, nativeId: "call_a" },
          { name: "get_time", arguments: {}, nativeId: "call_b" },
        ],
        usage: { inputTokens: 50, cachedInputTokens: 0, outputTokens: 20 },
      });
      const body = srv.chatBodies[0] as JsonObject;
      assert.equal(body.tool_choice, "auto");
      assert.deepEqual(body.tools, [
        {
          type: "function",
          function: { name: "get_weather", parameters: WEATHER.jsonSchema, description: WEATHER.description },
        },
        { type: "function", function: { name: "get_time", parameters: { type: "object", properties: {} } } },
      ]);
    },
  );
});

Deno.test("openai model: tool-call arguments are re-ordered to the schema", async () => {
  await withServer(
    () =>
      json(completion(null, { toolCalls: [toolCall("c1", "get_weather", '{"unit":"f","city":"Oslo"}')] })),
    async (_server, config) => {
      const result = await createOpenAIModel(config).step(stepRequest({ tools: [WEATHER] }));
      assert.equal(result.kind, "toolCalls");
      if (result.kind !== "toolCalls") return;
      assert.deepEqual(Object.keys(result.calls[0].arguments), ["city", "unit"]);
    },
  );
});

Deno.test("openai model: required mode sends tool_choice required; invalid arguments are retried", async () => {
  await withServer(
    [
      () => json(completion(null, { toolCalls: [toolCall("c1", "get_weather", '{"town":"Oslo"}')] })),
      () => json(completion(null, { toolCalls: [toolCall("c2", "get_weather", '{"city":"Oslo"}')] })),
    ],
    async (server, config) => {
      const result = await createOpenAIModel(config).step(
        stepRequest({ tools: [WEATHER], toolCallingMode: "required" }),
      );
      assert.deepEqual(result, {
        kind: "toolCalls",
        calls: [{ name: "get_weather", arguments: { city: "Oslo" }, nativeId: "c2" }],
        usage: { inputTokens: 20, cachedInputTokens: 0, outputTokens: 10 },
      });
      assert.equal(server.chatBodies.length, 2);
      for (const body of server.chatBodies as JsonObject[]) {
        assert.equal(body.tool_choice, "required");
        assert.equal((body.tools as JsonValue[]).length, 1);
      }
      // The retry is not the same request: it carries the invalid call and what was wrong with it.
      const [first, second] = server.chatBodies as JsonObject[];
      assert.deepEqual(second.messages, [
        ...(first.messages as JsonValue[]),
        {
          role: "assistant",
          content: null,
          tool_calls: [{
            id: "c1",
            type: "function",
            function: { name: "get_weather", arguments: '{"town":"Oslo"}' },
          }],
        },
        {
          role: "tool",
          tool_call_id: "c1",
          content: "Error: That answer could not be used: the arguments of 'get_weather' do not match its " +
            "schema: (root) must have required property 'city'. Call the tool 'get_weather' now, with valid " +
            "arguments.",
        },
      ]);
    },
  );
});

Deno.test("openai model: a call whose arguments are not JSON is retried with JSON arguments, which llama.cpp can read", async () => {
  // llama.cpp's server renders each tool call of the history from its parsed arguments, and answers a
  // request whose arguments do not parse with HTTP 500.
  const strict: MockHandler = (request) => {
    const messages =
      (request.body as { messages: Array<{ tool_calls?: Array<{ function: { arguments: string } }> }> })
        .messages;
    for (const call of messages.flatMap((m) => m.tool_calls ?? [])) {
      try {
        JSON.parse(call.function.arguments);
      } catch {
        return json({ error: { code: 500, message: "Failed to parse tool call arguments as JSON" } }, 500);
      }
    }
    return json(completion(null, { toolCalls: [toolCall("c2", "get_weather", '{"city":"Oslo"}')] }));
  };
  await withServer(
    [() => json(completion(null, { toolCalls: [toolCall("c1", "get_weather", '{"city": "Os')] })), strict],
    async (server, config) => {
      const result = await createOpenAIModel(config).step(
        stepRequest({ tools: [WEATHER], toolCallingMode: "required" }),
      );
      assert.equal(result.kind, "toolCalls");
      assert.deepEqual(result.kind === "toolCalls" && result.calls[0].arguments, { city: "Oslo" });
      assert.equal(server.chatBodies.length, 2);
      // The problem, which the retry carries, quotes what the model wrote.
      const retry = (server.chatBodies[1] as { messages: JsonObject[] }).messages.at(-1)!;
      assert.match(String(retry.content), /not valid JSON: \{"city": "Os/);
    },
  );
});

Deno.test("openai model: required mode with a plain-text answer fails after the retries", async () => {
  await withServer(okText, async (server, config) => {
    const error = await rejection(
      createOpenAIModel(config).step(stepRequest({ tools: [WEATHER], toolCallingMode: "required" })),
    );
    assert.equal(error.dataCode, "generation_failed");
    assert.match(error.message, /text although a tool call was required/);
    assert.equal(error.data.attempts, OPENAI_STEP_ATTEMPTS);
    assert.equal(server.chatBodies.length, 3);
  });
});

Deno.test("openai model: required mode without tools is rejected before any request", async () => {
  await withServer(okText, async (server, config) => {
    const error = await rejection(
      createOpenAIModel(config).step(stepRequest({ toolCallingMode: "required" })),
    );
    assert.equal(error.dataCode, "invalid_request");
    assert.equal(server.requests.length, 0);
  });
});

Deno.test("openai model: invalid tool calls name the problem", async (t) => {
  const cases: [string, JsonValue, RegExp][] = [
    [
      "unknown tool",
      toolCall("c", "launch_missiles", "{}"),
      /unknown tool 'launch_missiles' \(offered: get_weather\)/,
    ],
    [
      "not JSON",
      toolCall("c", "get_weather", '{"city": Oslo}'),
      /arguments of 'get_weather' are not valid JSON/,
    ],
    ["not an object", toolCall("c", "get_weather", '["Oslo"]'), /not a JSON object/],
    ["schema", toolCall("c", "get_weather", '{"city": 3}'), /do not match its schema: \/city must be string/],
    [
      "extra key",
      toolCall("c", "get_weather", '{"city": "Oslo", "x": 1}'),
      /must NOT have additional properties/,
    ],
  ];
  for (const [name, call, pattern] of cases) {
    await t.step(name, async () => {
      await withServer(() => json(completion(null, { toolCalls: [call] })), async (server, config) => {
        const error = await rejection(createOpenAIModel(config).step(stepRequest({ tools: [WEATHER] })));
        assert.equal(error.dataCode, "generation_failed");
        assert.match(error.message, pattern);
        assert.match(String(error.data.problem), pattern);
        assert.equal(server.chatBodies.length, OPENAI_STEP_ATTEMPTS);
      });
    });
  }
});

Deno.test("openai model: disallowed mode sends no tools and rejects tool calls", async () => {
  await withServer(
    () => json(completion(null, { toolCalls: [toolCall("c", "get_weather", '{"city":"Oslo"}')] })),
    async (server, config) => {
      const error = await rejection(
        createOpenAIModel(config).step(stepRequest({ tools: [], toolCallingMode: "disallowed" })),
      );
      assert.match(error.message, /unknown tool 'get_weather' \(no tools were offered\)/);
      const body = server.chatBodies[0] as JsonObject;
      assert.equal(Object.hasOwn(body, "tools"), false);
      assert.equal(Object.hasOwn(body, "tool_choice"), false);
    },
  );
});

const DECISION = {
  name: "Decision",
  generationSchema: {},
  jsonSchema: {
    type: "object",
    properties: {
      reasoning: { type: "string" },
      choice: { type: "string", enum: ["open", "refuse"] },
    },
    required: ["reasoning", "choice"],
  } as JsonObject,
};

Deno.test("openai model: structured output is validated, re-ordered and compact", async () => {
  await withServer(
    () => json(completion('```json\n{ "choice": "refuse", "reasoning": "jammed" }\n```')),
    async (server, config) => {
      const result = await createOpenAIModel(config).step(stepRequest({ responseSchema: DECISION }));
      assert.deepEqual(result, {
        kind: "structured",
        value: { reasoning: "jammed", choice: "refuse" },
        text: '{"reasoning":"jammed","choice":"refuse"}',
        usage: { inputTokens: 10, cachedInputTokens: 0, outputTokens: 5 },
      });
      assert.deepEqual(Object.keys((result as { value: JsonObject }).value), ["reasoning", "choice"]);
      assert.deepEqual((server.chatBodies[0] as JsonObject).response_format, {
        type: "json_schema",
        json_schema: { name: "Decision", schema: DECISION.jsonSchema },
      });
    },
  );
});

Deno.test("openai model: a required step of a schema turn sends tools but no response_format", async () => {
  await withServer(
    () => json(completion(null, { toolCalls: [toolCall("c1", "get_weather", '{"city":"Oslo"}')] })),
    async (server, config) => {
      const model = createOpenAIModel(config);
      const result = await model.step(
        stepRequest({ tools: [WEATHER], toolCallingMode: "required", responseSchema: DECISION }),
      );
      assert.equal(result.kind, "toolCalls");
      const body = server.chatBodies[0] as JsonObject;
      assert.equal(body.tool_choice, "required");
      assert.equal(Object.hasOwn(body, "response_format"), false);
      await model.step(
        stepRequest({ tools: [WEATHER], toolCallingMode: "allowed", responseSchema: DECISION }),
      );
      const allowed = server.chatBodies[1] as JsonObject;
      assert.equal(allowed.tool_choice, "auto");
      assert.equal((allowed.response_format as JsonObject).type, "json_schema");
    },
  );
});

Deno.test("openai model: invalid structured output is retried, then fails with the validation error", async () => {
  await withServer(
    [
      () => json(completion("not json")),
      () => json(completion('{"reasoning": "x", "choice": "maybe"}')),
    ],
    async (server, config) => {
      const error = await rejection(
        createOpenAIModel(config).step(stepRequest({ responseSchema: DECISION })),
      );
      assert.equal(error.dataCode, "generation_failed");
      assert.match(
        error.message,
        /does not match the response schema: \/choice must be equal to one of the allowed values/,
      );
      assert.equal(server.chatBodies.length, 3);
    },
  );
});

Deno.test("openai model: invalid structured output then a valid one succeeds", async () => {
  await withServer(
    [
      () => json(completion('{"reasoning": "x"}')),
      () => json(completion('{"choice":"open","reasoning":"y"}')),
    ],
    async (server, config) => {
      const result = await createOpenAIModel(config).step(stepRequest({ responseSchema: DECISION }));
      assert.equal(result.kind, "structured");
      assert.equal((result as { text: string }).text, '{"reasoning":"y","choice":"open"}');
      assert.equal(server.chatBodies.length, 2);
    },
  );
});

Deno.test("openai model: streamed structured output reports ordered partial values", async () => {
  await withServer(
    (_r, _i, s) =>
      s.sse([
        chunk({ content: '{"choice": "op' }),
        { delayMs: 15 },
        chunk({ content: 'en", "reas' }),
        { delayMs: 15 },
        chunk({ content: 'oning": "free' }),
        { delayMs: 15 },
        chunk({ content: ' pass"}' }, "stop"),
      ]),
    async (_server, config) => {
      const partials: JsonValue[] = [];
      const texts: string[] = [];
      const result = await createOpenAIModel(config).step(
        stepRequest({
          responseSchema: DECISION,
          stream: true,
          onPartial: (v) => partials.push(v),
          onText: (t) => texts.push(t),
        }),
      );
      assert.deepEqual(texts, []);
      assert.deepEqual(partials.map((p) => JSON.stringify(p)), [
        '{"choice":"op"}',
        '{"choice":"open"}',
        '{"reasoning":"free","choice":"open"}',
        '{"reasoning":"free pass","choice":"open"}',
      ]);
      assert.equal(result.kind, "structured");
      assert.equal(result.usage, null);
    },
  );
});

Deno.test("openai model: content_filter and refusal map to their codes", async () => {
  await withServer(
    [() => json(completion("", { finish: "content_filter" })), () =>
      json({
        choices: [{
          index: 0,
          message: { role: "assistant", content: null, refusal: "I can't help." },
          finish_reason: "stop",
        }],
      })],
    async (_server, config) => {
      const model = createOpenAIModel(config);
      assert.equal((await rejection(model.step(stepRequest()))).dataCode, "guardrail_violation");
      const refusal = await rejection(model.step(stepRequest()));
      assert.equal(refusal.dataCode, "refusal");
      assert.match(refusal.message, /I can't help/);
    },
  );
});

Deno.test("openai model: HTTP errors map to protocol codes with the server's message", async (t) => {
  const llamaError = (code: number, message: string, type: string) => ({ error: { code, message, type } });
  const cases: {
    name: string;
    response: () => Response;
    code: string;
    data: JsonObject;
  }[] = [
    {
      name: "401",
      response: () =>
        json({
          error: { message: "Invalid API key", type: "invalid_request_error", code: "invalid_api_key" },
        }, 401),
      code: "model_unavailable",
      data: { status: 401, serverMessage: "Invalid API key", serverCode: "invalid_api_key", reason: "auth" },
    },
    {
      name: "403",
      response: () => json(llamaError(403, "forbidden", "permission_error"), 403),
      code: "model_unavailable",
      data: { status: 403, serverMessage: "forbidden", reason: "auth" },
    },
    {
      name: "404",
      response: () =>
        json({ error: { message: "The model `x` does not exist", code: "model_not_found" } }, 404),
      code: "model_unavailable",
      data: { status: 404, serverMessage: "The model `x` does not exist", reason: "not_found" },
    },
    {
      name: "429 seconds",
      response: () => json({ error: { message: "slow down" } }, 429, { "retry-after": "7" }),
      code: "rate_limited",
      data: { status: 429, serverMessage: "slow down", retryAfterSeconds: 7 },
    },
    {
      name: "500 plain text",
      response: () => new Response("boom", { status: 500 }),
      code: "generation_failed",
      data: { status: 500, serverMessage: "boom" },
    },
    {
      name: "502",
      response: () => new Response("", { status: 502 }),
      code: "generation_failed",
      data: { status: 502, serverMessage: "" },
    },
    {
      name: "503 loading",
      response: () => json(llamaError(503, "Loading model", "unavailable_error"), 503),
      code: "model_unavailable",
      data: { status: 503, serverMessage: "Loading model" },
    },
    {
      name: "400 context (llama.cpp)",
      response: () =>
        json(
          llamaError(
            400,
            "request (5000 tokens) exceeds the available context size (4096 tokens), try increasing it",
            "exceed_context_size_error",
          ),
          400,
        ),
      code: "context_size_exceeded",
      data: { status: 400, serverType: "exceed_context_size_error" },
    },
    {
      name: "400 context (OpenAI)",
      response: () =>
        json({
          error: {
            message: "This model's maximum context length is 8192 tokens.",
            code: "context_length_exceeded",
          },
        }, 400),
      code: "context_size_exceeded",
      data: { status: 400, serverCode: "context_length_exceeded" },
    },
    {
      name: "400 other",
      response: () => json({ error: { message: "Unrecognized request argument supplied: top_k" } }, 400),
      code: "generation_failed",
      data: { status: 400, serverMessage: "Unrecognized request argument supplied: top_k" },
    },
  ];
  for (const c of cases) {
    await t.step(c.name, async () => {
      await withServer(c.response, async (server, config) => {
        const error = await rejection(createOpenAIModel(config).step(stepRequest()));
        assert.equal(error.dataCode, c.code);
        for (const [key, value] of Object.entries(c.data)) assert.deepEqual(error.data[key], value, key);
        if (typeof c.data.serverMessage === "string" && c.data.serverMessage !== "") {
          assert.ok(error.message.includes(c.data.serverMessage), error.message);
        }
        // HTTP errors are not retried by the backend.
        assert.equal(server.chatBodies.length, 1);
      });
    });
  }
});

Deno.test("openai model: optional fields a server rejects are dropped, and remembered", async () => {
  await withServer(
    (request) => {
      const body = request.body as JsonObject;
      if (Object.hasOwn(body, "top_k")) {
        return json({
          error: { message: "Unrecognized request argument supplied: top_k", type: "invalid_request_error" },
        }, 400);
      }
      if (Object.hasOwn(body, "max_tokens")) {
        return json({
          error: {
            message:
              "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.",
            type: "invalid_request_error",
            param: "max_tokens",
            code: "unsupported_parameter",
          },
        }, 400);
      }
      return okText();
    },
    async (server, config) => {
      const model = createOpenAIModel(config);
      const options = { maximumResponseTokens: 50, sampling: { mode: "topK" as const, k: 3, seed: 7 } };
      assert.equal((await model.step(stepRequest({ options }))).kind, "text");
      const sent = server.chatBodies.map((b) => {
        const { messages: _m, model: _model, ...rest } = b as JsonObject;
        return rest;
      });
      assert.deepEqual(sent, [
        { max_tokens: 50, top_k: 3, seed: 7 },
        { max_tokens: 50, seed: 7 },
        { max_completion_tokens: 50, seed: 7 },
      ]);
      // The next step sends the adjusted fields at once.
      await model.step(stepRequest({ options }));
      assert.equal(server.chatBodies.length, 4);
      const { messages: _m, model: _model, ...fourth } = server.chatBodies[3] as JsonObject;
      assert.deepEqual(fourth, { max_completion_tokens: 50, seed: 7 });
    },
  );
});

Deno.test("openai model: a 400 about a field's value is not adapted", async () => {
  await withServer(
    () => json({ error: { message: "top_k must be at least 1", param: "top_k" } }, 400),
    async (server, config) => {
      const error = await rejection(
        createOpenAIModel(config).step(stepRequest({ options: { sampling: { mode: "topK", k: 0 } } })),
      );
      assert.equal(error.dataCode, "generation_failed");
      assert.equal(error.data.serverParam, "top_k");
      assert.equal(server.chatBodies.length, 1);
    },
  );
});

Deno.test("openai model: 429 Retry-After as an HTTP date gives seconds and an ISO 8601 time", async () => {
  const header = new Date(Date.now() + 30_000).toUTCString(); // whole seconds
  const at = Date.parse(header);
  await withServer(
    () => json({ error: { message: "later" } }, 429, { "retry-after": header }),
    async (_server, config) => {
      // The bridge reads the clock when the answer comes; the test brackets that moment with its own reads,
      // so a step that runs late on a loaded machine is no failure.
      const before = Date.now();
      const error = await rejection(createOpenAIModel(config).step(stepRequest()));
      const after = Date.now();
      assert.equal(error.dataCode, "rate_limited");
      const seconds = error.data.retryAfterSeconds as number;
      const least = Math.max(0, Math.ceil((at - after) / 1000));
      const most = Math.ceil((at - before) / 1000);
      assert.ok(seconds >= least && seconds <= most, `${seconds} is not within ${least}…${most}`);
      assert.match(String(error.data.retryAfter), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      const retryAt = Date.parse(String(error.data.retryAfter));
      assert.ok(retryAt >= before + seconds * 1000 && retryAt <= after + seconds * 1000, String(retryAt));
    },
  );
});

Deno.test("openai model: malformed answers fail with generation_failed", async (t) => {
  const cases: [string, MockHandler, RegExp][] = [
    [
      "body not JSON",
      () => new Response("<html>", { headers: { "content-type": "application/json" } }),
      /not valid JSON/,
    ],
    ["no choices", () => json({ object: "chat.completion" }), /no 'choices'/],
    [
      "bad SSE data",
      (_r, _i, s) => s.sse([chunk({ content: "a" }), new RawText("data: {oops\n\n")]),
      /a stream event is not valid JSON/,
    ],
    [
      "stream ends early",
      (_r, _i, s) => s.sse([chunk({ content: "a" })], { done: false }),
      /ended before the answer was complete/,
    ],
    [
      "cut mid-event",
      (_r, _i, s) => s.sse([chunk({ content: "a" }), new RawText('data: {"choi')], { done: false }),
      /cut off/,
    ],
    [
      "error event in stream",
      (_r, _i, s) =>
        s.sse([chunk({ content: "a" }), {
          error: { code: 500, message: "slot crashed", type: "server_error" },
        }]),
      /slot crashed/,
    ],
  ];
  for (const [name, response, pattern] of cases) {
    await t.step(name, async () => {
      await withServer(response, async (_server, config) => {
        const error = await rejection(createOpenAIModel(config).step(stepRequest({ stream: true })));
        assert.equal(error.dataCode, "generation_failed");
        assert.match(error.message, pattern);
      });
    });
  }
});

Deno.test("openai model: a connection dropped mid-stream fails with generation_failed", async () => {
  const encoder = new TextEncoder();
  await withServer(
    () =>
      new Response(
        new ReadableStream<Uint8Array>({
          start(controller) {
            controller.enqueue(encoder.encode(`data: ${JSON.stringify(chunk({ content: "a" }))}\n\n`));
          },
          // Asked for more once the first chunk was taken: the connection drops mid-stream.
          pull(controller) {
            controller.error(new IntendedFailure("mock server: dropping the connection on purpose"));
          },
        }),
        { headers: { "content-type": "text/event-stream" } },
      ),
    async (_server, config) => {
      const snapshots: string[] = [];
      const error = await rejection(
        createOpenAIModel(config).step(stepRequest({ stream: true, onText: (s) => snapshots.push(s) })),
      );
      assert.equal(error.dataCode, "generation_failed");
      assert.deepEqual(snapshots, ["a"]);
    },
  );
});

Deno.test("openai model: a context error inside the stream maps to context_size_exceeded", async () => {
  await withServer(
    (_r, _i, s) =>
      s.sse([{
        error: {
          code: 400,
          message: "the request exceeds the available context size",
          type: "exceed_context_size_error",
        },
      }]),
    async (_server, config) => {
      const error = await rejection(createOpenAIModel(config).step(stepRequest({ stream: true })));
      assert.equal(error.dataCode, "context_size_exceeded");
    },
  );
});

Deno.test("openai model: connection refused maps to model_unavailable", async () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  const model = createOpenAIModel({ baseURL: `http://127.0.0.1:${port}/v1`, model: "m" });
  const error = await rejection(model.step(stepRequest()));
  assert.equal(error.dataCode, "model_unavailable");
  assert.equal(error.data.reason, "unreachable");
  // The connection's own reason, not only Deno's bare "fetch failed".
  assert.match(
    error.message,
    /^Cannot reach the model server at http:\/\/127\.0\.0\.1:\d+\/v1\/chat\/completions: fetch failed: .*Connection refused/,
  );
});

Deno.test("openai model: cancelling mid-stream rejects with cancelled at once", async () => {
  await withServer(
    (_r, _i, s) =>
      s.sse([chunk({ content: "Once" }), { delayMs: 15 }, chunk({ content: " upon" })], {
        done: false,
        hang: true,
      }),
    async (srv, config) => {
      const controller = new AbortController();
      const snapshots: string[] = [];
      let resolveTwo!: () => void;
      const two = new Promise<void>((r) => resolveTwo = r);
      const step = createOpenAIModel(config).step(
        stepRequest({
          stream: true,
          signal: controller.signal,
          onText: (s) => {
            snapshots.push(s);
            if (snapshots.length === 2) resolveTwo();
          },
        }),
      );
      await two;
      controller.abort();
      // The server never ends the stream: only the abort can end the step (the deadline fails a hang).
      const error = await withDeadline(rejection(step), "the step to reject after the abort");
      assert.equal(error.dataCode, "cancelled");
      assert.deepEqual(snapshots, ["Once", "Once upon"]);
      await srv.cancelled; // the server saw the client go away
    },
  );
});

Deno.test("openai model: cancelling while waiting for headers, and an already aborted signal", async () => {
  let release!: () => void;
  const gate = new Promise<void>((r) => release = r);
  let arrived!: () => void;
  const reached = new Promise<void>((r) => arrived = r);
  await withServer(
    async () => {
      arrived();
      await gate;
      return json(completion("late"));
    },
    async (server, config) => {
      const model = createOpenAIModel(config);
      const controller = new AbortController();
      const step = model.step(stepRequest({ signal: controller.signal }));
      await withDeadline(reached, "the request to reach the server");
      controller.abort();
      assert.equal((await rejection(step)).dataCode, "cancelled");
      release();
      const aborted = new AbortController();
      aborted.abort();
      assert.equal(
        (await rejection(model.step(stepRequest({ signal: aborted.signal })))).dataCode,
        "cancelled",
      );
      assert.equal(server.chatBodies.length, 1);
    },
  );
});

Deno.test("openai model: cancelling between retries stops at once", async () => {
  const controller = new AbortController();
  const invalid = JSON.stringify(chunk({ content: '{"reasoning": 1}' }, "stop"));
  await withServer(
    // One network write holds the whole (schema-invalid) answer and [DONE].
    (_r, _i, s) => s.sse([new RawText(`data: ${invalid}\n\ndata: [DONE]\n\n`)], { done: false }),
    async (server, config) => {
      const error = await rejection(
        createOpenAIModel(config).step(
          stepRequest({
            responseSchema: DECISION,
            stream: true,
            signal: controller.signal,
            onPartial: () => controller.abort(),
          }),
        ),
      );
      assert.equal(error.dataCode, "cancelled");
      assert.equal(server.chatBodies.length, 1, "no retry is sent after the cancel");
    },
  );
});

Deno.test("openai model: inactivity timeouts fail with generation_failed", async (t) => {
  await t.step("no headers", async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => release = r);
    await withServer(
      async () => {
        await gate;
        return json(completion("late"));
      },
      async (_server, config) => {
        const error = await rejection(createOpenAIModel(config).step(stepRequest()));
        release();
        assert.equal(error.dataCode, "generation_failed");
        assert.equal(error.data.reason, "timeout");
        assert.match(error.message, /^Timed out/);
      },
      { timeoutMs: 100 },
    );
  });
  await t.step("stalled stream", async () => {
    await withServer(
      (_r, _i, s) => s.sse([chunk({ content: "a" })], { done: false, hang: true }),
      async (_server, config) => {
        const error = await rejection(createOpenAIModel(config).step(stepRequest({ stream: true })));
        assert.equal(error.dataCode, "generation_failed");
        assert.match(error.message, /streaming the answer/);
      },
      { timeoutMs: 150 },
    );
  });
  await t.step("a slow but steady stream is fine (600 ms in all, 300 ms gaps, 500 ms timeout)", async () => {
    await withServer(
      (_r, _i, s) =>
        s.sse([
          chunk({ content: "a" }),
          { delayMs: 300 },
          chunk({ content: "b" }),
          { delayMs: 300 },
          chunk({ content: "c" }, "stop"),
        ]),
      async (_server, config) => {
        const result = await createOpenAIModel(config).step(stepRequest({ stream: true }));
        assert.equal((result as { text: string }).text, "abc");
      },
      { timeoutMs: 500 },
    );
  });
});

Deno.test("openai model: a server that answers JSON to a streaming request is accepted", async () => {
  await withServer(okText, async (_server, config) => {
    const result = await createOpenAIModel(config).step(stepRequest({ stream: true, onText: () => {} }));
    assert.equal((result as { text: string }).text, "Hi there.");
  });
});

Deno.test("openai model: two steps run in parallel", async () => {
  let arrived = 0;
  let bothArrived!: () => void;
  const both = new Promise<void>((r) => bothArrived = r);
  await withServer(
    async (request) => {
      if (++arrived === 2) bothArrived();
      await both; // neither answers until both requests are in flight
      const prompt = ((request.body as JsonObject).messages as JsonObject[]).at(-1)!.content as string;
      return json(completion(`echo ${prompt}`));
    },
    async (_server, config) => {
      const model = createOpenAIModel(config);
      const results: StepResult[] = await Promise.all([
        model.step(stepRequest({ prompt: "one" })),
        model.step(stepRequest({ prompt: "two" })),
      ]);
      assert.deepEqual(results.map((r) => (r as { text: string }).text), ["echo one", "echo two"]);
    },
  );
});
