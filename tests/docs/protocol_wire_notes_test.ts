/**
 * What docs/PROTOCOL.md tells a client author who writes their own client, beyond the method tables: framing
 * details, replies the table abbreviates, and how the context note meets compaction and transcripts. Each
 * test names the section it holds to.
 */
import assert from "node:assert/strict";
import type { JsonObject } from "../../src/protocol/json.ts";
import { scripted, WireClient } from "../helpers/wire.ts";

Deno.test("PROTOCOL.md §1: notifications get no response, also with an unknown method or bad params", async () => {
  const c = new WireClient();
  c.send({ method: "nope/nope" });
  c.send({ method: "session/respond", params: { session: "missing" } });
  c.send({ method: "session/cancel", params: { session: 5 } });
  const ping = c.request("ping");
  await c.response(ping);
  assert.deepEqual(c.messages, [{ jsonrpc: "2.0", id: ping, result: {} }]);
  await c.close();
});

Deno.test("PROTOCOL.md §1: a \\r before the newline is ignored, and a line of only \\r is blank", async () => {
  const c = new WireClient();
  c.sendLine("\r");
  c.sendLine('{"jsonrpc":"2.0","id":7,"method":"ping"}\r');
  await c.response(7);
  assert.deepEqual(c.messages, [{ jsonrpc: "2.0", id: 7, result: {} }]);
  await c.close();
});

Deno.test("PROTOCOL.md §1: a response to no waiting tool/call is ignored and gets no answer", async () => {
  const c = new WireClient();
  c.send({ id: "t-99", result: { output: "late" } });
  c.send({ id: "t-98", error: { code: -32000, message: "late" } });
  const ping = c.request("ping");
  await c.response(ping);
  assert.equal(c.messages.length, 1);
  await c.close();
});

Deno.test("PROTOCOL.md §5: setContextNote and setInstructions need their key; null clears", async () => {
  const c = new WireClient();
  await c.call("session/create", { session: "s", instructions: "Guard.", model: scripted() });
  for (
    const [method, key] of [["session/setContextNote", "note"], ["session/setInstructions", "instructions"]]
  ) {
    const absent = await c.response(c.request(method, { session: "s" }));
    assert.equal((absent.error as JsonObject).code, -32602);
    assert.match((absent.error as JsonObject).message as string, new RegExp(`'${key}'`));
    assert.deepEqual(await c.call(method, { session: "s", [key]: null }), { session: "s" });
  }
  const list = await c.call("session/list");
  assert.equal((list.sessions as JsonObject[])[0].instructions, undefined);
  await c.close();
});

Deno.test("PROTOCOL.md §5: compaction folds the note in as the summary so far and replaces it; transcripts show it once a prompt carries it", async () => {
  const c = new WireClient();
  await c.call("session/create", {
    session: "s",
    // The summary step echoes the summarizer's prompt, so the summary shows what the model was given.
    model: scripted({ text: "Hello." }, { template: "{prompt}" }, { text: "Again." }),
  });
  await c.call("session/setContextNote", { session: "s", note: "It rains." });
  await c.call("session/respond", { session: "s", prompt: "Hi" });
  const { summary } = await c.call("session/compact", { session: "s", keepRecentTurns: 0 });
  assert.match(summary as string, /^Summary so far:\nIt rains\.\n/);
  const entries = async () => {
    const { transcript } = await c.call("session/transcript", { session: "s" });
    return ((transcript as JsonObject).transcript as JsonObject).entries as JsonObject[];
  };
  assert.equal((await entries()).length, 1, "after compaction the summary is in no transcript entry");
  await c.call("session/respond", { session: "s", prompt: "Next" });
  const prompt = (await entries())[1].contents as JsonObject[];
  assert.equal(prompt[0].text, `Context:\n${summary}\n\nNext`);
  await c.close();
});

/** A turn whose model calls `open_gate` once and then says the tool's output; waits for the tool/call. */
async function gateTurn() {
  const c = new WireClient();
  await c.call("session/create", {
    session: "s",
    tools: [{ name: "open_gate", description: "Opens the gate." }],
    model: scripted({ toolCalls: [{ name: "open_gate", arguments: {} }] }, { template: "{toolOutput}" }),
  });
  const turn = c.request("session/respond", { session: "s", prompt: "Open." });
  const call = await c.toolCall();
  return { c, turn, call };
}

Deno.test("PROTOCOL.md §7: a tool reply without jsonrpc gets -32600 under the tool/call's id, and the call keeps waiting", async () => {
  const { c, turn, call } = await gateTurn();
  c.sendLine(JSON.stringify({ id: call.id, result: { output: "forgot jsonrpc" } }));
  const rejected = await c.waitFor((m) => m.id === call.id && "error" in m);
  assert.equal((rejected.error as JsonObject).code, -32600);
  c.reply(call.id!, { output: "opened" });
  assert.equal(((await c.response(turn)).result as JsonObject).text, "opened");
  await c.close();
});

Deno.test("PROTOCOL.md §7: a tool reply with both result and error counts as the error", async () => {
  const { c, turn, call } = await gateTurn();
  c.send({ id: call.id, result: { output: "opened" }, error: { code: -32000, message: "Gate offline" } });
  assert.equal(((await c.response(turn)).result as JsonObject).text, "Error: Gate offline");
  await c.close();
});

Deno.test("PROTOCOL.md §5: a request right after shutdown gets -32023 before the shutdown response", async () => {
  const c = new WireClient();
  await c.call("session/create", { session: "s", model: scripted({ text: "slow", delayMs: 60_000 }) });
  const turn = c.request("session/respond", { session: "s", prompt: "Wait." });
  const shutdown = c.request("shutdown");
  const ping = c.request("ping");
  await c.response(shutdown);
  const order = c.messages.map((m) => m.id);
  assert.deepEqual(order.slice(-3), [ping, turn, shutdown]);
  assert.equal((c.messages.at(-3)!.error as JsonObject).code, -32023);
  assert.equal((c.messages.at(-2)!.error as JsonObject).code, -32009);
});

Deno.test("PROTOCOL.md §6: a decision fallback has empty reasoning and confidence 0", async () => {
  const c = new WireClient();
  const d = await c.call("decision/decide", {
    situation: "A troll.",
    options: ["flee", "fight"],
    fallbackOptionID: "fight",
    model: scripted({ error: "guardrail_violation" }),
  });
  assert.deepEqual([d.optionID, d.reasoning, d.confidence, d.isFallback], ["fight", "", 0, true]);
  await c.close();
});

Deno.test("PROTOCOL.md §6: world/list counts NPCs and lists subscriptions", async () => {
  const c = new WireClient();
  await c.call("world/create", { world: "w" });
  await c.call("npc/create", { npc: "n", persona: { name: "N" }, world: "w", model: scripted() });
  await c.call("world/subscribe", { world: "w", path: "gold" });
  const { worlds } = await c.call("world/list");
  const w = (worlds as JsonObject[])[0];
  assert.equal(w.npcs, 1);
  assert.deepEqual(w.subscriptions, [{ subscription: "sub1", world: "w", path: "gold" }]);
  await c.close();
});

Deno.test("PROTOCOL.md §10: a bark plays the NPC's next step, from the script its turns use", async () => {
  const c = new WireClient();
  await c.call("npc/create", {
    npc: "n",
    persona: { name: "N" },
    options: { replyFormat: "text" },
    model: scripted({ text: "[sad] Rain again." }, { text: "[happy] Hello there." }),
  });
  assert.equal((await c.call("npc/bark", { npc: "n" })).line, "Rain again.");
  assert.equal((await c.call("npc/talk", { npc: "n", line: "Hi" })).line, "Hello there.");
  await c.close();
});

Deno.test("PROTOCOL.md §7: world/changed comes at the changed path, with that path's values, above or inside the subscribed one", async () => {
  const c = new WireClient();
  await c.call("world/create", { world: "v", state: { quests: {} } });
  await c.call("world/subscribe", { world: "v", path: "quests.wolves.stage" });
  const changes = () =>
    c.messages.filter((m) => m.method === "world/changed").map((m) => m.params as JsonObject);
  // Created by a write of its parent: the parent's path and value.
  await c.call("world/set", { world: "v", path: "quests.wolves", value: { stage: "offered" } });
  // The parent written again with the subscribed value unchanged: still sent.
  await c.call("world/set", { world: "v", path: "quests.wolves", value: { stage: "offered", reward: 5 } });
  // A save loaded at the root: the whole world.
  await c.call("world/set", { world: "v", path: "", value: { quests: { wolves: { stage: "done" } } } });
  assert.deepEqual(changes(), [
    { world: "v", subscription: "sub1", path: "quests.wolves", newValue: { stage: "offered" } },
    {
      world: "v",
      subscription: "sub1",
      path: "quests.wolves",
      oldValue: { stage: "offered" },
      newValue: { stage: "offered", reward: 5 },
    },
    {
      world: "v",
      subscription: "sub1",
      path: "",
      oldValue: { quests: { wolves: { stage: "offered", reward: 5 } } },
      newValue: { quests: { wolves: { stage: "done" } } },
    },
  ]);
  // Inside the subscribed path: only the part that changed.
  await c.call("world/subscribe", { world: "v", path: "quests" });
  await c.call("world/set", { world: "v", path: "quests.wolves.stage", value: "paid" });
  assert.deepEqual(changes().slice(3).map((p) => [p.subscription, p.path, p.newValue]), [
    ["sub1", "quests.wolves.stage", "paid"],
    ["sub2", "quests.wolves.stage", "paid"],
  ]);
  await c.close();
});
