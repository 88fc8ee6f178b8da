/**
 * Pipelining per method family (session, npc, decision, content, world): requests are sent back to back
 * without waiting, and the exact order of every message the bridge writes is asserted. A request's output
 * never comes before the response of an earlier request that answers at once: `session/create`,
 * `npc/create` and `npc/restore` on the system model answer at once when its availability is known without
 * waiting (no plugin, or an answer the plugin gave before); when it is not, their response waits for the
 * check and the new session's or NPC's own work waits for that response.
 */
import assert from "node:assert/strict";
import type { JsonObject, JsonValue } from "../../src/protocol/json.ts";
import { closeSystemModels, createSystemModel, systemModelsIdle } from "../../src/models/system.ts";
import type { BridgeConfiguration } from "../../src/engine/configuration.ts";
import { scripted, WireClient } from "../helpers/wire.ts";
import { requireDouble } from "../ffi/double.ts";

/** The real system model with a library path that does not exist: unavailable, known without waiting. */
function missingPlugin(): Partial<BridgeConfiguration> {
  return {
    systemModel: () => createSystemModel({ libraryPath: "/nonexistent/libfm.so", env: () => undefined }),
  };
}

/** `kind id` of every message, e.g. "response 1", "event:modelStep 2", "tool/call t-1", "world/changed". */
function order(c: WireClient): string[] {
  return c.messages.map((m) => {
    const kind = WireClient.kind(m);
    const params = m.params as JsonObject | undefined;
    const id = m.id ?? params?.requestId;
    return id === undefined ? kind : `${kind} ${id}`;
  });
}

/** The message answering request `id`. */
function answer(c: WireClient, id: JsonValue): JsonObject {
  return c.messages.find((m) => m.id === id && !("method" in m))!;
}

/**
 * The create warning of the system model without a plugin ("device_not_eligible" off Apple-silicon macOS), with
 * the check's detail when it has one (the library that did not load).
 */
const UNAVAILABLE_WARNING =
  /^The system model is unavailable \((device_not_eligible|unknown)\); turns will fail with model_unavailable until it is ready\.( .+)?$/;

/** Asserts a create result `{<key>: id, …, warnings: [the unavailable warning]}`. */
function assertUnavailableWarning(result: JsonValue): void {
  const warnings = (result as JsonObject).warnings as string[];
  assert.equal(warnings.length, 1, JSON.stringify(warnings));
  assert.match(warnings[0], UNAVAILABLE_WARNING);
}

Deno.test("initialize on an unavailable system model answers at once, before a pipelined create and turn", async () => {
  const c = new WireClient(missingPlugin());
  c.request("initialize", { client: { name: "MyGame" }, protocolVersion: "1.0" }, 1);
  c.request("session/create", { session: "g", model: scripted({ text: "Hi.", chunks: 1 }) }, 2);
  c.request("session/respond", { session: "g", prompt: "Hi", stream: true }, 3);
  c.request("ping", {}, 4);
  await c.response(3);
  await c.response(1);
  assert.deepEqual(order(c), [
    "response 1",
    "response 2",
    "response 4",
    "event:modelStep 3",
    "event:text 3",
    "response 3",
  ]);
  const model = (answer(c, 1).result as JsonObject).model as JsonObject;
  assert.equal(model.available, false);
  assert.match(String(model.reason), /^(device_not_eligible|unknown)$/);
  await c.close();
});

Deno.test("session: create on an unavailable system model answers before the pipelined turn's events", async () => {
  const c = new WireClient(missingPlugin());
  c.request("session/create", { session: "g" }, 1);
  c.request("session/respond", { session: "g", prompt: "Hi", stream: true }, 2);
  c.request("session/transcript", { session: "g" }, 3);
  c.request("session/create", {
    session: "s",
    tools: [{ name: "look", description: "Look." }],
    model: scripted(
      { toolCalls: [{ name: "look" }] },
      { text: "Dark.", chunks: 1 },
    ),
  }, 4);
  c.request("session/respond", { session: "s", prompt: "Look", stream: true }, 5);
  c.request("session/list", {}, 6);
  const call = await c.toolCall(1);
  c.reply(call.id, { output: "a cave" });
  await c.response(5);
  await c.response(2);
  assert.deepEqual(order(c), [
    // Requests that answer at once, in arrival order; then the queued turns, each event before its response.
    "response 1",
    "response 3",
    "response 4",
    "response 6",
    "event:modelStep 2",
    "event:modelStep 5",
    "event:toolCallStarted 5",
    "tool/call t-1",
    "error 2",
    "event:toolCallCompleted 5",
    "event:modelStep 5",
    "event:text 5",
    "response 5",
  ]);
  assert.equal((answer(c, 1).result as JsonObject).session, "g");
  assertUnavailableWarning(answer(c, 1).result as JsonValue);
  assert.equal(((answer(c, 2).error as JsonObject).data as JsonObject).code, "model_unavailable");
  await c.close();
});

Deno.test("session: a plugin not asked yet: the create waits for its check, the turn waits for the create", async () => {
  const path = requireDouble();
  closeSystemModels(); // no availability cached from an earlier test
  const c = new WireClient({
    systemModel: () =>
      createSystemModel({
        libraryPath: path,
        decorateRequest: (body) => {
          body["x-double"] = body.op === "availability"
            ? { result: { available: true, contextSize: 4096 }, delayMs: 20 }
            : { result: { kind: "text", text: "Hello.", usage: null } };
        },
      }),
  });
  try {
    c.request("session/create", { session: "a" }, 1);
    c.request("session/respond", { session: "a", prompt: "Hi", stream: true }, 2);
    c.request("session/reset", { session: "a" }, 3);
    await c.response(3);
    assert.deepEqual(order(c), [
      "response 1",
      "event:modelStep 2",
      "event:text 2",
      "response 2",
      "response 3",
    ]);
    assert.deepEqual(answer(c, 1).result, { session: "a", warnings: [] });
    // Now the plugin's answer is known: the next create answers at once, before a later ping.
    c.request("session/create", { session: "b" }, 4);
    c.request("ping", {}, 5);
    assert.deepEqual(order(c).slice(5), ["response 4", "response 5"]);
  } finally {
    await c.close();
    closeSystemModels();
    await systemModelsIdle();
  }
});

Deno.test("npc: creates answer at once, before later requests' output; a turn's events come before its response", async () => {
  const c = new WireClient(missingPlugin());
  c.request("npc/create", { npc: "gorm", persona: { name: "Gorm" } }, 1);
  c.request("npc/state", { npc: "gorm", settle: false }, 2);
  c.request("npc/talk", { npc: "gorm", line: "Hi", stream: true }, 3);
  c.request("world/create", { world: "w", state: { gold: 5 } }, 4);
  c.request("world/subscribe", { world: "w", path: "gold" }, 5);
  c.request("npc/create", {
    npc: "mira",
    persona: { name: "Mira" },
    world: "w",
    options: { replyFormat: "text", worldWritable: ["gold"], playerOptionCount: 0 },
    model: scripted(
      { toolCalls: [{ name: "update_world_state", arguments: { path: "gold", value: "3" } }] },
      { text: "[happy] Two gold, thanks.", chunks: 1 },
    ),
  }, 6);
  c.request("npc/talk", { npc: "mira", line: "Pay", stream: true }, 7);
  c.request("npc/list", {}, 8);
  c.request("npc/delete", { npc: "gorm" }, 9);
  await c.response(7);
  await c.response(3);
  assert.deepEqual(order(c), [
    "response 1",
    "response 2",
    "response 4",
    "response 5",
    "response 6",
    "response 8",
    "response 9",
    "error 3",
    "npc:toolCallStarted 7",
    "world/changed",
    "npc:toolCallCompleted 7",
    "npc:emotion 7",
    "npc:lineDelta 7",
    "response 7",
  ]);
  assertUnavailableWarning(answer(c, 1).result as JsonValue);
  assert.equal((answer(c, 3).error as JsonObject).code, -32009, "deleted while queued");
  await c.close();
});

Deno.test("npc: a create waiting for the plugin's check holds the NPC's talk and bark until it answers", async () => {
  const path = requireDouble();
  closeSystemModels();
  const c = new WireClient({
    systemModel: () =>
      createSystemModel({
        libraryPath: path,
        decorateRequest: (body) => {
          body["x-double"] = body.op === "availability"
            ? { result: { available: false, reason: "model_not_ready", contextSize: 4096 }, delayMs: 20 }
            : { result: { kind: "text", text: "x", usage: null } };
        },
      }),
  });
  try {
    c.request("npc/create", { npc: "gorm", persona: { name: "Gorm" } }, 1);
    c.request("npc/talk", { npc: "gorm", line: "Hi", stream: true }, 2);
    c.request("npc/bark", { npc: "gorm" }, 3);
    await c.response(2);
    await c.response(3);
    // The talk (queued per NPC) and the bark (concurrent) may fail in either order; both after the create.
    const [first, ...rest] = order(c);
    assert.equal(first, "response 1");
    assert.deepEqual(rest.sort(), ["error 2", "error 3"]);
    for (const id of [2, 3]) {
      assert.equal(((answer(c, id).error as JsonObject).data as JsonObject).code, "model_unavailable");
    }
    assert.deepEqual((answer(c, 1).result as JsonObject).warnings, [
      "The system model is unavailable (model_not_ready); turns will fail with model_unavailable until it is ready.",
    ]);
  } finally {
    await c.close();
    closeSystemModels();
    await systemModelsIdle();
  }
});

Deno.test("decision: an actor's create answers first; a tool lookup, an immediate decision and a ping in order", async () => {
  const c = new WireClient(missingPlugin());
  c.request("npc/create", { npc: "snik", persona: { name: "Snik", role: "a goblin" } }, 1);
  c.request("decision/decide", { situation: "A wolf.", options: ["hide"], actor: "snik" }, 2);
  c.request("decision/decide", {
    situation: "A knight.",
    options: ["flee", "fight"],
    actor: "snik",
    tools: [{ name: "check_hp", description: "Hit points." }],
    toolChoice: "required",
    model: scripted({ toolCalls: [{ name: "check_hp" }] }, {
      json: { reasoning: "Low on hit points.", choice: "flee", confidence: 80 },
    }),
  }, 3);
  c.request("decision/decideMany", {
    requests: [{ situation: "s", options: ["a"] }, { situation: "t", options: ["b"] }],
  }, 4);
  c.request("ping", {}, 5);
  const call = await c.toolCall(1);
  c.reply(call.id, { output: "hp 3" });
  await c.response(3);
  assert.deepEqual(order(c), [
    "response 1",
    "response 2",
    "tool/call t-1",
    "response 5",
    "response 4",
    "response 3",
  ]);
  assert.equal((answer(c, 2).result as JsonObject).optionID, "hide");
  assert.deepEqual((call.params as JsonObject).requestId, 3);
  assert.equal((answer(c, 3).result as JsonObject).optionID, "flee");
  await c.close();
});

Deno.test("content: a client tool's call comes before the response; immediate requests answer in between", async () => {
  const c = new WireClient(missingPlugin());
  c.request("session/create", { session: "g" }, 1);
  c.request("content/generate", {
    prompt: "A sword.",
    schema: { type: "object", properties: { name: { type: "string" } }, required: ["name"] },
    tools: [{ name: "stock", description: "What the shop has." }],
    model: scripted({ toolCalls: [{ name: "stock" }] }, { json: { name: "Oakcleaver" } }),
  }, 2);
  c.request("content/generate", { prompt: "A shield.", schema: { type: "object" } }, 3);
  c.request("world/create", { world: "w" }, 4);
  const call = await c.toolCall(1);
  c.reply(call.id, { output: "swords" });
  await c.response(2);
  await c.response(3);
  assert.deepEqual(order(c), [
    "response 1",
    "tool/call t-1",
    "response 4",
    "error 3",
    "response 2",
  ]);
  assert.deepEqual(answer(c, 2).result, { content: { name: "Oakcleaver" } });
  assert.equal(((answer(c, 3).error as JsonObject).data as JsonObject).code, "model_unavailable");
  await c.close();
});

Deno.test("world: every change notification comes before its write's response, in arrival order", async () => {
  const c = new WireClient();
  c.request("world/create", { world: "w", state: { player: { gold: 5 } } }, 1);
  c.request("world/subscribe", { world: "w", path: "player" }, 2);
  c.request("world/set", { world: "w", path: "player.gold", value: 3 }, 3);
  c.request("world/merge", { world: "w", path: "player", patch: { hp: 9 } }, 4);
  c.request("world/get", { world: "w", path: "player" }, 5);
  c.request("world/remove", { world: "w", path: "player.hp" }, 6);
  c.request("world/unsubscribe", { subscription: "sub1" }, 7);
  c.request("world/set", { world: "w", path: "player.gold", value: 1 }, 8);
  c.request("world/delete", { world: "w" }, 9);
  await c.response(9);
  assert.deepEqual(order(c), [
    "response 1",
    "response 2",
    "world/changed",
    "response 3",
    "world/changed",
    "response 4",
    "response 5",
    "world/changed",
    "response 6",
    "response 7",
    "response 8",
    "response 9",
  ]);
  const changes = c.messages.filter((m) => m.method === "world/changed").map((m) => m.params as JsonObject);
  assert.deepEqual(changes.map((p) => [p.path, p.oldValue, p.newValue]), [
    ["player.gold", 5, 3],
    ["player.hp", undefined, 9],
    ["player.hp", 9, undefined],
  ]);
  assert.deepEqual((answer(c, 5).result as JsonObject).value, { gold: 3, hp: 9 });
  await c.close();
});
