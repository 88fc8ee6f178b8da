/**
 * The server driven by a client nobody here wrote: the official `openai` npm package against a listening
 * server with the scripted model — plain completion, streaming, the full tool loop with `required` and with
 * a named tool, parallel calls, `json_schema` parsed and validated, usage, and errors surfaced as the SDK's
 * own error classes with the right status.
 */
import assert from "node:assert/strict";
// deno-lint-ignore no-import-prefix -- a test-only dependency, pinned here rather than in the import map
import OpenAI from "npm:openai@7.55.0";
import { Ajv } from "ajv";
import type { AgentTool } from "../../src/agent/types.ts";
import { BridgeError } from "../../src/protocol/errors.ts";
import { isToolCallsEntry } from "../../src/protocol/transcript.ts";
import { UnavailableModel } from "../../src/models/unavailable.ts";
import { FailsMidwayModel, HoldingModel, idle, RecordingModel, script, serve } from "./serve_fixture.ts";

const WEATHER = {
  type: "function" as const,
  function: {
    name: "get_weather",
    description: "Current weather for a city",
    parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  },
};
const TIME = {
  type: "function" as const,
  function: {
    name: "get_time",
    description: "Local time in a city",
    parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  },
};

function client(base: string, apiKey = "anything"): OpenAI {
  return new OpenAI({ apiKey, baseURL: `${base}/v1`, maxRetries: 0 });
}

Deno.test("openai SDK: a plain completion comes back whole, with usage", async () => {
  await using s = await serve(script({ text: "Halt! Who goes there?" }));
  const completion = await client(s.base).chat.completions.create({
    model: "system",
    messages: [{ role: "system", content: "You are a guard." }, { role: "user", content: "Hello" }],
  });
  assert.match(completion.id, /^chatcmpl-[A-Za-z0-9]{29}$/);
  assert.equal(typeof completion.created, "number");
  assert.deepEqual({ ...completion, id: "", created: 0, usage: null }, {
    id: "",
    object: "chat.completion",
    created: 0,
    model: "system",
    system_fingerprint: "fp_open_apple_models",
    choices: [{
      index: 0,
      message: { role: "assistant", content: "Halt! Who goes there?", refusal: null, annotations: [] },
      logprobs: null,
      finish_reason: "stop",
    }],
    usage: null,
  });
  const usage = completion.usage!;
  assert.ok(usage.prompt_tokens > 0 && usage.completion_tokens > 0);
  assert.equal(usage.total_tokens, usage.prompt_tokens + usage.completion_tokens);
  assert.deepEqual(usage.prompt_tokens_details, { cached_tokens: 0 });
  assert.deepEqual(usage.completion_tokens_details, { reasoning_tokens: 0 });
});

Deno.test("openai SDK: streaming gives a role chunk, content deltas, the finish chunk and a usage chunk", async () => {
  await using s = await serve(script({ text: "The gate is closed for the night.", chunks: 4 }));
  const stream = await client(s.base).chat.completions.create({
    model: "system",
    messages: [{ role: "user", content: "Can I pass?" }],
    stream: true,
    stream_options: { include_usage: true },
  });
  const chunks: OpenAI.Chat.ChatCompletionChunk[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  assert.ok(chunks.every((c) => c.object === "chat.completion.chunk" && c.id === chunks[0].id));
  assert.deepEqual(chunks[0].choices, [{
    index: 0,
    delta: { role: "assistant", content: "" },
    logprobs: null,
    finish_reason: null,
  }]);
  const deltas = chunks.slice(1, -2).map((c) => c.choices[0].delta.content);
  assert.ok(deltas.length >= 2, `several deltas: ${deltas}`);
  assert.equal(deltas.join(""), "The gate is closed for the night.");
  assert.deepEqual(chunks.at(-2)!.choices, [{ index: 0, delta: {}, logprobs: null, finish_reason: "stop" }]);
  assert.ok(chunks.slice(0, -1).every((c) => c.usage === null));
  const last = chunks.at(-1)!;
  assert.deepEqual(last.choices, []);
  assert.ok(last.usage!.completion_tokens > 0);
});

Deno.test("openai SDK: a failure mid-stream surfaces as an APIError after the deltas that came before it", async () => {
  const lost = new FailsMidwayModel(
    "The road north",
    BridgeError.of("model_unavailable", "The model stopped responding."),
  );
  await using s = await serve(lost);
  const stream = await client(s.base).chat.completions.create({
    model: "system",
    messages: [{ role: "user", content: "Which way?" }],
    stream: true,
  });
  const contents: Array<string | null | undefined> = [];
  const error = await (async () => {
    for await (const chunk of stream) contents.push(chunk.choices[0].delta.content);
  })().then(() => null, (e) => e);
  assert.deepEqual(contents, ["", "The road north"]);
  assert.ok(error instanceof OpenAI.APIError, `expected an APIError, got ${error}`);
  assert.deepEqual([error.code, error.type, error.error], ["model_unavailable", "server_error", {
    message: "The model stopped responding.",
    type: "server_error",
    param: null,
    code: "model_unavailable",
  }]);
});

Deno.test("openai SDK: the tool loop with tool_choice required: real tool_calls, then the tool message, then the answer", async () => {
  const model = new RecordingModel(
    script(
      { toolCalls: [{ name: "get_weather", arguments: { city: "Paris" } }] },
      { template: "In Paris: {toolOutput}" },
    ),
  );
  await using s = await serve(model);
  const openai = client(s.base);
  const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [
    { role: "user", content: "What is the weather in Paris?" },
  ];
  const first = await openai.chat.completions.create({
    model: "system",
    messages,
    tools: [WEATHER, TIME],
    tool_choice: "required",
  });
  const choice = first.choices[0];
  assert.equal(choice.finish_reason, "tool_calls");
  assert.equal(choice.message.content, null);
  const calls = choice.message.tool_calls!;
  assert.equal(calls.length, 1);
  const call = calls[0];
  assert.match(call.id, /^call_[A-Za-z0-9]{24}$/);
  assert.equal(call.type, "function");
  assert.equal(call.type === "function" && call.function.name, "get_weather");
  assert.deepEqual(call.type === "function" && JSON.parse(call.function.arguments), { city: "Paris" });
  // Answering with the calls ended the turn and freed its slot.
  await idle(s.server);
  // The model was asked for a tool call, with both tools.
  assert.equal(model.steps[0].toolCallingMode, "required");
  assert.deepEqual(model.steps[0].tools.map((t) => t.name), ["get_weather", "get_time"]);

  messages.push(choice.message, { role: "tool", tool_call_id: call.id, content: "sunny, 21 °C" });
  const second = await openai.chat.completions.create({ model: "system", messages, tools: [WEATHER, TIME] });
  assert.equal(second.choices[0].finish_reason, "stop");
  assert.equal(second.choices[0].message.content, "In Paris: sunny, 21 °C");
  assert.equal(second.choices[0].message.tool_calls, undefined);
  // The continuation saw the call and its output paired by the client's id, and an empty prompt.
  const step = model.steps[1];
  assert.equal(step.prompt, "");
  const callsEntry = step.history.find(isToolCallsEntry)!;
  assert.deepEqual(callsEntry.toolCalls, [{
    id: call.id,
    name: "get_weather",
    arguments: '{"city":"Paris"}',
  }]);
  const output = step.history.at(-1)!;
  assert.deepEqual([output.role, output.id], ["tool", call.id]);
});

Deno.test("openai SDK: a named tool choice shows the model only that tool and forces the call", async () => {
  const model = new RecordingModel(
    script({ toolCalls: [{ name: "get_time", arguments: { city: "Tokyo" } }] }, {
      template: "It is {toolOutput}.",
    }),
  );
  await using s = await serve(model);
  const openai = client(s.base);
  const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [{ role: "user", content: "Time in Tokyo?" }];
  const first = await openai.chat.completions.create({
    model: "system",
    messages,
    tools: [WEATHER, TIME],
    tool_choice: { type: "function", function: { name: "get_time" } },
  });
  assert.equal(first.choices[0].finish_reason, "tool_calls");
  assert.equal(model.steps[0].toolCallingMode, "required");
  assert.deepEqual(model.steps[0].tools.map((t) => t.name), ["get_time"]);
  const call = first.choices[0].message.tool_calls![0];
  assert.equal(call.type === "function" && call.function.name, "get_time");
  messages.push(first.choices[0].message, { role: "tool", tool_call_id: call.id, content: "09:30" });
  const second = await openai.chat.completions.create({ model: "system", messages, tools: [WEATHER, TIME] });
  assert.equal(second.choices[0].message.content, "It is 09:30.");
});

Deno.test("openai SDK: parallel calls stream as one delta with indexes; parallel_tool_calls false keeps the first", async () => {
  const step = {
    toolCalls: [
      { name: "get_weather", arguments: { city: "Paris" } },
      { name: "get_weather", arguments: { city: "Tokyo" } },
    ],
  };
  await using s = await serve(script(step, step));
  const openai = client(s.base);
  const stream = await openai.chat.completions.create({
    model: "system",
    messages: [{ role: "user", content: "Paris and Tokyo?" }],
    tools: [WEATHER],
    stream: true,
  });
  const chunks: OpenAI.Chat.ChatCompletionChunk[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  assert.equal(chunks.length, 2);
  const delta = chunks[0].choices[0].delta.tool_calls!;
  assert.deepEqual(delta.map((c) => [c.index, c.type, c.function?.name, c.function?.arguments]), [
    [0, "function", "get_weather", '{"city":"Paris"}'],
    [1, "function", "get_weather", '{"city":"Tokyo"}'],
  ]);
  assert.notEqual(delta[0].id, delta[1].id);
  assert.equal(chunks[1].choices[0].finish_reason, "tool_calls");
  const single = await openai.chat.completions.create({
    model: "system",
    messages: [{ role: "user", content: "Paris and Tokyo?" }],
    tools: [WEATHER],
    parallel_tool_calls: false,
  });
  const calls = single.choices[0].message.tool_calls!;
  assert.equal(calls.length, 1);
  assert.equal(calls[0].type === "function" && calls[0].function.arguments, '{"city":"Paris"}');
});

Deno.test("openai SDK: a json_schema answer parses and validates, keys in schema order", async () => {
  await using s = await serve(script({ json: { age: 31, name: "Mira", trade: "innkeeper" } }));
  const schema = {
    type: "object",
    properties: { name: { type: "string" }, age: { type: "integer" }, trade: { type: "string" } },
    required: ["name", "age", "trade"],
    additionalProperties: false,
  };
  const completion = await client(s.base).chat.completions.create({
    model: "system",
    messages: [{ role: "user", content: "Describe the innkeeper." }],
    response_format: { type: "json_schema", json_schema: { name: "person", schema, strict: true } },
  });
  const content = completion.choices[0].message.content!;
  assert.equal(content, '{"name":"Mira","age":31,"trade":"innkeeper"}');
  const validate = new Ajv().compile(schema);
  assert.ok(validate(JSON.parse(content)), JSON.stringify(validate.errors));
});

Deno.test("openai SDK: errors are the SDK's own classes with the right status, code and param", async () => {
  await using s = await serve(script({ json: { name: 5 } }), { apiKey: "secret" });
  const openai = client(s.base, "secret");
  const expect = async (
    request: Promise<unknown>,
    // deno-lint-ignore no-explicit-any -- the SDK's error classes narrow the constructor's status
    Class: new (...args: any[]) => InstanceType<typeof OpenAI.APIError>,
    status: number,
    code: string | null,
    param: string | null,
  ) => {
    const error = await request.then(() => null, (e) => e);
    assert.ok(error instanceof Class, `expected ${Class.name}, got ${error}`);
    assert.deepEqual([error.status, error.code, error.param], [status, code, param]);
  };
  const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [{ role: "user", content: "x" }];
  await expect(
    openai.chat.completions.create({ model: "system", messages, n: 2 }),
    OpenAI.BadRequestError,
    400,
    "invalid_value",
    "n",
  );
  await expect(
    openai.chat.completions.create({ model: "gpt-9", messages }),
    OpenAI.NotFoundError,
    404,
    "model_not_found",
    "model",
  );
  await expect(
    client(s.base, "wrong").chat.completions.create({ model: "system", messages }),
    OpenAI.AuthenticationError,
    401,
    "invalid_api_key",
    null,
  );
  await expect(
    openai.chat.completions.create({
      model: "system",
      messages,
      response_format: {
        type: "json_schema",
        json_schema: { name: "p", schema: { type: "object", properties: { name: { type: "string" } } } },
      },
    }),
    OpenAI.InternalServerError,
    500,
    "invalid_json_output",
    null,
  );
  // The SDK's types require the schema's name, and so does OpenAI's API: without one it is a 400 here too.
  await expect(
    openai.chat.completions.create({
      model: "system",
      messages,
      // @ts-expect-error: a json_schema without its name
      response_format: { type: "json_schema", json_schema: { schema: { type: "object" } } },
    }),
    OpenAI.BadRequestError,
    400,
    "missing_required_parameter",
    "response_format.json_schema.name",
  );
});

Deno.test("openai SDK: a full queue is a RateLimitError (429) and an unavailable model a 503", async () => {
  const holding = new HoldingModel();
  await using s = await serve(holding, { maxConcurrentRequests: 1, maxQueuedRequests: 0 });
  const openai = client(s.base);
  const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [{ role: "user", content: "x" }];
  const running = openai.chat.completions.create({ model: "system", messages });
  await holding.whenStarted(1);
  const error = await openai.chat.completions.create({ model: "system", messages }).then(
    () => null,
    (e) => e,
  );
  assert.ok(error instanceof OpenAI.RateLimitError);
  assert.deepEqual([error.status, error.code, error.headers.get("retry-after")], [429, "rate_limited", "1"]);
  assert.equal(
    error.message,
    "429 Too many requests are waiting for the model: 1 completion runs at a time and 0 may wait. Retry shortly, or " +
      "start the server with a higher --max-queued (or --max-concurrent).",
  );
  holding.release();
  assert.equal((await running).choices[0].message.content, "Once upon a time.");

  await using down = await serve(new UnavailableModel("model_not_ready"));
  const unavailable = await client(down.base).chat.completions.create({ model: "system", messages }).then(
    () => null,
    (e) => e,
  );
  assert.ok(unavailable instanceof OpenAI.InternalServerError);
  assert.deepEqual([unavailable.status, unavailable.code, unavailable.headers.get("retry-after")], [
    503,
    "model_unavailable",
    "30",
  ]);
});

/** An unavailable model that counts how often it was asked. */
class CountingUnavailableModel extends UnavailableModel {
  asked = 0;
  override availability() {
    this.asked++;
    return super.availability();
  }
}

Deno.test("openai SDK: a model that cannot become available fails at once, without the SDK's retries", async () => {
  // A device that cannot run the model: waiting cannot help, so no Retry-After and x-should-retry: false.
  // Before, Retry-After: 30 made the SDK (2 retries by default) wait a minute before it reported the error.
  const model = new CountingUnavailableModel("device_not_eligible");
  await using down = await serve(model);
  const openai = new OpenAI({ apiKey: "anything", baseURL: `${down.base}/v1` });
  const error = await openai.chat.completions.create({
    model: "system",
    messages: [{ role: "user", content: "x" }],
  }).then(() => null, (e) => e);
  assert.ok(error instanceof OpenAI.InternalServerError);
  assert.deepEqual(
    [error.status, error.code, error.headers.get("retry-after"), error.headers.get("x-should-retry")],
    [503, "model_unavailable", null, "false"],
  );
  assert.equal(model.asked, 1, "the SDK did not retry");
  // What the SDK's user reads says why in words and how to serve a model this machine runs.
  assert.equal(
    error.message,
    "503 The model 'system' is unavailable: device_not_eligible (this device cannot run Apple Intelligence). " +
      "Start the server with --model gguf:<file.gguf>, --model openai:<baseURL>#<model> or --script <file> " +
      "to serve another model.",
  );
});

Deno.test("openai SDK: a request in flight when the server stops reports the shutdown, not a connection error", async () => {
  // Before, the 503 invited the SDK's retries (2 by default), which met a closed port: the user saw only
  // "Connection error." and could not tell a stop from a crash.
  const holding = new HoldingModel();
  const s = await serve(holding);
  const openai = new OpenAI({ apiKey: "anything", baseURL: `${s.base}/v1` });
  const inFlight = openai.chat.completions.create({
    model: "system",
    messages: [{ role: "user", content: "x" }],
  }).then(() => null, (e) => e);
  await holding.whenStarted(1);
  await s.server.stop();
  const error = await inFlight;
  assert.ok(error instanceof OpenAI.InternalServerError, String(error));
  assert.deepEqual(
    [error.status, error.code, error.message, error.headers.get("x-should-retry")],
    [503, "server_shutting_down", "503 The server is shutting down.", "false"],
  );
});

Deno.test("openai SDK: server tools run in the server and never show; only the answer comes back", async () => {
  const seen: unknown[] = [];
  const lookup: AgentTool = {
    name: "lookup_price",
    description: "Price of an item",
    jsonSchema: { type: "object", properties: { item: { type: "string" } } },
    generationSchema: {
      title: "LookupPriceArguments",
      type: "object",
      properties: { item: { type: "string" } },
      required: [],
      additionalProperties: false,
      "x-order": ["item"],
    },
    execution: "local",
    timeoutMs: 5000,
    run: (args) => {
      seen.push(args);
      return { output: { price: 12 }, isError: false };
    },
  };
  const model = new RecordingModel(
    script({ toolCalls: [{ name: "lookup_price", arguments: { item: "ale" } }] }, {
      template: "Ale: {toolOutput}",
    }),
  );
  await using s = await serve(model, { serverTools: [lookup] });
  const completion = await client(s.base).chat.completions.create({
    model: "system",
    messages: [{ role: "user", content: "How much is the ale?" }],
    tools: [WEATHER],
  });
  assert.deepEqual(completion.choices[0].message, {
    role: "assistant",
    content: 'Ale: {"price":12}',
    refusal: null,
    annotations: [],
  });
  assert.equal(completion.choices[0].finish_reason, "stop");
  assert.deepEqual(seen, [{ item: "ale" }]);
  assert.deepEqual(model.steps[0].tools.map((t) => t.name), ["get_weather", "lookup_price"]);
});

Deno.test("openai SDK: a streamed tool call starts with the role in the calls' chunk, so the SDK's final message has content null as when not streamed", async () => {
  const step = { toolCalls: [{ name: "get_weather", arguments: { city: "Paris" } }] };
  await using s = await serve(script(step, step));
  const openai = client(s.base);
  const request = {
    model: "system",
    messages: [{ role: "user" as const, content: "Weather in Paris?" }],
    tools: [WEATHER],
  };
  const plain = (await openai.chat.completions.create(request)).choices[0].message;
  const stream = openai.chat.completions.stream(request);
  const chunks: OpenAI.Chat.ChatCompletionChunk[] = [];
  stream.on("chunk", (chunk) => chunks.push(chunk));
  const streamed = (await stream.finalChatCompletion()).choices[0].message;
  // As OpenAI streams a tool call: the first delta is the role, `content: null` and the calls.
  assert.deepEqual(Object.keys(chunks[0].choices[0].delta), ["role", "content", "tool_calls"]);
  assert.equal(chunks[0].choices[0].delta.content, null);
  // Before: a role chunk with `content: ""` came first, and the streamed message's content was "" (null not
  // streamed).
  assert.equal(streamed.content, null);
  assert.equal(plain.content, null);
  assert.deepEqual(
    streamed.tool_calls?.map((c) => c.type === "function" && [c.function.name, c.function.arguments]),
    plain.tool_calls?.map((c) => c.type === "function" && [c.function.name, c.function.arguments]),
  );
});

Deno.test("openai SDK: a wrong key, a body over the limit and an unknown model id each say what fixes them", async () => {
  await using s = await serve(script({ text: "never" }), { apiKey: "secret", maxRequestBodyBytes: 2048 });
  const failure = (request: Promise<unknown>) =>
    request.then(() => null, (e: InstanceType<typeof OpenAI.APIError>) => e);
  const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [{ role: "user", content: "x" }];
  const wrongKey = await failure(
    client(s.base, "wrong").chat.completions.create({ model: "system", messages }),
  );
  assert.equal(
    wrongKey?.message,
    "401 Incorrect API key provided: send the key the server was started with (its --api-key or OAM_API_KEY).",
  );
  const big = await failure(
    client(s.base, "secret").chat.completions.create({
      model: "system",
      messages: [{ role: "user", content: "x".repeat(4096) }],
    }),
  );
  assert.equal(
    big?.message,
    "413 The request body is larger than the limit of 2048 bytes (2 KiB): send a shorter request, or start " +
      "the server with a larger --max-body-bytes.",
  );
  const unknown = await failure(client(s.base, "secret").models.retrieve("gpt-4o"));
  assert.equal(
    unknown?.message,
    "404 The model 'gpt-4o' does not exist. Available models: system. To answer it with the server's model, " +
      "start the server with --model-alias gpt-4o=system.",
  );
});
