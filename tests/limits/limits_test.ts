/**
 * The resource bounds of issue #7 that already existed, each with its exact error: pending `tool/call`s
 * (`maxPendingClientRequests`), queued operations per session and per NPC (`maxQueuedOperations` → -32010),
 * world subscriptions (256, and the fan-out of one change to all of them), and the object counts (64
 * sessions, 128 NPCs, 64 worlds).
 */
import assert from "node:assert/strict";
import type { JsonObject } from "../../src/protocol/json.ts";
import { scripted, WireClient } from "../helpers/wire.ts";

const look = { name: "look", description: "Looks." };

Deno.test("maxPendingClientRequests: a call past the limit gets an error output at once, no tool/call", async () => {
  const c = new WireClient({ maxPendingClientRequests: 2 });
  const calls = [1, 2, 3].map((n) => ({ name: "look", arguments: { n } }));
  await c.call("session/create", {
    session: "s",
    tools: [look],
    model: scripted({ toolCalls: calls }, { template: "{toolOutputs}" }),
  });
  c.request("session/respond", { session: "s", prompt: "x" }, 1);
  await c.toolCall(2);
  assert.equal(c.engine.pendingClientRequests, 2);
  for (const m of c.messages.filter((m) => m.method === "tool/call")) c.reply(m.id, { output: "seen" });
  const r = (await c.response(1)).result as JsonObject;
  const limit = "Too many tool calls are waiting for the client (limit 2).";
  assert.equal(r.text, `seen\nseen\nError: ${limit}`);
  const records = r.toolCalls as JsonObject[];
  assert.deepEqual([records[0].output, records[0].isError], [limit, true]);
  assert.equal(c.messages.filter((m) => m.method === "tool/call").length, 2);
  assert.equal(c.messages.filter((m) => m.method === "tool/cancel").length, 0);
  assert.equal(c.engine.pendingClientRequests, 0);
  await c.close();
});

Deno.test("maxQueuedOperations: a session and an NPC answer -32010 busy past the limit", async () => {
  const c = new WireClient({ maxQueuedOperations: 3 });
  const slow = { type: "scripted", steps: [], fallback: { text: "[happy] ok", delayMs: 30 } };
  await c.call("session/create", { session: "s", model: slow });
  await c.call("npc/create", {
    npc: "n",
    persona: { name: "N" },
    options: { replyFormat: "text", toolChoice: "auto", compactAfterTurns: 0 },
    model: slow,
  });
  for (let i = 1; i <= 5; i++) c.request("session/respond", { session: "s", prompt: `${i}` }, `s${i}`);
  c.request("session/setContextNote", { session: "s", note: "x" }, "s6");
  for (let i = 1; i <= 5; i++) c.request("npc/talk", { npc: "n", line: `${i}` }, `n${i}`);
  c.request("npc/state", { npc: "n" }, "n6");
  c.request("npc/state", { npc: "n", settle: false }, "n7"); // not queued: answers at once
  const busy = (kind: string, id: string) => ({
    code: -32010,
    message:
      `${kind} '${id}' has too many queued operations (limit 3): wait for their answers, or cancel them with ${
        kind === "Session" ? "session" : "npc"
      }/cancel.`,
    data: { code: "busy", [kind === "Session" ? "session" : "npc"]: id, limit: 3 },
  });
  for (const id of ["s4", "s5", "s6"]) assert.deepEqual((await c.response(id)).error, busy("Session", "s"));
  for (const id of ["n4", "n5", "n6"]) assert.deepEqual((await c.response(id)).error, busy("NPC", "n"));
  assert.equal(((await c.response("n7")).result as JsonObject).npc, "n");
  for (const id of ["s1", "s2", "s3"]) {
    assert.equal(((await c.response(id)).result as JsonObject).text, "[happy] ok");
  }
  for (const id of ["n1", "n2", "n3"]) assert.equal(((await c.response(id)).result as JsonObject).line, "ok");
  // Once the queue drained, the session accepts work again.
  assert.equal((await c.call("session/respond", { session: "s", prompt: "again" })).text, "[happy] ok");
  await c.close();
});

Deno.test("subscriptions: 256 across worlds, one change fans out to every matching one before the response", async () => {
  const c = new WireClient();
  await c.call("world/create", { world: "a", state: { gold: 1 } });
  await c.call("world/create", { world: "b" });
  for (let i = 0; i < 255; i++) await c.call("world/subscribe", { world: "a", path: i % 2 ? "gold" : "" });
  await c.call("world/subscribe", { world: "b" });
  c.request("world/subscribe", { world: "b", path: "x" }, 1);
  assert.deepEqual((await c.response(1)).error, {
    code: -32055,
    message: "The limit of 256 world subscriptions is reached; delete some first.",
    data: { code: "limit_reached", limit: 256 },
  });
  const start = c.messages.length;
  c.request("world/set", { world: "a", path: "gold", value: 2 }, 2);
  await c.response(2);
  const out = c.messages.slice(start);
  assert.equal(out.length, 256);
  assert.ok(out.slice(0, 255).every((m) => m.method === "world/changed"));
  assert.deepEqual(out[0].params as JsonObject, {
    world: "a",
    subscription: "sub1",
    path: "gold",
    oldValue: 1,
    newValue: 2,
  });
  assert.equal(out[255].id, 2);
  await c.call("world/unsubscribe", { subscription: "sub1" });
  await c.call("world/subscribe", { world: "b", path: "x" });
  await c.close();
});

Deno.test("object counts: 64 sessions, 128 NPCs, 64 worlds", async () => {
  const c = new WireClient();
  for (let i = 0; i < 64; i++) await c.call("session/create", { model: "scripted" });
  for (let i = 0; i < 128; i++) await c.call("npc/create", { persona: { name: "N" }, model: "scripted" });
  for (let i = 0; i < 64; i++) await c.call("world/create", {});
  c.request("session/create", { model: "scripted" }, 1);
  c.request("npc/create", { persona: { name: "N" }, model: "scripted" }, 2);
  c.request("world/create", {}, 3);
  assert.deepEqual((await c.response(1)).error, {
    code: -32022,
    message: "The session limit (64) is reached; delete a session first.",
    data: { code: "session_limit", limit: 64 },
  });
  assert.deepEqual((await c.response(2)).error, {
    code: -32055,
    message: "The limit of 128 NPCs is reached; delete some first.",
    data: { code: "limit_reached", limit: 128 },
  });
  assert.deepEqual((await c.response(3)).error, {
    code: -32055,
    message: "The limit of 64 worlds is reached; delete some first.",
    data: { code: "limit_reached", limit: 64 },
  });
  await c.close();
});

Deno.test("decision/decideMany: at most 1024 decisions per request (-32602 before any work)", async () => {
  const c = new WireClient();
  const decision = { situation: "x", options: ["a", "b"] };
  const model = {
    type: "scripted",
    steps: [],
    fallback: { json: { reasoning: "r", choice: "a", confidence: 5 } },
  };
  c.request("decision/decideMany", { requests: Array(1025).fill(decision), model }, 1);
  assert.deepEqual((await c.response(1)).error, {
    code: -32602,
    message: "'requests' holds at most 1024 decisions; got 1025.",
    data: { code: "invalid_params", limit: 1024 },
  });
  c.request("decision/decideMany", { requests: Array(1024).fill(decision), model, maxConcurrency: 64 }, 2);
  const results = ((await c.response(2, 20_000)).result as JsonObject).results as JsonObject[];
  assert.equal(results.length, 1024);
  assert.ok(results.every((r) => r.optionID === "a"));
  await c.close();
});
