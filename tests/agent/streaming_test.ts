/**
 * Streaming events over the wire: modelStep, text (delta/text/isReset, chunks), partial, toolCallStarted,
 * toolCallCompleted, their exact shapes and order; stream false sends no session/event at all.
 */
import assert from "node:assert/strict";
import { scripted, WireClient } from "../helpers/wire.ts";
import { eventsOf } from "../helpers/messages.ts";
import type { JsonObject } from "../../src/protocol/json.ts";

function text(delta: string, all: string, isReset = false): JsonObject {
  return { type: "text", delta, text: all, isReset };
}

Deno.test("text events: chunks of ceil(len/chunks) characters with cumulative text", async () => {
  const c = new WireClient();
  await c.call("session/create", {
    session: "s",
    model: scripted(
      { text: "Hello world!", chunks: 3 },
      { text: "Hello world!" },
      { text: "One piece.", chunks: 1 },
      { text: "ab", chunks: 5 },
      { text: "héllo😀!", chunks: 2 },
      { template: "You said {prompt}" },
    ),
  });
  const run = async (id: number) => {
    c.request("session/respond", { session: "s", prompt: "hi", stream: true }, id);
    await c.response(id);
    return eventsOf(c, id).filter((e) => e.type === "text");
  };
  assert.deepEqual(await run(1), [
    text("Hell", "Hell"),
    text("o wo", "Hello wo"),
    text("rld!", "Hello world!"),
  ]);
  assert.deepEqual(await run(2), [
    text("Hell", "Hell"),
    text("o wo", "Hello wo"),
    text("rld!", "Hello world!"),
  ]);
  assert.deepEqual(await run(3), [text("One piece.", "One piece.")]);
  assert.deepEqual(await run(4), [text("ab", "ab")]);
  assert.deepEqual(await run(5), [text("héll", "héll"), text("o😀!", "héllo😀!")]);
  assert.deepEqual(await run(6), [
    text("You ", "You "),
    text("said", "You said"),
    text(" hi", "You said hi"),
  ]);
  // the event envelope: session, requestId, event; event keys in order
  const m = c.related(1)[1];
  assert.deepEqual(Object.keys(m), ["jsonrpc", "method", "params"]);
  assert.deepEqual(Object.keys(m.params as JsonObject), ["session", "requestId", "event"]);
  assert.deepEqual(Object.keys((m.params as JsonObject).event as JsonObject), [
    "type",
    "delta",
    "text",
    "isReset",
  ]);
  await c.close();
});

Deno.test("text events: a chunk boundary never splits a character (emoji sequences, accents, flags)", async () => {
  const family = "👨‍👩‍👧‍👦"; // 7 code points, one character
  const accented = "e\u0301\u0302"; // a letter and two combining accents
  const c = new WireClient();
  await c.call("session/create", {
    session: "s",
    model: scripted(
      { text: `${family}${accented}👍🏽🇯🇵`, chunks: 3 },
      { text: `いらっしゃい！${family} Grüße, مرحبا`, chunks: 12 },
    ),
  });
  const run = async (id: number) => {
    c.request("session/respond", { session: "s", prompt: "hi", stream: true }, id);
    await c.response(id);
    return eventsOf(c, id).filter((e) => e.type === "text").map((e) => e.delta as string);
  };
  // 4 characters in 3 chunks: pieces of 2.
  assert.deepEqual(await run(1), [`${family}${accented}`, "👍🏽🇯🇵"]);
  const deltas = await run(2);
  assert.equal(deltas.join(""), `いらっしゃい！${family} Grüße, مرحبا`);
  assert.ok(deltas.length > 6, JSON.stringify(deltas));
  for (const delta of deltas) {
    // No piece starts with the rest of a character (a joiner, an accent, a skin tone) or splits a pair.
    assert.ok(delta.isWellFormed() && !/^[\u200d\u0300-\u036f\u{1F3FB}-\u{1F3FF}]/u.test(delta), delta);
  }
  await c.close();
});

Deno.test("every event of a tool turn has the documented shape, in order", async () => {
  const c = new WireClient();
  await c.call("session/create", {
    session: "g",
    tools: [{ name: "open_gate", description: "Open a gate." }],
    options: { toolChoice: "required" },
    model: scripted({ toolCalls: [{ name: "open_gate", arguments: { gate: "north" } }] }, {
      text: "It opened.",
      chunks: 1,
    }),
  });
  c.request("session/respond", { session: "g", prompt: "Open it.", stream: true }, 7);
  const call = await c.toolCall(1);
  c.reply(call.id, { output: { opened: true } });
  const r = (await c.response(7)).result as JsonObject;
  const callInfo = (call.params as JsonObject).call as JsonObject;
  assert.deepEqual(Object.keys(call.params as JsonObject), ["session", "requestId", "call"]);
  assert.deepEqual(Object.keys(call), ["jsonrpc", "id", "method", "params"]);
  const record = (r.toolCalls as JsonObject[])[0];
  const steps = r.steps as JsonObject[];
  assert.deepEqual(eventsOf(c, 7), [
    { type: "modelStep", step: steps[0] },
    { type: "toolCallStarted", call: callInfo, execution: "client" },
    { type: "toolCallCompleted", record },
    { type: "modelStep", step: steps[1] },
    text("It opened.", "It opened."),
  ]);
  assert.deepEqual(callInfo, { id: callInfo.id, name: "open_gate", arguments: { gate: "north" } });
  assert.deepEqual(record, {
    call: callInfo,
    output: { opened: true },
    isError: false,
    durationSeconds: record.durationSeconds,
  });
  const ms = record.durationSeconds as number;
  assert.equal(Math.round(ms * 1000) / 1000, ms, "durationSeconds is rounded to milliseconds");
  await c.close();
});

Deno.test("stream false: no session/event at all, tool/call still sent", async () => {
  const c = new WireClient();
  await c.call("session/create", {
    session: "q",
    tools: [{ name: "look", description: "Look." }],
    model: scripted({ toolCalls: [{ name: "look" }] }, { text: "one" }, { json: { a: 1 } }, {
      json: { b: 2 },
    }),
  });
  c.request("session/respond", { session: "q", prompt: "x" }, 1);
  c.reply((await c.toolCall(1)).id, { output: "seen" });
  await c.response(1);
  c.request("session/respond", { session: "q", prompt: "x", stream: false }, 2);
  await c.response(2);
  const schema = { type: "object", properties: { b: { type: "integer" } } };
  c.request("session/respond", { session: "q", prompt: "x", schema, stream: false }, 3);
  await c.response(3);
  assert.deepEqual(c.messages.filter((m) => m.method === "session/event"), []);
  assert.deepEqual(c.related(1).map(WireClient.kind), ["tool/call", "response"]);
  assert.equal(((await c.response(2)).result as JsonObject).text, '{"a":1}');
  assert.deepEqual(((await c.response(3)).result as JsonObject).structured, { b: 2 });
  await c.close();
});

Deno.test("a json step in a text turn streams its JSON text once", async () => {
  const c = new WireClient();
  await c.call("session/create", { session: "j", model: scripted({ json: { b: [1, 2] } }) });
  c.request("session/respond", { session: "j", prompt: "x", stream: true }, 1);
  const r = (await c.response(1)).result as JsonObject;
  assert.equal(r.text, '{"b":[1,2]}');
  assert.equal(r.structured, undefined);
  assert.deepEqual(eventsOf(c, 1).slice(1), [text('{"b":[1,2]}', '{"b":[1,2]}')]);
  await c.close();
});

Deno.test("partial events in schema turns end with the value in schema order", async () => {
  const c = new WireClient();
  const schema = {
    type: "object",
    properties: { name: { type: "string" }, items: { type: "array", items: { type: "string" } } },
  };
  await c.call("session/create", { session: "p", model: scripted({ json: { items: ["x"], name: "loot" } }) });
  c.request("session/respond", { session: "p", prompt: "x", schema, stream: true }, 1);
  const r = (await c.response(1)).result as JsonObject;
  const partials = eventsOf(c, 1).filter((e) => e.type === "partial");
  assert.ok(partials.length >= 1);
  assert.deepEqual(Object.keys(partials.at(-1)!.value as JsonObject), ["name", "items"]);
  assert.deepEqual(partials.at(-1)!.value, r.structured);
  assert.equal(eventsOf(c, 1).filter((e) => e.type === "text").length, 0);
  await c.close();
});
