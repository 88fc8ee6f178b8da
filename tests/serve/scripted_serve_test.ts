/**
 * `oam serve --script` for a developer testing their client: a token limit cuts the scripted reply where
 * `finish_reason: "length"` and the usage say it was cut, and a scripted error is the answer of that request
 * (the server does not retry it with the next step), so a script written one step per request stays in step.
 */
import assert from "node:assert/strict";
import { ask, postChat, script, serve, sseData } from "./serve_fixture.ts";

const LONG = "The quick brown fox jumps over the lazy dog."; // 44 characters, 11 tokens

Deno.test("max_completion_tokens cuts a scripted reply: text, usage and finish_reason agree", async () => {
  await using s = await serve(script({ text: LONG }, { text: LONG, chunks: 4 }, { text: LONG }));
  const whole = await postChat(s.base, { messages: ask("x"), max_completion_tokens: 3 });
  const body = await whole.json();
  assert.equal(body.choices[0].message.content, "The quick br");
  assert.equal(body.choices[0].finish_reason, "length");
  assert.equal(body.usage.completion_tokens, 3);

  const streamed = await postChat(s.base, {
    messages: ask("x"),
    max_tokens: 3,
    stream: true,
    stream_options: { include_usage: true },
  });
  const chunks = (await sseData(streamed)).slice(0, -1).map((d) => JSON.parse(d));
  const text = chunks.map((c) => c.choices[0]?.delta.content ?? "").join("");
  assert.equal(text, "The quick br");
  assert.equal(chunks.at(-2).choices[0].finish_reason, "length");
  assert.equal(chunks.at(-1).usage.completion_tokens, 3);

  const fits = await (await postChat(s.base, { messages: ask("x"), max_completion_tokens: 20 })).json();
  assert.equal(fits.choices[0].message.content, LONG);
  assert.equal(fits.choices[0].finish_reason, "stop");
  assert.equal(fits.usage.completion_tokens, 11);
});

Deno.test("a scripted rate_limited or generation_failed step answers its own request; the next request plays the next step", async () => {
  await using s = await serve(script(
    { error: "rate_limited" },
    { text: "after the 429" },
    { error: "generation_failed" },
    { text: "after the 500" },
  ));
  const limited = await postChat(s.base, { messages: ask("x") });
  assert.equal(limited.status, 429);
  await limited.body?.cancel();
  const next = await (await postChat(s.base, { messages: ask("x") })).json();
  assert.equal(next.choices[0].message.content, "after the 429");
  const failed = await postChat(s.base, { messages: ask("x") });
  assert.equal(failed.status, 500);
  await failed.body?.cancel();
  const last = await (await postChat(s.base, { messages: ask("x") })).json();
  assert.equal(last.choices[0].message.content, "after the 500");
});

const ITEM = { name: "Oakcleaver", price: 45, lore: "Forged in the old mines under the mountain." };
const ITEM_SCHEMA = {
  type: "json_schema",
  json_schema: {
    name: "item",
    schema: {
      type: "object",
      properties: { name: { type: "string" }, price: { type: "integer" }, lore: { type: "string" } },
      required: ["name", "price", "lore"],
    },
  },
};

Deno.test("a scripted JSON answer cut by max_completion_tokens is cut-off JSON with finish_reason length, as OpenAI sends it", async () => {
  await using s = await serve(script({ json: ITEM }, { json: ITEM }, { json: ITEM }));
  const cut = JSON.stringify(ITEM).slice(0, 32);
  const body = await (await postChat(s.base, {
    messages: ask("x"),
    max_completion_tokens: 8,
    response_format: ITEM_SCHEMA,
  })).json();
  assert.equal(body.choices[0].message.content, cut);
  assert.equal(body.choices[0].finish_reason, "length");
  assert.equal(body.usage.completion_tokens, 8);

  const streamed = await postChat(s.base, {
    messages: ask("x"),
    max_completion_tokens: 8,
    response_format: ITEM_SCHEMA,
    stream: true,
  });
  const chunks = (await sseData(streamed)).slice(0, -1).map((d) => JSON.parse(d));
  assert.equal(chunks.map((c) => c.choices[0].delta.content ?? "").join(""), cut);
  assert.equal(chunks.at(-1).choices[0].finish_reason, "length");

  const object = await (await postChat(s.base, {
    messages: ask("x"),
    max_completion_tokens: 8,
    response_format: { type: "json_object" },
  })).json();
  assert.equal(object.choices[0].message.content, cut);
  assert.equal(object.choices[0].finish_reason, "length");
});

Deno.test("a scripted tool call cut by max_completion_tokens comes back cut, with finish_reason length", async () => {
  await using s = await serve(script({
    toolCalls: [{ name: "get_weather", arguments: { city: "Paris, the capital of France" } }],
  }));
  const tools = [{ type: "function", function: { name: "get_weather", parameters: { type: "object" } } }];
  const body = await (await postChat(s.base, { messages: ask("x"), tools, max_completion_tokens: 5 })).json();
  const message = body.choices[0].message;
  assert.equal(body.choices[0].finish_reason, "length");
  assert.equal(message.tool_calls.length, 1);
  assert.equal(message.tool_calls[0].function.name, "get_weather");
  assert.equal(message.tool_calls[0].function.arguments, '{"city":"');
  assert.match(message.tool_calls[0].id, /^call_[A-Za-z0-9]{24}$/);
  assert.equal(body.usage.completion_tokens, 5);
});
