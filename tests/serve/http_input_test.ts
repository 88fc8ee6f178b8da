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
    { messages: [] },
    invalid("'messages' must contain at least one message.", "messages", "invalid_value"),
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
    { messages: ask("x"), temperature: 3 },
    invalid("'temperature' must be between 0 and 2.", "temperature", "invalid_value"),
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
    { messages: ask("x"), max_tokens: 0 },
    invalid("The token limit must be at least 1.", "max_tokens", "invalid_value"),
  );
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
    { messages: ask("x"), tools: [{ type: "function", function: { name: "has space" } }] },
    invalid(
      "Invalid tool name 'has space': use 1-64 ASCII letters, digits, underscores or dashes (write other " +
        "languages in its description).",
      "tools[0].function.name",
      "invalid_value",
    ),
  );
  await rejects(
    b,
    { messages: ask("x"), tools: [{ type: "function", function: { name: "金貨を渡す" } }] },
    invalid(
      "Invalid tool name '金貨を渡す': use 1-64 ASCII letters, digits, underscores or dashes (write other " +
        "languages in its description).",
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
      message: "The request body is larger than the limit of 4194304 bytes.",
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
