/**
 * Agent loop over the wire: maxToolRounds, maxToolCalls (the budget error output), enabledTools, and parallel
 * tool calls (tool/call back to back, answered out of order, records in completion order).
 */
import assert from "node:assert/strict";
import { scripted, WireClient } from "../helpers/wire.ts";
import { eventsOf, tool } from "../helpers/messages.ts";
import type { JsonObject } from "../../src/protocol/json.ts";

const BUDGET = "The tool budget for this turn is used up. Answer with the information you already have.";

function step(index: number, rounds: number, mode: string, tools: string[]): JsonObject {
  return {
    index,
    completedToolRounds: rounds,
    toolCallingMode: mode,
    enabledTools: tools,
    trimmedEntries: 0,
  };
}

Deno.test("maxToolRounds: later steps are disallowed with no tools", async () => {
  const c = new WireClient();
  await c.call("session/create", {
    session: "r",
    tools: [tool("look")],
    options: { maxToolRounds: 1 },
    model: scripted({ toolCalls: [{ name: "look" }] }, { text: "answer" }),
  });
  c.request("session/respond", { session: "r", prompt: "x" }, 1);
  c.reply((await c.toolCall(1)).id, { output: "seen" });
  const r = (await c.response(1)).result as JsonObject;
  assert.deepEqual(r.steps, [step(0, 0, "allowed", ["look"]), step(1, 1, "disallowed", [])]);
  // per turn: maxToolRounds 2 allows the second round
  await c.call("session/create", {
    session: "r2",
    tools: [tool("look")],
    model: scripted({ toolCalls: [{ name: "look" }] }, { toolCalls: [{ name: "look" }] }, { text: "answer" }),
  });
  c.request("session/respond", { session: "r2", prompt: "x", maxToolRounds: 2 }, 2);
  c.reply((await c.toolCall(2)).id, { output: "seen" });
  c.reply((await c.toolCall(3)).id, { output: "seen again" });
  const r2 = (await c.response(2)).result as JsonObject;
  assert.deepEqual(r2.steps, [
    step(0, 0, "allowed", ["look"]),
    step(1, 1, "allowed", ["look"]),
    step(2, 2, "disallowed", []),
  ]);
  await c.close();
});

Deno.test("maxToolCalls: extra calls get the budget error output without a tool/call", async () => {
  const c = new WireClient();
  await c.call("session/create", {
    session: "b",
    tools: [tool("look"), tool("take")],
    options: { maxToolCalls: 1 },
    model: scripted(
      { toolCalls: [{ name: "look", arguments: { at: "door" } }, { name: "take" }] },
      { template: "{toolOutputs}" },
    ),
  });
  c.request("session/respond", { session: "b", prompt: "x", stream: true }, 1);
  const call = await c.toolCall(1);
  assert.equal(((call.params as JsonObject).call as JsonObject).name, "look");
  c.reply(call.id, { output: "a door" });
  const r = (await c.response(1)).result as JsonObject;
  assert.deepEqual(c.related(1).map(WireClient.kind), [
    "event:modelStep",
    "event:toolCallStarted",
    "tool/call",
    "event:toolCallStarted",
    "event:toolCallCompleted",
    "event:toolCallCompleted",
    "event:modelStep",
    "event:text",
    "event:text",
    "event:text",
    "response",
  ]);
  const records = r.toolCalls as JsonObject[];
  // completion order: the budget error completes at once
  assert.deepEqual(records.map((t) => [(t.call as JsonObject).name, t.output, t.isError]), [
    ["take", BUDGET, true],
    ["look", "a door", false],
  ]);
  assert.equal(records[0].durationSeconds, 0);
  assert.deepEqual(r.steps, [step(0, 0, "allowed", ["look", "take"]), step(1, 1, "disallowed", [])]);
  // the model saw both outputs, in call order
  assert.equal(r.text, `a door\nError: ${BUDGET}`);
  assert.equal(c.messages.filter((m) => m.method === "tool/call").length, 1);
  await c.close();
});

Deno.test("maxToolCalls counts across rounds", async () => {
  const c = new WireClient();
  await c.call("session/create", {
    session: "b",
    tools: [tool("look")],
    model: scripted(
      { toolCalls: [{ name: "look" }, { name: "look" }] },
      { toolCalls: [{ name: "look" }, { name: "look" }] },
      { text: "done" },
    ),
  });
  c.request("session/respond", { session: "b", prompt: "x", maxToolCalls: 3 }, 1);
  for (let n = 1; n <= 3; n++) c.reply((await c.toolCall(n)).id, { output: `o${n}` });
  const r = (await c.response(1)).result as JsonObject;
  const records = r.toolCalls as JsonObject[];
  assert.deepEqual(records.map((t) => t.output), ["o1", "o2", BUDGET, "o3"]);
  assert.deepEqual(r.steps, [
    step(0, 0, "allowed", ["look"]),
    step(1, 1, "allowed", ["look"]),
    step(2, 2, "disallowed", []),
  ]);
  assert.equal(c.messages.filter((m) => m.method === "tool/call").length, 3);
  await c.close();
});

Deno.test("enabledTools restricts the tools the model sees (session option and per turn)", async () => {
  const c = new WireClient();
  await c.call("session/create", {
    session: "e",
    tools: [tool("a"), tool("b"), tool("c")],
    options: { enabledTools: ["c", "a"] },
    model: scripted(),
  });
  const steps = async (p: JsonObject) =>
    (await c.call("session/respond", { session: "e", prompt: "x", ...p })).steps;
  assert.deepEqual(await steps({}), [step(0, 0, "allowed", ["a", "c"])]);
  assert.deepEqual(await steps({ enabledTools: ["b", "zzz"] }), [step(0, 0, "allowed", ["b"])]);
  assert.deepEqual(await steps({ enabledTools: ["zzz"] }), [step(0, 0, "disallowed", [])]);
  assert.deepEqual(await steps({ toolChoice: { tool: "b" } }), [step(0, 0, "disallowed", [])]);
  await c.close();
});

Deno.test("parallel tool calls: back to back, answered out of order, records in completion order", async () => {
  const c = new WireClient();
  await c.call("session/create", {
    session: "p",
    tools: [tool("look"), tool("take"), tool("open")],
    model: scripted(
      { toolCalls: [{ name: "look" }, { name: "take", arguments: { item: "key" } }, { name: "open" }] },
      { template: "{toolOutputs}" },
    ),
  });
  c.request("session/respond", { session: "p", prompt: "x", stream: true }, 1);
  const calls = [await c.toolCall(1), await c.toolCall(2), await c.toolCall(3)];
  assert.deepEqual(calls.map((m) => m.id), ["t-1", "t-2", "t-3"]);
  // all three were sent before any reply
  assert.deepEqual(c.related(1).map(WireClient.kind), [
    "event:modelStep",
    "event:toolCallStarted",
    "tool/call",
    "event:toolCallStarted",
    "tool/call",
    "event:toolCallStarted",
    "tool/call",
  ]);
  const ids = calls.map((m) => ((m.params as JsonObject).call as JsonObject).id as string);
  assert.equal(new Set(ids).size, 3);
  for (const id of ids) assert.match(id, /^call_[A-Za-z0-9]{24}$/);
  c.reply("t-3", { output: "opened" });
  c.reply("t-1", { output: "looked" });
  c.reply("t-2", { output: "took" });
  const r = (await c.response(1)).result as JsonObject;
  const records = r.toolCalls as JsonObject[];
  assert.deepEqual(records.map((t) => (t.call as JsonObject).name), ["open", "look", "take"]);
  assert.deepEqual(records.map((t) => (t.call as JsonObject).id), [ids[2], ids[0], ids[1]]);
  const completed = eventsOf(c, 1).filter((e) => e.type === "toolCallCompleted").map((e) => e.record);
  assert.deepEqual(completed, records);
  // the model sees the outputs in call order
  assert.equal(r.text, "looked\ntook\nopened");
  for (const rec of records) {
    assert.deepEqual(Object.keys(rec), ["call", "output", "isError", "durationSeconds"]);
    assert.deepEqual(Object.keys(rec.call as JsonObject), ["id", "name", "arguments"]);
    assert.equal(typeof rec.durationSeconds, "number");
  }
  await c.close();
});
