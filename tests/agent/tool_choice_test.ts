/**
 * Agent loop over the wire: toolChoice auto / none / required / explicit (hidden respond_directly) /
 * {tool}, with every message of each turn asserted in order.
 */
import assert from "node:assert/strict";
import { scripted, WireClient } from "../helpers/wire.ts";
import { eventsOf, tool } from "../helpers/messages.ts";
import type { JsonObject, JsonValue } from "../../src/protocol/json.ts";

function step(index: number, rounds: number, mode: string, tools: string[]): JsonObject {
  return {
    index,
    completedToolRounds: rounds,
    toolCallingMode: mode,
    enabledTools: tools,
    trimmedEntries: 0,
  };
}

async function setup(choice: JsonValue, ...steps: JsonValue[]): Promise<WireClient> {
  const c = new WireClient();
  await c.call("session/create", {
    session: "s",
    tools: [tool("look"), tool("take")],
    options: { toolChoice: choice },
    model: scripted(...steps),
  });
  return c;
}

Deno.test("toolChoice auto: tools allowed on every step", async () => {
  const c = await setup("auto", { toolCalls: [{ name: "look" }] }, { text: "seen" });
  c.request("session/respond", { session: "s", prompt: "x", stream: true }, 1);
  c.reply((await c.toolCall(1)).id, { output: "a room" });
  const r = (await c.response(1)).result as JsonObject;
  assert.deepEqual(r.steps, [
    step(0, 0, "allowed", ["look", "take"]),
    step(1, 1, "allowed", ["look", "take"]),
  ]);
  assert.deepEqual(c.related(1).map(WireClient.kind), [
    "event:modelStep",
    "event:toolCallStarted",
    "tool/call",
    "event:toolCallCompleted",
    "event:modelStep",
    "event:text",
    "event:text",
    "response",
  ]);
  await c.close();
});

Deno.test("toolChoice none: every step disallowed with no tools", async () => {
  const c = await setup("none", { text: "no tools" });
  const r = await c.call("session/respond", { session: "s", prompt: "x" });
  assert.deepEqual(r.steps, [step(0, 0, "disallowed", [])]);
  await c.close();
});

Deno.test("toolChoice required: the first step only is required", async () => {
  const c = await setup(
    "required",
    { toolCalls: [{ name: "look" }] },
    { toolCalls: [{ name: "take" }] },
    { text: "done" },
  );
  c.request("session/respond", { session: "s", prompt: "x", stream: true }, 1);
  c.reply((await c.toolCall(1)).id, { output: "a room" });
  c.reply((await c.toolCall(2)).id, { output: "taken" });
  const r = (await c.response(1)).result as JsonObject;
  assert.deepEqual(r.steps, [
    step(0, 0, "required", ["look", "take"]),
    step(1, 1, "allowed", ["look", "take"]),
    step(2, 2, "allowed", ["look", "take"]),
  ]);
  assert.deepEqual(eventsOf(c, 1).filter((e) => e.type === "modelStep").map((e) => e.step), r.steps);
  await c.close();
});

Deno.test("toolChoice explicit: respond_directly is hidden everywhere and the next step is disallowed", async () => {
  const c = await setup("explicit", { toolCalls: [{ name: "respond_directly" }] }, {
    text: "Hello!",
    chunks: 1,
  });
  c.request("session/respond", { session: "s", prompt: "hi", stream: true }, 1);
  const r = await c.response(1);
  const result = r.result as JsonObject;
  assert.deepEqual(result.steps, [step(0, 0, "required", ["look", "take"]), step(1, 1, "disallowed", [])]);
  assert.deepEqual(result.toolCalls, []);
  assert.deepEqual(c.related(1).map(WireClient.kind), [
    "event:modelStep",
    "event:modelStep",
    "event:text",
    "response",
  ]);
  for (const line of c.lines) assert.ok(!line.includes("respond_directly"), line);
  const t = await c.call("session/transcript", { session: "s" });
  assert.ok(!JSON.stringify(t).includes("respond_directly"));
  const entries = ((t.transcript as JsonObject).transcript as JsonObject).entries as JsonObject[];
  assert.deepEqual(entries.map((e) => e.role), ["instructions", "user", "response"]);
  const list = await c.call("session/list");
  assert.equal((list.sessions as JsonObject[])[0].entries, 2);
  await c.close();
});

Deno.test("toolChoice explicit: a real tool on the first step, then tools allowed", async () => {
  const c = await setup("explicit", { toolCalls: [{ name: "look" }] }, { text: "seen" });
  c.request("session/respond", { session: "s", prompt: "x" }, 1);
  c.reply((await c.toolCall(1)).id, { output: "a room" });
  const r = (await c.response(1)).result as JsonObject;
  assert.deepEqual(r.steps, [
    step(0, 0, "required", ["look", "take"]),
    step(1, 1, "allowed", ["look", "take"]),
  ]);
  assert.equal((r.toolCalls as JsonObject[]).length, 1);
  await c.close();
});

Deno.test("toolChoice explicit: respond_directly mixed with a real call keeps only the real call", async () => {
  const c = await setup(
    "explicit",
    { toolCalls: [{ name: "respond_directly" }, { name: "look" }] },
    { text: "ok" },
  );
  c.request("session/respond", { session: "s", prompt: "x", stream: true }, 1);
  c.reply((await c.toolCall(1)).id, { output: "a room" });
  const r = (await c.response(1)).result as JsonObject;
  assert.deepEqual(r.steps, [
    step(0, 0, "required", ["look", "take"]),
    step(1, 1, "allowed", ["look", "take"]),
  ]);
  assert.deepEqual((r.toolCalls as JsonObject[]).map((t) => (t.call as JsonObject).name), ["look"]);
  for (const line of c.lines) assert.ok(!line.includes("respond_directly"), line);
  const t = await c.call("session/transcript", { session: "s" });
  assert.ok(!JSON.stringify(t).includes("respond_directly"));
  assert.equal(((await c.call("session/list")).sessions as JsonObject[])[0].entries, 5 - 1);
  await c.close();
});

Deno.test("toolChoice explicit without tools: nothing to call, the step is disallowed", async () => {
  const c = new WireClient();
  await c.call("session/create", {
    session: "e",
    options: { toolChoice: "explicit" },
    model: scripted({ text: "hi" }),
  });
  const r = await c.call("session/respond", { session: "e", prompt: "x" });
  assert.deepEqual(r.steps, [step(0, 0, "disallowed", [])]);
  await c.close();
});

Deno.test("toolChoice {tool}: the first step is required with only that tool, then all tools allowed", async () => {
  const c = await setup({ tool: "take" }, { toolCalls: [{ name: "take", arguments: { item: "key" } }] }, {
    text: "got it",
  });
  c.request("session/respond", { session: "s", prompt: "x", stream: true }, 1);
  const call = await c.toolCall(1);
  assert.deepEqual(((call.params as JsonObject).call as JsonObject).name, "take");
  assert.deepEqual(((call.params as JsonObject).call as JsonObject).arguments, { item: "key" });
  c.reply(call.id, { output: "taken" });
  const r = (await c.response(1)).result as JsonObject;
  assert.deepEqual(r.steps, [step(0, 0, "required", ["take"]), step(1, 1, "allowed", ["look", "take"])]);
  await c.close();
});

Deno.test("the scripted model plays its step whatever the mode; the tool runs even on a disallowed step", async () => {
  const c = await setup("none", { toolCalls: [{ name: "look" }] }, { text: "after" });
  c.request("session/respond", { session: "s", prompt: "x" }, 1);
  c.reply((await c.toolCall(1)).id, { output: "a room" });
  const r = (await c.response(1)).result as JsonObject;
  assert.deepEqual(r.steps, [step(0, 0, "disallowed", []), step(1, 1, "disallowed", [])]);
  await c.close();
});

Deno.test("a call of an unknown tool gets an error output and no tool/call", async () => {
  const c = await setup("auto", { toolCalls: [{ name: "fly" }] }, { template: "{toolOutput}" });
  c.request("session/respond", { session: "s", prompt: "x", stream: true }, 1);
  const r = (await c.response(1)).result as JsonObject;
  assert.equal(r.text, "Error: There is no tool named 'fly'.");
  const records = r.toolCalls as JsonObject[];
  assert.deepEqual([records[0].output, records[0].isError], ["There is no tool named 'fly'.", true]);
  assert.deepEqual(c.related(1).map(WireClient.kind), [
    "event:modelStep",
    "event:toolCallStarted",
    "event:toolCallCompleted",
    "event:modelStep",
    "event:text",
    "event:text",
    "event:text",
    "response",
  ]);
  await c.close();
});

Deno.test("toolChoice explicit: a transcript read during the turn does not show respond_directly", async () => {
  const c = await setup("explicit", { toolCalls: [{ name: "respond_directly" }] }, {
    text: "later",
    delayMs: 100,
  });
  c.request("session/respond", { session: "s", prompt: "hi", stream: true }, 1);
  await c.waitFor((m) =>
    m.method === "session/event" && ((m.params as JsonObject).event as JsonObject).type === "modelStep" &&
    (((m.params as JsonObject).event as JsonObject).step as JsonObject).index === 1
  );
  const t = await c.call("session/transcript", { session: "s" });
  assert.ok(!JSON.stringify(t).includes("respond_directly"), JSON.stringify(t));
  const entries = ((t.transcript as JsonObject).transcript as JsonObject).entries as JsonObject[];
  assert.deepEqual(entries.map((e) => e.role), ["instructions", "user"]);
  await c.response(1);
  await c.close();
});
