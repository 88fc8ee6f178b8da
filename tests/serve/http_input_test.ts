/**
 * Raw HTTP against the server: malformed bodies (invalid JSON, wrong types, missing or empty messages,
 * unknown roles, broken tool-call pairing, a 10 MB body), each answered with OpenAI's error object naming the
 * field, and no model work done for any of them.
 */
import assert from "node:assert/strict";
import type { JsonObject, JsonValue } from "../../src/protocol/json.ts";
import { ask, postChat, RecordingModel, script, serve } from "./serve_fixture.ts";

function invalid(message: string, param: string | null, code: string | null): JsonObject {
  return { error: { message, type: "invalid_request_error", param, code } };
}

/** Posts `body`, expects status 400 and exactly `expected` as the body. */
async function rejects(
  base: string,
  body: JsonValue | string,
  expected: JsonObject,
  status = 400,
): Promise<void> {
  const response = await postChat(base, body);
  assert.equal(response.headers.get("content-type"), "application/json");
  assert.deepEqual([response.status, await response.json()], [status, expected]);
}

const CALL = (id: string, name = "open_gate") => ({
  id,
  type: "function",
  function: { name, arguments: '{"gate":"north"}' },
});

Deno.test("raw HTTP: malformed bodies get 400 with the field named; the model is never called", async () => {
  const model = new RecordingModel(script({ text: "never" }));
  await using s = await serve(model);
  const b = s.base;
  await rejects(
    b,
    '{"messages": [',
    invalid(
      "We could not parse the JSON body of your request. The body must be a JSON object.",
      null,
      "invalid_json",
    ),
  );
  await rejects(b, "[1, 2]", invalid("The request body must be an object.", null, null));
  await rejects(
    b,
    {},
    invalid("Missing required parameter: 'messages'.", "messages", "missing_required_parameter"),
  );
  await rejects(
    b,
    { messages: "hello" },
    invalid("Invalid type for 'messages': expected an array.", "messages", "invalid_type"),
  );
  await rejects(
    b,
    { messages: ask("x"), temperature: "hot" },
    invalid("Invalid type for 'temperature': expected a number.", "temperature", "invalid_type"),
  );
  await rejects(
    b,
    { messages: ask("x"), stream: "yes" },
    invalid("Invalid type for 'stream': expected a boolean.", "stream", "invalid_type"),
  );
  for (const stream of [{}, { stream: false }] as JsonObject[]) {
    await rejects(
      b,
      { messages: ask("x"), ...stream, stream_options: { include_usage: true } },
      invalid(
        "The 'stream_options' parameter is only allowed when 'stream' is enabled.",
        "stream_options",
        null,
      ),
    );
  }
  await rejects(
    b,
    { messages: ask("x"), n: 3 },
    invalid("Only n=1 is supported: the server generates one choice.", "n", "invalid_value"),
  );
  await rejects(
    b,
    { messages: ask("x"), tools: [{ type: "function", function: { name: 5 } }] },
    invalid(
      "Invalid type for 'tools[0].function.name': expected a string.",
      "tools[0].function.name",
      "invalid_type",
    ),
  );
  await rejects(
    b,
    { messages: ask("x"), tools: [{ type: "function", function: { name: "金貨を渡す" } }] },
    invalid(
      "Invalid 'tools[0].function.name': string does not match pattern. Expected a string that matches the " +
        "pattern '^[a-zA-Z0-9_-]+$'. Write other languages in the tool's description.",
      "tools[0].function.name",
      "invalid_value",
    ),
  );
  await rejects(
    b,
    { messages: ask("x"), tool_choice: "required" },
    invalid("tool_choice 'required' needs at least one tool in 'tools'.", "tool_choice", "invalid_value"),
  );
  await rejects(
    b,
    {
      messages: ask("x"),
      tools: [{ type: "function", function: { name: "a" } }],
      tool_choice: { type: "function", function: { name: "b" } },
    },
    invalid("tool_choice names the function 'b', which is not in 'tools'.", "tool_choice", "unknown_tool"),
  );
  await rejects(
    b,
    { messages: ask("x"), response_format: { type: "xml" } },
    invalid(
      "Invalid response_format type 'xml': expected 'text', 'json_object' or 'json_schema'.",
      "response_format.type",
      "invalid_value",
    ),
  );
  // `name` is required, as on OpenAI: a request this server takes, OpenAI takes too.
  await rejects(
    b,
    {
      messages: ask("x"),
      response_format: { type: "json_schema", json_schema: { schema: { type: "object" } } },
    },
    invalid(
      "Missing required parameter: 'response_format.json_schema.name'.",
      "response_format.json_schema.name",
      "missing_required_parameter",
    ),
  );
  await rejects(
    b,
    {
      messages: ask("x"),
      response_format: { type: "json_schema", json_schema: { name: 5, schema: { type: "object" } } },
    },
    invalid(
      "Invalid type for 'response_format.json_schema.name': expected a string.",
      "response_format.json_schema.name",
      "invalid_type",
    ),
  );
  await rejects(
    b,
    { messages: ask("x"), functions: [] },
    invalid(
      "The legacy 'functions' API is not supported; use 'tools' and 'tool_choice'.",
      "functions",
      "invalid_value",
    ),
  );
  assert.equal(model.steps.length, 0);
});

Deno.test("raw HTTP: message shapes: unknown roles, bad content, the last message, images", async () => {
  const model = new RecordingModel(script({ text: "never" }));
  await using s = await serve(model);
  const b = s.base;
  await rejects(
    b,
    { messages: [{ role: "wizard", content: "x" }] },
    invalid(
      "Invalid role 'wizard': expected 'system', 'developer', 'user', 'assistant' or 'tool'.",
      "messages[0].role",
      "invalid_value",
    ),
  );
  await rejects(
    b,
    { messages: [{ content: "x" }] },
    invalid(
      "Missing required parameter: 'messages[0].role'.",
      "messages[0].role",
      "missing_required_parameter",
    ),
  );
  await rejects(
    b,
    { messages: ["hello"] },
    invalid("'messages[0]' must be an object.", "messages[0]", "invalid_type"),
  );
  await rejects(
    b,
    { messages: [{ role: "user", content: 42 }] },
    invalid(
      "Invalid type for 'messages[0].content': expected a string or an array of content parts.",
      "messages[0].content",
      "invalid_type",
    ),
  );
  await rejects(
    b,
    { messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: "https://x/y.png" } }] }] },
    invalid(
      "Image input is not supported by this server's models; send text.",
      "messages[0].content[0].type",
      "invalid_value",
    ),
  );
  await rejects(
    b,
    { messages: [{ role: "user", content: "x" }, { role: "assistant", content: "Sure" }] },
    invalid(
      "The last message must be a 'user' or 'tool' message; a trailing 'assistant' message (response prefill) is not supported.",
      "messages",
      "invalid_last_message",
    ),
  );
  await rejects(
    b,
    { messages: [{ role: "system", content: "Be brief." }] },
    invalid("The conversation needs at least one 'user' message.", "messages", "missing_user_message"),
  );
  await rejects(
    b,
    { messages: [{ role: "function", name: "f", content: "x" }] },
    invalid(
      "The legacy 'function' role is not supported; use 'tool' messages.",
      "messages[0].role",
      "invalid_value",
    ),
  );
  assert.equal(model.steps.length, 0);
});

Deno.test("raw HTTP: tool calls and tool messages pair strictly, errors name the exact field", async () => {
  const model = new RecordingModel(script({ text: "never" }));
  await using s = await serve(model);
  const b = s.base;
  const user = { role: "user", content: "Open the gates." };
  await rejects(
    b,
    {
      messages: [
        user,
        { role: "assistant", content: null, tool_calls: [CALL("call_a"), CALL("call_b")] },
        { role: "tool", tool_call_id: "call_a", content: "opened" },
        { role: "user", content: "and?" },
      ],
    },
    invalid(
      "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. Missing responses for: call_b.",
      "messages[3]",
      "missing_tool_output",
    ),
  );
  await rejects(
    b,
    { messages: [user, { role: "tool", tool_call_id: "call_x", content: "?" }] },
    invalid(
      "Invalid 'tool_call_id' 'call_x': no earlier assistant message has a tool call with this id.",
      "messages[1].tool_call_id",
      "unknown_tool_call_id",
    ),
  );
  await rejects(
    b,
    {
      messages: [
        user,
        { role: "assistant", tool_calls: [CALL("call_a")] },
        { role: "tool", tool_call_id: "call_a", content: "opened" },
        { role: "assistant", tool_calls: [CALL("call_a")] },
      ],
    },
    invalid(
      "Duplicate tool call id 'call_a': every tool call in the conversation needs a unique id.",
      "messages[3].tool_calls[0].id",
      "duplicate_tool_call_id",
    ),
  );
  await rejects(
    b,
    {
      messages: [
        user,
        { role: "assistant", tool_calls: [CALL("call_a"), CALL("call_b")] },
        { role: "tool", tool_call_id: "call_a", content: "opened" },
        { role: "tool", tool_call_id: "call_a", content: "again" },
      ],
    },
    invalid(
      "Invalid 'tool_call_id' 'call_a': more than one 'tool' message responds to this tool call.",
      "messages[3].tool_call_id",
      "duplicate_tool_output",
    ),
  );
  await rejects(
    b,
    {
      messages: [
        user,
        {
          role: "assistant",
          tool_calls: [{ id: "call_a", type: "function", function: { name: "open_gate", arguments: "[1]" } }],
        },
        { role: "tool", tool_call_id: "call_a", content: "opened" },
      ],
    },
    invalid(
      "'arguments' must be a JSON-encoded object, got: [1]",
      "messages[1].tool_calls[0].function.arguments",
      "invalid_value",
    ),
  );
  assert.equal(model.steps.length, 0);
  // Tool outputs answered out of order are placed in call order; empty arguments are {}.
  const ok = await postChat(b, {
    messages: [
      user,
      {
        role: "assistant",
        tool_calls: [CALL("call_a"), {
          id: "call_b",
          type: "function",
          function: { name: "ring", arguments: "" },
        }],
      },
      { role: "tool", tool_call_id: "call_b", content: "rung" },
      { role: "tool", tool_call_id: "call_a", content: "opened" },
    ],
  });
  assert.equal(ok.status, 200);
  await ok.body?.cancel();
  const history = model.steps[0].history;
  assert.deepEqual(history.map((e) => [e.role, e.id]), [["user", ""], ["response", ""], ["tool", "call_a"], [
    "tool",
    "call_b",
  ]]);
  const calls = (history[1] as unknown as { toolCalls: JsonValue }).toolCalls;
  assert.deepEqual(calls, [
    { id: "call_a", name: "open_gate", arguments: '{"gate":"north"}' },
    { id: "call_b", name: "ring", arguments: "{}" },
  ]);
});

Deno.test("raw HTTP: a 10 MB body is refused with 413, declared or chunked, before any model work", async () => {
  const model = new RecordingModel(script({ text: "never" }));
  await using s = await serve(model);
  const big = JSON.stringify({ messages: ask("x".repeat(10 * 1024 * 1024)) });
  const expected = {
    error: {
      message:
        "The request body is larger than the limit of 4194304 bytes (4 MiB): send a shorter request, or " +
        "start the server with a larger --max-body-bytes.",
      type: "invalid_request_error",
      param: null,
      code: "malformed_request",
    },
  };
  const declared = await postChat(s.base, big);
  assert.deepEqual([declared.status, await declared.json()], [413, expected]);
  // Without a Content-Length (chunked transfer): cut off as soon as it passes the limit.
  const bytes = new TextEncoder().encode(big);
  const chunked = await fetch(`${s.base}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < bytes.length; i += 1 << 20) controller.enqueue(bytes.subarray(i, i + (1 << 20)));
        controller.close();
      },
    }),
  });
  assert.deepEqual([chunked.status, await chunked.json()], [413, expected]);
  assert.equal(model.steps.length, 0);
});

Deno.test("raw HTTP: names, empty arrays and out-of-range numbers get OpenAI's own messages and codes", async () => {
  const model = new RecordingModel(script({ text: "still serving" }));
  await using s = await serve(model);
  const b = s.base;
  const PATTERN =
    "string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.";
  const schemaFormat = (name: string) => ({
    messages: ask("x"),
    response_format: { type: "json_schema", json_schema: { name, schema: { type: "object" } } },
  });
  const NAME = "response_format.json_schema.name";
  for (const name of ["my schema", "quest.v1", "金貨"]) {
    await rejects(b, schemaFormat(name), invalid(`Invalid '${NAME}': ${PATTERN}`, NAME, "invalid_value"));
  }
  await rejects(
    b,
    schemaFormat(""),
    invalid(
      `Invalid '${NAME}': empty string. Expected a string with minimum length 1, but got an empty string instead.`,
      NAME,
      "empty_string",
    ),
  );
  await rejects(
    b,
    schemaFormat("q".repeat(65)),
    invalid(
      `Invalid '${NAME}': string too long. Expected a string with maximum length 64, but got a string with ` +
        "length 65 instead.",
      NAME,
      "string_above_max_length",
    ),
  );
  const tool = (name: string) => ({ messages: ask("x"), tools: [{ type: "function", function: { name } }] });
  const TOOL = "tools[0].function.name";
  await rejects(
    b,
    tool("has space"),
    invalid(
      `Invalid '${TOOL}': ${PATTERN} Write other languages in the tool's description.`,
      TOOL,
      "invalid_value",
    ),
  );
  await rejects(
    b,
    tool("t".repeat(65)),
    invalid(
      `Invalid '${TOOL}': string too long. Expected a string with maximum length 64, but got a string with ` +
        "length 65 instead.",
      TOOL,
      "string_above_max_length",
    ),
  );
  await rejects(
    b,
    tool(""),
    invalid(
      `Invalid '${TOOL}': empty string. Expected a string with minimum length 1, but got an empty string instead.`,
      TOOL,
      "empty_string",
    ),
  );
  for (const key of ["messages", "tools"]) {
    await rejects(
      b,
      { messages: ask("x"), [key]: [] },
      invalid(
        `Invalid '${key}': empty array. Expected an array with minimum length 1, but got an empty array instead.`,
        key,
        "empty_array",
      ),
    );
  }
  const PHRASES: Record<string, string> = {
    decimal_above_max_value: "decimal above maximum value",
    decimal_below_min_value: "decimal below minimum value",
    integer_below_min_value: "integer below minimum value",
  };
  const range = (key: string, value: number, code: string, bound: string) =>
    rejects(
      b,
      { messages: ask("x"), [key]: value },
      invalid(
        `Invalid '${key}': ${PHRASES[code]}. Expected a value ${bound}, but got ${value} instead.`,
        key,
        code,
      ),
    );
  await range("temperature", 3, "decimal_above_max_value", "<= 2");
  await range("temperature", -0.5, "decimal_below_min_value", ">= 0");
  await range("top_p", 1.5, "decimal_above_max_value", "<= 1");
  await range("top_p", -1, "decimal_below_min_value", ">= 0");
  await range("max_tokens", 0, "integer_below_min_value", ">= 1");
  await range("max_completion_tokens", -1, "integer_below_min_value", ">= 1");
  await range("frequency_penalty", 2.5, "decimal_above_max_value", "<= 2");
  await range("presence_penalty", -3, "decimal_below_min_value", ">= -2");
  await rejects(
    b,
    { messages: ask("x"), presence_penalty: "x" },
    invalid("Invalid type for 'presence_penalty': expected a number.", "presence_penalty", "invalid_type"),
  );
  assert.equal(model.steps.length, 0);
  // After every refusal, the server still answers the next request.
  const after = await postChat(b, { messages: ask("x") });
  assert.deepEqual([after.status, (await after.json()).choices[0].message.content], [200, "still serving"]);
});

Deno.test("raw HTTP: a valid json_schema name of 64 characters and top_p 0 (greedy, as OpenAI takes it) are served", async () => {
  const model = new RecordingModel(script({ json: { a: 1 } }, { text: "fine" }));
  await using s = await serve(model);
  const first = await postChat(s.base, {
    messages: ask("x"),
    response_format: {
      type: "json_schema",
      json_schema: {
        name: "Quest_v1-" + "q".repeat(55),
        schema: { type: "object", properties: { a: { type: "integer" } } },
      },
    },
  });
  assert.deepEqual([first.status, (await first.json()).choices[0].message.content], [200, '{"a":1}']);
  const second = await postChat(s.base, { messages: ask("x"), top_p: 0 });
  assert.deepEqual([second.status, (await second.json()).choices[0].message.content], [200, "fine"]);
  assert.deepEqual(model.steps[1].options.sampling, { mode: "greedy" });
});
