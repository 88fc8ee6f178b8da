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
