import assert from "node:assert/strict";
import { BridgeError } from "../../../src/protocol/errors.ts";
import type { JsonObject } from "../../../src/protocol/json.ts";
import { WireClient } from "../../helpers/wire.ts";
import { capture, displayed, fnClient, NpcClient, tool } from "./npc_helpers.ts";

const GORM = { name: "Gorm", role: "the village blacksmith" };

Deno.test("npc/event: every message of a streamed turn with a client tool and a world write, in order", async () => {
  const c = new NpcClient();
  await c.call("world/create", { world: "village", state: { quests: { ring: "open" } } });
  await c.call("world/subscribe", { world: "village", path: "quests" });
  await c.call("npc/create", {
    npc: "gorm",
    persona: GORM,
    world: "village",
    tools: [
      tool("check_inventory", { parameters: { type: "object", properties: { item: { type: "string" } } } }),
    ],
    options: { groundingTool: "check_inventory", worldWritable: ["quests"] },
    model: capture(
      { toolCalls: [{ name: "check_inventory", arguments: { item: "sword" } }] },
      { toolCalls: [{ name: "update_world_state", arguments: { path: "Quests.Ring", value: "done" } }] },
      {
        json: {
          emotion: "proud",
          line: "Three swords. Ring quest done.",
          player_options: ["Buy one.", "Thanks!", "Bye."],
          ends_conversation: false,
        },
      },
    ),
  });
  const before = c.messages.length;
  c.request("npc/talk", { npc: "gorm", line: "Swords? And I found the ring.", stream: true }, 10);
  const call = await c.toolCall(1);
  assert.deepEqual(Object.keys(call.params as JsonObject), ["npc", "requestId", "call"]);
  c.reply(call.id as string, { output: { stock: 3 } });
  const result = await c.result(10);
  const messages = c.messages.slice(before);
  assert.deepEqual(messages.map(WireClient.kind), [
    "npc:toolCallStarted",
    "tool/call",
    "npc:toolCallCompleted",
    "npc:toolCallStarted",
    "world/changed",
    "npc:toolCallCompleted",
    "npc:emotion",
    "npc:lineDelta",
    "response",
  ]);
  const events = c.events(10);
  const callInfo = events[0].call as JsonObject;
  assert.deepEqual(events[0], {
    type: "toolCallStarted",
    call: { id: callInfo.id, name: "check_inventory", arguments: { item: "sword" } },
    execution: "client",
  });
  assert.match(callInfo.id as string, /^call_[A-Za-z0-9]{24}$/);
  assert.deepEqual((call.params as JsonObject).call, events[0].call);
  assert.deepEqual((events[1].record as JsonObject).output, { stock: 3 });
  assert.equal(events[2].execution, "local");
  assert.deepEqual(messages[4].params, {
    world: "village",
    subscription: "sub1",
    path: "quests.ring",
    oldValue: "open",
    newValue: "done",
  });
  assert.deepEqual((events[3].record as JsonObject).output, 'Set quests.ring to "done" (was "open").');
  assert.deepEqual(events.slice(4), [
    { type: "emotion", emotion: "proud" },
    { type: "lineDelta", delta: "Three swords. Ring quest done." },
  ]);
  assert.equal(result.line, "Three swords. Ring quest done.");
  assert.deepEqual(
    messages.filter((m) => m.method === "npc/event").map((m) => Object.keys(m.params as JsonObject)),
    [
      ["npc", "requestId", "event"],
      ["npc", "requestId", "event"],
      ["npc", "requestId", "event"],
      ["npc", "requestId", "event"],
      ["npc", "requestId", "event"],
      ["npc", "requestId", "event"],
    ],
  );
  assert.deepEqual((await c.call("world/get", { world: "village", path: "quests.ring" })).value, "done");
  await c.close();
});

Deno.test("npc/event text: the emotion comes before the line; deltas add up to the line", async () => {
  const c = new NpcClient();
  await c.call("npc/create", {
    npc: "gorm",
    persona: GORM,
    options: { replyFormat: "text" },
    model: capture(
      { text: "[proud] Aye, three swords at 45 gold.", chunks: 6 },
      { text: '[happy] Gorm: "Welcome, friend."', chunks: 12 },
    ),
  });
  c.request("npc/talk", { npc: "gorm", line: "Swords?", stream: true }, 1);
  const r1 = await c.result(1);
  assert.deepEqual(c.events(1), [
    { type: "emotion", emotion: "proud" },
    { type: "lineDelta", delta: "Aye, t" },
    { type: "lineDelta", delta: "hree sw" },
    { type: "lineDelta", delta: "ords at" },
    { type: "lineDelta", delta: " 45 gol" },
    { type: "lineDelta", delta: "d." },
  ]);
  assert.equal(r1.line, "Aye, three swords at 45 gold.");
  c.request("npc/talk", { npc: "gorm", line: "Hello", stream: true }, 2);
  const r2 = await c.result(2);
  const events = c.events(2);
  assert.deepEqual(events[0], { type: "emotion", emotion: "happy" });
  assert.ok(events.slice(1).every((e) => e.type === "lineDelta"), JSON.stringify(events));
  assert.ok(
    !events.some((e) => typeof e.delta === "string" && /Gorm|"/.test(e.delta)),
    JSON.stringify(events),
  );
  assert.equal(displayed(events), r2.line);
  assert.equal(r2.line, "Welcome, friend.");
  await c.close();
});

Deno.test("npc/event: a rewritten line is a lineReset; without stream no events are sent", async () => {
  const c = fnClient([
    (req) => {
      req.onText?.("[happy] Hello there");
      req.onText?.("[sad] Goodbye.");
      return { kind: "text", text: "[sad] Goodbye.", usage: null };
    },
    () => ({ kind: "text", text: "[sad] Quiet.", usage: null }),
  ]);
  await c.call("npc/create", {
    npc: "gorm",
    persona: GORM,
    options: { replyFormat: "text" },
    model: { type: "fn" },
  });
  c.request("npc/talk", { npc: "gorm", line: "Hi", stream: true }, 1);
  const r = await c.result(1);
  assert.deepEqual(c.events(1), [
    { type: "emotion", emotion: "happy" },
    { type: "lineDelta", delta: "Hello there" },
    { type: "emotion", emotion: "sad" },
    { type: "lineReset", line: "Goodbye." },
  ]);
  assert.deepEqual([r.line, r.emotion], ["Goodbye.", "sad"]);
  const before = c.messages.length;
  c.request("npc/talk", { npc: "gorm", line: "Hi" }, 2);
  await c.result(2);
  assert.deepEqual(c.messages.slice(before).map(WireClient.kind), ["response"]);
  await c.close();
});

Deno.test("npc/event: a blocked partial reply is replaced by the retry, then by a fallback line", async () => {
  const blocked = (req: { onPartial?: (v: JsonObject) => void }) => {
    req.onPartial?.({ emotion: "angry", line: "You fool, I will" });
    throw BridgeError.of("guardrail_violation", "Blocked.");
  };
  const c = fnClient([
    blocked,
    (req) => {
      req.onText?.("[worried] Let us");
      req.onText?.("[worried] Let us talk.");
      return { kind: "text", text: "[worried] Let us talk.", usage: null };
    },
    blocked,
    () => {
      throw BridgeError.of("guardrail_violation", "Blocked again.");
    },
  ]);
  await c.call("npc/create", { npc: "gorm", persona: GORM, model: { type: "fn" } });
  c.request("npc/talk", { npc: "gorm", line: "Hi", stream: true }, 1);
  const r1 = await c.result(1);
  assert.deepEqual(c.events(1), [
    { type: "emotion", emotion: "angry" },
    { type: "lineDelta", delta: "You fool, I will" },
    { type: "emotion", emotion: "worried" },
    { type: "lineReset", line: "Let us" },
    { type: "lineDelta", delta: " talk." },
  ]);
  assert.deepEqual([r1.line, r1.emotion, r1.isFallback], ["Let us talk.", "worried", false]);
  c.request("npc/talk", { npc: "gorm", line: "Hi", stream: true }, 2);
  const r2 = await c.result(2);
  assert.deepEqual(c.events(2), [
    { type: "emotion", emotion: "angry" },
    { type: "lineDelta", delta: "You fool, I will" },
    { type: "emotion", emotion: "neutral" },
    { type: "lineReset", line: "Let's talk about something else." },
  ]);
  assert.deepEqual([r2.line, r2.isFallback], ["Let's talk about something else.", true]);
  assert.equal(displayed(c.events(2)), r2.line);
  await c.close();
});
