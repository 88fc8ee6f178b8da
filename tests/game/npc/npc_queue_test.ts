import assert from "node:assert/strict";
import type { JsonObject } from "../../../src/protocol/json.ts";
import { WireClient } from "../../helpers/wire.ts";
import { capture, NpcClient, reply, tool } from "./npc_helpers.ts";

const GORM = { name: "Gorm", role: "the village blacksmith" };

function transcriptLength(stateResult: JsonObject): number {
  const envelope = (stateResult.state as JsonObject).transcript as JsonObject;
  return ((envelope.transcript as JsonObject).entries as JsonObject[]).length;
}

async function stateOf(c: NpcClient, npc = "gorm"): Promise<JsonObject> {
  return (await c.call("npc/state", { npc })).state as JsonObject;
}

Deno.test("per-NPC order: talk, update, talk pipelined — the update applies between the turns", async () => {
  const c = new NpcClient();
  c.request("npc/create", {
    npc: "gorm",
    persona: GORM,
    options: { replyFormat: "structured" },
    model: capture({ ...reply("One.", { emotion: "neutral" }), delayMs: 30 }, { text: "[happy] Two." }),
  }, 1);
  c.request("npc/talk", { npc: "gorm", line: "first" }, 2);
  c.request("npc/update", {
    npc: "gorm",
    persona: { personality: "Grateful to Aria." },
    options: { replyFormat: "text" },
    memory: { relationship: 40, facts: ["Aria returned the ring."] },
  }, 3);
  c.request("npc/talk", { npc: "gorm", line: "second" }, 4);
  const fourth = await c.result(4);
  const order = c.messages.filter((m) => !("method" in m)).map((m) => m.id);
  assert.deepEqual(order, [1, 2, 3, 4]);
  assert.deepEqual(await c.result(3), { npc: "gorm", warnings: [] });
  assert.deepEqual([(await c.result(2)).line, fourth.line, fourth.emotion, fourth.relationship], [
    "One.",
    "Two.",
    "happy",
    40,
  ]);
  const [first, second] = c.model.requests;
  assert.doesNotMatch(first.instructions!, /Grateful|square brackets|Aria/);
  assert.match(second.instructions!, /Personality: Grateful to Aria\./);
  assert.match(second.instructions!, /square brackets/);
  // Memory is not in the instructions: what changed reaches the model ahead of the player's line.
  assert.doesNotMatch(second.instructions!, /Aria returned the ring/);
  assert.equal(
    second.prompt,
    "Memory:\n- Your attitude toward the player is friendly (40 on a scale from -100 to 100).\n" +
      "- Things you remember: Aria returned the ring.\nPlayer: second",
  );
  assert.equal(second.history.length, 2, "the first turn is in the history");
  await c.close();
});

Deno.test("npc/cancel: the running turn and every queued request fail with -32009; tool/cancel for the pending call", async () => {
  const c = new NpcClient();
  await c.call("npc/create", {
    npc: "gorm",
    persona: GORM,
    tools: [tool("check_inventory")],
    options: { groundingTool: "check_inventory" },
    model: capture({ toolCalls: [{ name: "check_inventory", arguments: {} }] }, reply("After.")),
  });
  c.request("npc/talk", { npc: "gorm", line: "a" }, 1);
  c.request("npc/talk", { npc: "gorm", line: "b" }, 2);
  c.request("npc/update", { npc: "gorm", memory: { relationship: 5 } }, 3);
  c.request("npc/reset", { npc: "gorm" }, 4);
  c.request("npc/state", { npc: "gorm" }, 5);
  const call = await c.toolCall(1);
  const list = ((await c.call("npc/list")).npcs as JsonObject[])[0];
  assert.deepEqual([list.busy, list.pendingOperations], [true, 5]);
  const before = c.messages.length;
  c.request("npc/cancel", { npc: "gorm" }, 6);
  await c.response(5);
  const after = c.messages.slice(before);
  // The pending tool call is cancelled synchronously, so its tool/cancel precedes the npc/cancel response.
  assert.deepEqual(after.map(WireClient.kind), [
    "tool/cancel",
    "response",
    "error",
    "error",
    "error",
    "error",
    "error",
  ]);
  assert.deepEqual(after[1].result, { npc: "gorm", cancelled: 5 });
  assert.deepEqual(after[0].params, {
    npc: "gorm",
    requestId: 1,
    id: call.id,
    callId: ((call.params as JsonObject).call as JsonObject).id,
    reason: "Error: The turn was cancelled.",
  });
  assert.deepEqual(
    after.slice(2).map((m) => [m.id, (m.error as JsonObject).code, (m.error as JsonObject).message]),
    [
      [1, -32009, "The turn was cancelled."],
      [2, -32009, "The request was cancelled before it started."],
      [3, -32009, "The request was cancelled before it started."],
      [4, -32009, "The request was cancelled before it started."],
      [5, -32009, "The request was cancelled before it started."],
    ],
  );
  c.reply(call.id as string, { output: "late" });
  const state = await stateOf(c);
  assert.deepEqual(state.memory, { facts: [], relationship: 0 });
  assert.deepEqual(await c.call("npc/cancel", { npc: "gorm" }), { npc: "gorm", cancelled: 0 });
  const list2 = ((await c.call("npc/list")).npcs as JsonObject[])[0];
  assert.deepEqual([list2.busy, list2.pendingOperations, list2.turnCount], [false, 0, 0]);
  await c.close();
});

Deno.test("npc/update: merge patches, null resets a field, tools replaced, all-or-nothing, warnings", async () => {
  const c = new NpcClient();
  await c.call("npc/create", {
    npc: "gorm",
    persona: { ...GORM, goals: ["Sell swords"] },
    tools: [tool("check_inventory")],
    options: { replyFormat: "text", toolTimeoutSeconds: 30, groundingTool: "check_inventory" },
    model: "scripted",
  });
  const bad = await c.error("npc/update", {
    npc: "gorm",
    persona: { personality: "changed" },
    options: { playerOptionCount: 9 },
  });
  assert.equal(bad.message, "'options.playerOptionCount' must be between 0 and 4.");
  const badTools = await c.error("npc/update", { npc: "gorm", tools: [tool("ask_price")] });
  assert.equal(
    badTools.message,
    "'options.groundingTool' names 'check_inventory', which is not one of the NPC's tools: ask_price. " +
      "Give the NPC a client tool named 'check_inventory' in 'tools', or name one of those.",
  );
  let state = await stateOf(c);
  assert.equal((state.persona as JsonObject).personality, "");
  assert.deepEqual((state.tools as JsonObject[]).map((t) => t.name), ["check_inventory"]);
  const r = await c.call("npc/update", {
    npc: "gorm",
    persona: { role: null, personality: "Calm.", goals: ["Rest"], mood: "x" },
    options: { replyFormat: null, groundingTool: "ask_price", toolTimeoutSeconds: 0, sillyOption: 1 },
    tools: [tool("ask_price"), { name: "nodesc" }],
    extra: true,
  });
  assert.deepEqual(r, {
    npc: "gorm",
    warnings: [
      "Unknown parameter 'extra' was ignored.",
      "Unknown parameter 'persona.mood' was ignored.",
      "Unknown parameter 'options.sillyOption' was ignored.",
      "nodesc: no description; the model may not know when to call it.",
    ],
  });
  state = await stateOf(c);
  assert.deepEqual(
    [
      (state.persona as JsonObject).role,
      (state.persona as JsonObject).personality,
      (state.persona as JsonObject).goals,
    ],
    ["", "Calm.", ["Rest"]],
  );
  const options = state.options as JsonObject;
  assert.deepEqual([options.replyFormat, options.groundingTool, options.toolTimeoutSeconds], [
    "automatic",
    "ask_price",
    0,
  ]);
  assert.deepEqual(state.tools, [tool("ask_price"), { name: "nodesc" }]);
  assert.deepEqual(((await c.call("npc/list")).npcs as JsonObject[])[0].tools, ["ask_price", "nodesc"]);
  assert.equal((await c.error("npc/update", { npc: "gorm", persona: "x" })).code, -32602);
  await c.close();
});

Deno.test("npc/update: options turning on a built-in tool named like one of the NPC's client tools name that option, not a 'tools' the update did not send", async () => {
  const c = new NpcClient();
  await c.call("world/create", { world: "village", state: { shop: { swords: 3 } } });
  await c.call("npc/create", {
    npc: "gorm",
    persona: GORM,
    world: "village",
    tools: [tool("check_inventory"), tool("remember_fact"), tool("update_world_state")],
    options: { replyFormat: "text" },
    model: "scripted",
  });
  const memory = await c.error("npc/update", { npc: "gorm", options: { memoryTools: "all" } });
  assert.deepEqual([memory.code, memory.message], [
    -32602,
    "'options.memoryTools' cannot turn on the built-in tool 'remember_fact': the NPC already has a client " +
    "tool of that name (its tools[1]); send 'tools' without it in the same npc/update.",
  ]);
  const world = await c.error("npc/update", { npc: "gorm", options: { worldWritable: ["shop"] } });
  assert.equal(
    world.message,
    "'options.worldWritable' cannot turn on the built-in tool 'update_world_state': the NPC already has a " +
      "client tool of that name (its tools[2]); send 'tools' without it in the same npc/update.",
  );
  // Tools sent with the update are named where they are sent.
  const sent = await c.error("npc/update", {
    npc: "gorm",
    options: { memoryTools: "all" },
    tools: [tool("change_relationship")],
  });
  assert.equal(
    sent.message,
    "'tools[0].name' must not be 'change_relationship': the built-in world and memory tools use " +
      "read_world_state, update_world_state, remember_fact and change_relationship.",
  );
  // Nothing changed; sending the tools without the clashing one makes the update.
  const state = (await c.call("npc/state", { npc: "gorm" })).state as JsonObject;
  assert.deepEqual((state.tools as JsonObject[]).map((t) => t.name), [
    "check_inventory",
    "remember_fact",
    "update_world_state",
  ]);
  await c.call("npc/update", {
    npc: "gorm",
    options: { memoryTools: "all" },
    tools: [tool("check_inventory")],
  });
  assert.deepEqual(((await c.call("npc/list")).npcs as JsonObject[])[0].tools, ["check_inventory"]);
  await c.close();
});

Deno.test("prototype pollution: npc/update patches and update_world_state keep Object.prototype clean", async () => {
  const c = new NpcClient();
  await c.call("world/create", { world: "w", state: { a: 1 } });
  await c.call("npc/create", {
    npc: "gorm",
    persona: GORM,
    world: "w",
    options: { worldWritable: [""] },
    model: capture(
      {
        toolCalls: [{ name: "update_world_state", arguments: { path: "__proto__.polluted", value: "yes" } }],
      },
      {
        toolCalls: [{
          name: "update_world_state",
          arguments: { path: "constructor.prototype.polluted", value: "1" },
        }],
      },
      reply("Done."),
    ),
  });
  c.sendLine(
    '{"jsonrpc":"2.0","id":"u1","method":"npc/update","params":{"npc":"gorm",' +
      '"persona":{"__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}}},' +
      '"options":{"__proto__":{"polluted":true}},"memory":{"__proto__":{"polluted":true}}}}',
  );
  const update = await c.result("u1");
  assert.deepEqual(update.warnings, [
    "Unknown parameter 'persona.__proto__' was ignored.",
    "Unknown parameter 'persona.constructor' was ignored.",
    "Unknown parameter 'options.__proto__' was ignored.",
    "Unknown parameter 'memory.__proto__' was ignored.",
  ]);
  const talk = await c.result(c.request("npc/talk", { npc: "gorm", line: "hi" }));
  assert.equal(talk.line, "Done.");
  // deno-lint-ignore no-explicit-any
  assert.equal(({} as any).polluted, undefined);
  // deno-lint-ignore no-explicit-any
  assert.equal((Object.prototype as any).polluted, undefined);
  const snapshot = await c.call("world/snapshot", { world: "w" });
  assert.equal(
    JSON.stringify(snapshot.state),
    '{"a":1,"__proto__":{"polluted":"yes"},"constructor":{"prototype":{"polluted":1}}}',
  );
  await c.close();
});

Deno.test("npc/reset clears the conversation (and memory if asked); npc/state settle:false answers at once", async () => {
  const c = new NpcClient();
  await c.call("npc/create", {
    npc: "gorm",
    persona: GORM,
    memory: { facts: ["F"], relationship: 10 },
    model: capture(reply("One."), { ...reply("Slow."), delayMs: 200 }),
  });
  await c.result(c.request("npc/talk", { npc: "gorm", line: "1" }));
  const slow = c.request("npc/talk", { npc: "gorm", line: "2" });
  const quick = c.request("npc/state", { npc: "gorm", settle: false });
  const settled = c.request("npc/state", { npc: "gorm" });
  const q = await c.result(quick);
  assert.equal(c.messages.some((m) => m.id === slow), false, "settle:false did not wait for the turn");
  assert.equal(transcriptLength(q), 3, "instructions + one complete turn");
  const s = await c.result(settled);
  assert.ok(c.messages.findIndex((m) => m.id === slow) < c.messages.findIndex((m) => m.id === settled));
  assert.equal(transcriptLength(s), 5);
  assert.deepEqual(await c.call("npc/reset", { npc: "gorm" }), { npc: "gorm" });
  let list = ((await c.call("npc/list")).npcs as JsonObject[])[0];
  assert.deepEqual([list.turnCount, list.relationship], [0, 10]);
  await c.call("npc/reset", { npc: "gorm", clearMemory: true });
  list = ((await c.call("npc/list")).npcs as JsonObject[])[0];
  assert.deepEqual((await stateOf(c)).memory, { facts: [], relationship: 0 });
  await c.close();
});

Deno.test("shutdown cancels NPC turns and removes NPCs; a full queue answers busy", async () => {
  const c = new NpcClient({ maxQueuedOperations: 2 });
  await c.call("npc/create", {
    npc: "gorm",
    persona: GORM,
    model: capture({ ...reply("x"), delayMs: 5000 }),
  });
  c.request("npc/talk", { npc: "gorm", line: "1" }, 1);
  c.request("npc/talk", { npc: "gorm", line: "2" }, 2);
  assert.deepEqual(await c.error("npc/talk", { npc: "gorm", line: "3" }), {
    code: -32010,
    message:
      "NPC 'gorm' has too many queued operations (limit 2): wait for their answers, or cancel them with npc/cancel.",
    data: { code: "busy", npc: "gorm", limit: 2 },
  });
  c.request("shutdown", {}, 3);
  await c.response(3);
  const ids = c.messages.filter((m) => !("method" in m)).map((m) => m.id);
  assert.ok(ids.indexOf(1) < ids.indexOf(3) && ids.indexOf(2) < ids.indexOf(3), JSON.stringify(ids));
  assert.equal(((await c.response(1)).error as JsonObject).code, -32009);
  assert.equal(((await c.response(2)).error as JsonObject).code, -32009);
  assert.equal(c.game.game.npcPersona("gorm"), undefined);
});
