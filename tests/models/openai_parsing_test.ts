import assert from "node:assert/strict";
import { CompletionAccumulator, mapUsage } from "../../src/models/openai_completion.ts";
import { isContextError, parseRetryAfter } from "../../src/models/openai_errors.ts";
import { parsePartialJson } from "../../src/models/openai_partial_json.ts";
import { SseParser } from "../../src/models/openai_sse.ts";
import {
  checkStructured,
  checkToolCalls,
  stripFence,
  validatorFor,
} from "../../src/models/openai_validate.ts";
import { BridgeError } from "../../src/protocol/errors.ts";

Deno.test("sse: framing with LF, CRLF, CR split across pushes, comments, multi-line data, event names", () => {
  const parser = new SseParser();
  const events = [
    ...parser.push(': keep-alive\n\ndata: {"a":1}\n'),
    ...parser.push("\ndata: x\r"),
    ...parser.push('\ndata: y\r\n\r\nevent: error\ndata: {"error":'),
    ...parser.push("{}}\n\ndata:no-space\r\rid: 7\nretry: 5\ndata\n\n"),
    ...parser.push('error: {"message":"old llama"}\n\n'),
  ];
  assert.deepEqual(events, [
    { event: "message", data: '{"a":1}' },
    { event: "message", data: "x\ny" },
    { event: "error", data: '{"error":{}}' },
    { event: "message", data: "no-space" },
    { event: "message", data: "" },
    { event: "error", data: '{"message":"old llama"}' },
  ]);
  assert.equal(parser.pending, "");
  parser.push("data: cut");
  assert.equal(parser.pending, "data: cut");
  assert.deepEqual(parser.finish(), []);
});

Deno.test("sse: every split position of a stream yields the same events", () => {
  const text = 'data: {"choices":[{"delta":{"content":"é"}}]}\r\n\r\ndata: [DONE]\r\n\r\n';
  for (let cut = 0; cut <= text.length; cut++) {
    const parser = new SseParser();
    const events = [...parser.push(text.slice(0, cut)), ...parser.push(text.slice(cut))];
    assert.deepEqual(
      events.map((e) => e.data),
      ['{"choices":[{"delta":{"content":"é"}}]}', "[DONE]"],
      `cut ${cut}`,
    );
  }
});

Deno.test("completion: tool calls without index, repeated names, object arguments", () => {
  const acc = new CompletionAccumulator();
  acc.applyChunk({
    choices: [{ delta: { tool_calls: [{ id: "a", function: { name: "get_time", arguments: "{" } }] } }],
  });
  acc.applyChunk({
    choices: [{ delta: { tool_calls: [{ id: "a", function: { name: "get_time", arguments: "}" } }] } }],
  });
  acc.applyChunk({
    choices: [{ delta: { tool_calls: [{ id: "b", function: { name: "add", arguments: { a: 1 } } }] } }],
  });
  acc.applyChunk({ choices: [{ index: 1, delta: { content: "ignored: second choice" } }] });
  acc.applyChunk({ choices: [{ delta: {}, finish_reason: "tool_calls" }], usage: null });
  assert.deepEqual(acc.output(), {
    content: "",
    toolCalls: [
      { index: 0, id: "a", name: "get_time", arguments: "{}" },
      { index: 1, id: "b", name: "add", arguments: '{"a":1}' },
    ],
    finishReason: "tool_calls",
    refusal: null,
    usage: null,
  });
});

Deno.test("completion: malformed chunks are rejected with generation_failed", () => {
  const bad = [
    [],
    { choices: {} },
    { choices: [3] },
    { choices: [{ delta: "x" }] },
    { choices: [{ delta: { content: 5 } }] },
    { choices: [{ delta: { tool_calls: {} } }] },
    { choices: [{ delta: { tool_calls: [{ index: 0, function: { arguments: 7 } }] } }] },
  ];
  for (const chunk of bad) {
    const acc = new CompletionAccumulator();
    assert.throws(
      () => acc.applyChunk(chunk),
      (e: unknown) => e instanceof BridgeError && e.dataCode === "generation_failed",
      JSON.stringify(chunk),
    );
  }
});

Deno.test("completion: usage mapping", () => {
  assert.equal(mapUsage(undefined), null);
  assert.equal(mapUsage({}), null);
  assert.deepEqual(mapUsage({ prompt_tokens: 3, completion_tokens: 4 }), {
    inputTokens: 3,
    cachedInputTokens: 0,
    outputTokens: 4,
  });
  assert.deepEqual(mapUsage({ prompt_tokens: 3, prompt_tokens_details: { cached_tokens: 2 } }), {
    inputTokens: 3,
    cachedInputTokens: 2,
    outputTokens: 0,
  });
});

Deno.test("errors: Retry-After and context-error detection", () => {
  const now = Date.parse("2025-01-01T00:00:00Z");
  assert.deepEqual(parseRetryAfter("2.1", now), { seconds: 3, at: "2025-01-01T00:00:03.000Z" });
  assert.deepEqual(parseRetryAfter("Wed, 01 Jan 2025 00:01:00 GMT", now), {
    seconds: 60,
    at: "2025-01-01T00:01:00.000Z",
  });
  assert.deepEqual(parseRetryAfter("Tue, 31 Dec 2024 00:00:00 GMT", now), {
    seconds: 0,
    at: "2025-01-01T00:00:00.000Z",
  });
  assert.equal(parseRetryAfter("soon", now), null);
  assert.equal(parseRetryAfter(null, now), null);
  assert.ok(isContextError({ message: "This model's maximum context length is 4097 tokens" }));
  assert.ok(isContextError({ message: "x", type: "exceed_context_size_error" }));
  assert.ok(!isContextError({ message: "Invalid 'messages[0].content'" }));
});

Deno.test("partial json: prefixes of a streamed object", () => {
  const full = '{"reasoning": "a \\"b\\" \\u00e9", "list": [1, 22, {"k": true}], "n": null}';
  const seen: string[] = [];
  for (let i = 0; i <= full.length; i++) {
    const value = parsePartialJson(full.slice(0, i));
    if (value !== undefined) seen.push(JSON.stringify(value));
  }
  assert.equal(seen.at(-1), JSON.stringify(JSON.parse(full)));
  assert.equal(parsePartialJson(""), undefined);
  assert.equal(parsePartialJson("  "), undefined);
  assert.deepEqual(parsePartialJson("{"), {});
  assert.deepEqual(parsePartialJson('{"reas'), {});
  assert.deepEqual(parsePartialJson('{"reasoning": "The ga'), { reasoning: "The ga" });
  assert.deepEqual(parsePartialJson('{"a": "x\\'), { a: "x" });
  assert.deepEqual(parsePartialJson('{"a": "\\u00'), { a: "" });
  assert.deepEqual(parsePartialJson('{"a": 1, "b": tr'), { a: 1 });
  assert.deepEqual(parsePartialJson('{"a": [1, 2'), { a: [1, 2] });
  assert.deepEqual(parsePartialJson('{"a": [1, 2], "b":'), { a: [1, 2] });
  assert.deepEqual(parsePartialJson('{"a": {"b": "c"}, '), { a: { b: "c" } });
  assert.deepEqual(parsePartialJson('["x", "y'), ["x", "y"]);
  assert.equal(parsePartialJson('"str'), "str");
  assert.equal(parsePartialJson("nul"), undefined);
});

Deno.test("validate: tool calls, empty arguments, duplicate ids; structured answers", () => {
  const tools = [{ name: "ping", description: "", parameters: {}, jsonSchema: {} }];
  const ok = checkToolCalls([
    { index: 0, id: "x", name: "ping", arguments: "" },
    { index: 1, id: "x", name: "ping", arguments: " {} " },
  ], tools);
  assert.deepEqual(ok, {
    ok: true,
    value: [{ name: "ping", arguments: {}, nativeId: "x" }, { name: "ping", arguments: {} }],
  });
  assert.equal(stripFence("```json\n{}\n```"), "{}");
  assert.equal(stripFence(" {} "), "{}");
  const schema = { type: "object", properties: { n: { type: "integer" } }, required: ["n"] };
  assert.deepEqual(checkStructured('{"n": 2}', schema), { ok: true, value: { n: 2 } });
  const bad = checkStructured('{"n": 2.5}', schema);
  assert.equal(bad.ok, false);
  assert.match((bad as { problem: string }).problem, /\/n must be integer/);
  // Draft 2020-12 `$schema` and equal `$id`s in different schemas compile.
  validatorFor({ $schema: "https://json-schema.org/draft/2020-12/schema", type: "object" }, "x");
  validatorFor({ $id: "https://example.com/same.json", type: "string" }, "x");
  assert.equal(validatorFor({ $id: "https://example.com/same.json", type: "number" }, "y")(1), true);
  assert.throws(
    () => validatorFor({ $ref: "#/nowhere" }, "tool 'broken'"),
    (e: unknown) =>
      e instanceof BridgeError && e.dataCode === "invalid_schema" && /tool 'broken'/.test(e.message),
  );
});

Deno.test("validate: draft-4 boolean exclusive bounds are read as exclusive, not refused as an invalid schema", () => {
  // An older (OpenAPI 3.0 / draft-4) schema: `exclusiveMinimum: true` makes `minimum` exclusive. The scripted
  // and on-device models take it; a llama or OpenAI-compatible model refused it as invalid (-32007).
  const schema = {
    type: "object",
    properties: {
      chance: { type: "number", minimum: 0, exclusiveMinimum: true, maximum: 1, exclusiveMaximum: true },
      rolls: { type: "array", items: { type: "integer", minimum: 1, maximum: 6, exclusiveMaximum: false } },
      // Data that only looks like a bound is left as it is.
      mode: { const: { minimum: 0, exclusiveMinimum: true } },
    },
    required: ["chance"],
  };
  const ok = checkStructured(
    '{"chance":0.5,"rolls":[1,6],"mode":{"minimum":0,"exclusiveMinimum":true}}',
    schema,
  );
  assert.equal(ok.ok, true, JSON.stringify(ok));
  const low = checkStructured('{"chance":0,"mode":{"minimum":0,"exclusiveMinimum":true}}', schema);
  assert.deepEqual(low, {
    ok: false,
    problem: "the answer does not match the response schema: /chance must be > 0",
  });
  const high = checkStructured('{"chance":1,"mode":{"minimum":0,"exclusiveMinimum":true}}', schema);
  assert.deepEqual(high, {
    ok: false,
    problem: "the answer does not match the response schema: /chance must be < 1",
  });
  // `exclusiveMaximum: false` keeps `maximum` inclusive.
  assert.equal(checkStructured('{"chance":0.5,"rolls":[7]}', schema).ok, false);
  assert.equal(checkStructured('{"chance":0.5,"rolls":[6]}', schema).ok, true);
  // The client's schema object itself is not changed.
  assert.equal(schema.properties.chance.exclusiveMinimum, true);
});
