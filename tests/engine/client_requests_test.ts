/**
 * Bridge→client request ids (§1, §7): `tool/call` ids are `t-1`, `t-2`, … in the order the calls are sent,
 * one counter for the whole bridge, never reused — also after earlier calls were answered.
 */
import assert from "node:assert/strict";
import { scripted, WireClient } from "../helpers/wire.ts";
import { tool } from "../helpers/messages.ts";
import type { JsonObject } from "../../src/protocol/json.ts";

const toolCalls = (c: WireClient) => c.messages.filter((m) => m.method === "tool/call");

Deno.test("tool/call ids: t-1, t-2, … across rounds, turns and sessions; never reused after replies", async () => {
  const c = new WireClient();
  const look = { toolCalls: [{ name: "look", arguments: {} }] };
  await c.call("session/create", {
    session: "a",
    tools: [tool("look")],
    model: scripted(look, look, { template: "{toolOutputs}" }, look, { template: "{toolOutputs}" }),
  });
  await c.call("session/create", {
    session: "b",
    tools: [tool("look")],
    model: scripted({ toolCalls: [{ name: "look" }, { name: "look" }] }, { template: "{toolOutputs}" }),
  });

  // One call at a time, each answered before the next is sent: nothing is pending when the next id is made.
  c.request("session/respond", { session: "a", prompt: "two rounds" }, 1);
  for (const n of [1, 2]) {
    const call = await c.toolCall(n);
    assert.equal(call.id, `t-${n}`);
    assert.equal(c.engine.pendingClientRequests, 1);
    c.reply(call.id as string, { output: `answer ${n}` });
    assert.equal(c.engine.pendingClientRequests, 0);
  }
  assert.equal(((await c.response(1)).result as JsonObject).text, "answer 1\nanswer 2");

  // Two calls of one step in another session: the next two ids, both pending at once.
  c.request("session/respond", { session: "b", prompt: "parallel" }, 2);
  await c.toolCall(4);
  assert.deepEqual(toolCalls(c).slice(2).map((m) => m.id), ["t-3", "t-4"]);
  c.reply("t-4", { output: "four" });
  c.reply("t-3", { output: "three" });
  assert.equal(((await c.response(2)).result as JsonObject).text, "three\nfour"); // in call order

  // A later turn continues the count; a late reply to an old id is ignored and does not answer the new call.
  c.request("session/respond", { session: "a", prompt: "again" }, 3);
  const fifth = await c.toolCall(5);
  assert.equal(fifth.id, "t-5");
  c.reply("t-1", { output: "stale" });
  assert.equal(c.engine.pendingClientRequests, 1);
  c.reply("t-5", { output: "five" });
  assert.equal(((await c.response(3)).result as JsonObject).text, "five");

  const ids = toolCalls(c).map((m) => m.id);
  assert.deepEqual(ids, ["t-1", "t-2", "t-3", "t-4", "t-5"]);
  await c.close();
});
