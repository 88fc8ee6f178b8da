/**
 * The scripted model holds its answers to `maxResponseTokens` (§3 options, §10: a script behaves as the real
 * model does) by the bridge's own estimate, about four characters a token: a text answer is cut there, its
 * usage is the limit; a structured answer or a tool call that does not fit is an invalid answer, as a real
 * model's cut-off JSON is.
 */
import assert from "node:assert/strict";
import { scripted, WireClient } from "../helpers/wire.ts";
import { tool } from "../helpers/messages.ts";
import type { JsonObject } from "../../src/protocol/json.ts";

const LONG = "The quick brown fox jumps over the lazy dog."; // 44 characters, 11 tokens

Deno.test("scripted text over maxResponseTokens is cut at the limit, and its usage is the limit", async () => {
  const c = new WireClient();
  await c.call("session/create", {
    session: "s",
    model: scripted({ text: LONG }, { text: LONG }, { text: "Short." }),
    options: { maxResponseTokens: 3 },
  });
  const cut = await c.call("session/respond", { session: "s", prompt: "go" });
  assert.equal(cut.text, "The quick br");
  assert.equal((cut.usage as JsonObject).outputTokens, 3);
  const streamed = await c.call("session/respond", { session: "s", prompt: "go", stream: true });
  assert.equal(streamed.text, "The quick br");
  const short = await c.call("session/respond", { session: "s", prompt: "go" });
  assert.equal(short.text, "Short.");
  assert.equal((short.usage as JsonObject).outputTokens, 2);
  await c.close();
});

Deno.test("a cut of scripted text never splits a surrogate pair", async () => {
  const c = new WireClient();
  await c.call("session/create", {
    session: "s",
    model: scripted({ text: "abc👍 done" }),
    options: { maxResponseTokens: 1 },
  });
  const cut = await c.call("session/respond", { session: "s", prompt: "go" });
  assert.equal(cut.text, "abc");
  assert.equal((cut.usage as JsonObject).outputTokens, 1);
  await c.close();
});

Deno.test("a scripted structured answer over maxResponseTokens is an invalid answer cut off at the limit", async () => {
  const c = new WireClient();
  await c.call("session/create", {
    session: "s",
    model: scripted({ json: { line: "A long line that does not fit." } }),
    options: { maxResponseTokens: 4, maxAttempts: 1 },
  });
  const schema = { type: "object", properties: { line: { type: "string" } }, required: ["line"] };
  const r = await c.response(c.request("session/respond", { session: "s", prompt: "go", schema }));
  const error = r.error as JsonObject;
  assert.equal((error.data as JsonObject).code, "generation_failed");
  assert.match(String(error.message), /cut off at the token limit \(4 tokens\)/);
  assert.match(String((error.data as JsonObject).problem), /^the answer is not valid JSON: it was cut off/);
  await c.close();
});

Deno.test("a scripted tool call over maxResponseTokens is not completed: an invalid answer", async () => {
  const c = new WireClient();
  await c.call("session/create", {
    session: "s",
    tools: [tool("look")],
    model: scripted({
      toolCalls: [{ name: "look", arguments: { at: "the far northern gate of the city" } }],
    }),
    options: { maxResponseTokens: 5, maxAttempts: 1 },
  });
  const r = await c.response(c.request("session/respond", { session: "s", prompt: "go" }));
  const error = r.error as JsonObject;
  assert.equal((error.data as JsonObject).code, "generation_failed");
  assert.match(String(error.message), /did not complete its tool call: it was cut off at the token limit/);
  await c.close();
});
