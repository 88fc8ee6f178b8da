import assert from "node:assert/strict";
import { WireClient } from "../helpers/wire.ts";
import { GameExtension } from "../../src/game/game_extension.ts";
import type { JsonObject, JsonValue } from "../../src/protocol/json.ts";

/** Sends a request and returns every message it caused (notifications first, the response last). */
async function exchange(c: WireClient, method: string, params: JsonObject): Promise<JsonObject[]> {
  const start = c.messages.length;
  const id = c.request(method, params);
  await c.response(id);
  const out = c.messages.slice(start);
  assert.equal(out[out.length - 1].id, id, "the response comes last");
  return out;
}

/** The error object of a failing request. */
async function failure(c: WireClient, method: string, params: JsonObject): Promise<JsonObject> {
  const r = await c.response(c.request(method, params));
  assert.ok("error" in r, `${method} should fail: ${JSON.stringify(r)}`);
  return r.error as JsonObject;
}

/** The `world/changed` params among `messages`. */
function changes(messages: JsonObject[]): JsonValue[] {
  return messages.filter((m) => m.method === "world/changed").map((m) => m.params as JsonValue);
}

Deno.test("world/create: generated and explicit ids, default state, version 0", async () => {
  const c = new WireClient();
  assert.deepEqual(await c.call("world/create", {}), { world: "w1", version: 0 });
  assert.deepEqual(await c.call("world/create", { world: "village", state: { gold: 10 } }), {
    world: "village",
    version: 0,
  });
  assert.deepEqual(await c.call("world/create", { state: null }), { world: "w2", version: 0 });
  assert.deepEqual(await c.call("world/snapshot", { world: "w2" }), { world: "w2", state: {}, version: 0 });
  assert.deepEqual(await c.call("world/snapshot", { world: "village" }), {
    world: "village",
    state: { gold: 10 },
    version: 0,
  });
  // A generated id skips ids in use.
  await c.call("world/create", { world: "w3" });
  assert.deepEqual(await c.call("world/create", {}), { world: "w4", version: 0 });
  await c.close();
});

Deno.test("world/create errors: bad id, non-object state, duplicate id, too deep", async () => {
  const c = new WireClient();
  assert.deepEqual(await failure(c, "world/create", { world: "" }), {
    code: -32602,
    message: "'world' must be 1-128 printable characters; got ''.",
    data: { code: "invalid_params" },
  });
  for (const state of [[1], 3, "x", true]) {
    assert.deepEqual(await failure(c, "world/create", { world: "a", state }), {
      code: -32602,
      message: "'state' must be a JSON object (the world root).",
      data: { code: "invalid_params" },
    });
  }
  await c.call("world/create", { world: "a" });
  assert.deepEqual(await failure(c, "world/create", { world: "a" }), {
    code: -32053,
    message: "A world with id 'a' already exists.",
    data: { code: "world_exists", world: "a" },
  });
  let deep: JsonValue = 1;
  for (let i = 0; i < 70; i++) deep = { d: deep };
  const error = await failure(c, "world/create", { world: "deep", state: deep as JsonObject });
  assert.equal(error.code, -32054);
  assert.deepEqual(error.data, { code: "world_error", world: "deep", path: "" });
  assert.deepEqual(((await c.call("world/list", {})).worlds as JsonObject[]).map((w) => w.world), ["a"]);
  await c.close();
});

Deno.test("world/get: values, missing values, canonical paths, errors", async () => {
  const c = new WireClient();
  await c.call("world/create", {
    world: "v",
    state: { player: { gold: 60, name: null }, party: [{ name: "Aria" }] },
  });
  assert.deepEqual(await c.call("world/get", { world: "v", path: "player.gold" }), {
    world: "v",
    path: "player.gold",
    value: 60,
    exists: true,
    version: 0,
  });
  assert.deepEqual(await c.call("world/get", { world: "v", path: " $.party[0].name " }), {
    world: "v",
    path: "party.0.name",
    value: "Aria",
    exists: true,
    version: 0,
  });
  assert.deepEqual(await c.call("world/get", { world: "v", path: "player.name" }), {
    world: "v",
    path: "player.name",
    value: null,
    exists: true,
    version: 0,
  });
  assert.deepEqual(await c.call("world/get", { world: "v", path: "player.Gold" }), {
    world: "v",
    path: "player.Gold",
    value: null,
    exists: false,
    version: 0,
  });
  const whole = await c.call("world/get", { world: "v" });
  assert.equal(whole.path, "");
  assert.deepEqual(whole.value, { player: { gold: 60, name: null }, party: [{ name: "Aria" }] });
  assert.deepEqual(await failure(c, "world/get", { world: "v", path: "a..b" }), {
    code: -32054,
    message: "'a..b' is not a valid path. Use dot-separated keys such as 'player.gold'.",
    data: { code: "world_error", world: "v", path: "a..b" },
  });
  assert.deepEqual(await failure(c, "world/get", { world: "nope" }), {
    code: -32052,
    message: "No world with id 'nope'.",
    data: { code: "world_not_found", world: "nope" },
  });
  assert.deepEqual(await failure(c, "world/get", {}), {
    code: -32602,
    message: "Missing required parameter 'world'.",
    data: { code: "invalid_params" },
  });
  assert.deepEqual(await failure(c, "world/get", { world: "v", path: 3 }), {
    code: -32602,
    message: "Parameter 'path' must be a string; got 3.",
    data: { code: "invalid_params" },
  });
  await c.close();
});

Deno.test("world/set: writes, version, null values, list append, errors, unknown keys ignored", async () => {
  const c = new WireClient();
  await c.call("world/create", { world: "v", state: { gold: 1, list: [1, 2] } });
  assert.deepEqual(await c.call("world/set", { world: "v", path: "a.b.c", value: 5, extra: 1 }), {
    world: "v",
    path: "a.b.c",
    version: 1,
  });
  // Writing an equal value changes nothing.
  assert.deepEqual(await c.call("world/set", { world: "v", path: "a.b.c", value: 5 }), {
    world: "v",
    path: "a.b.c",
    version: 1,
  });
  assert.deepEqual(await c.call("world/set", { world: "v", path: "gold", value: null }), {
    world: "v",
    path: "gold",
    version: 2,
  });
  assert.deepEqual(await c.call("world/set", { world: "v", path: "list[2]", value: 3 }), {
    world: "v",
    path: "list.2",
    version: 3,
  });
  assert.deepEqual((await c.call("world/snapshot", { world: "v" })).state, {
    gold: null,
    list: [1, 2, 3],
    a: { b: { c: 5 } },
  });
  assert.deepEqual(await failure(c, "world/set", { world: "v", path: "gold" }), {
    code: -32602,
    message: "Missing required parameter 'value' (use world/remove to delete).",
    data: { code: "invalid_params" },
  });
  assert.deepEqual(await failure(c, "world/set", { world: "v", path: "list.7", value: 1 }), {
    code: -32054,
    message: "'list' is a list of 3 items; '7' is not a valid index (use 0...3, where 3 appends).",
    data: { code: "world_error", world: "v", path: "list.7" },
  });
  assert.deepEqual(await failure(c, "world/set", { world: "v", path: "a.b.c.d", value: 1 }), {
    code: -32054,
    message: "Cannot write 'a.b.c.d': 'a.b.c' is a number, not an object or list.",
    data: { code: "world_error", world: "v", path: "a.b.c.d" },
  });
  assert.deepEqual(await failure(c, "world/set", { world: "v", value: [1] }), {
    code: -32054,
    message:
      "The world state root must be a JSON object: write a value at a path such as 'player.gold', or an object to replace the whole state.",
    data: { code: "world_error", world: "v", path: "" },
  });
  // Failed writes changed nothing.
  assert.equal((await c.call("world/snapshot", { world: "v" })).version, 3);
  await c.close();
});

Deno.test("world/changed: set, merge one-per-leaf, remove, root replace — before the response", async () => {
  const c = new WireClient();
  await c.call("world/create", { world: "v", state: { player: { gold: 60, hp: 9 } } });
  assert.deepEqual(await c.call("world/subscribe", { world: "v" }), {
    subscription: "sub1",
    world: "v",
    path: "",
  });

  let messages = await exchange(c, "world/set", { world: "v", path: "player.gold", value: 45 });
  assert.deepEqual(messages.map(WireClient.kind), ["world/changed", "response"]);
  assert.deepEqual(messages[0], {
    jsonrpc: "2.0",
    method: "world/changed",
    params: { world: "v", subscription: "sub1", path: "player.gold", oldValue: 60, newValue: 45 },
  });
  // Created value: no oldValue; a JSON null is sent as null.
  messages = await exchange(c, "world/set", { world: "v", path: "player.title", value: null });
  assert.deepEqual(changes(messages), [{
    world: "v",
    subscription: "sub1",
    path: "player.title",
    newValue: null,
  }]);

  messages = await exchange(c, "world/merge", {
    world: "v",
    patch: { player: { gold: 50, hp: null, title: null, bag: { rope: 1 } }, quest: "ring" },
  });
  assert.deepEqual(changes(messages), [
    { world: "v", subscription: "sub1", path: "player.gold", oldValue: 45, newValue: 50 },
    { world: "v", subscription: "sub1", path: "player.hp", oldValue: 9 },
    { world: "v", subscription: "sub1", path: "player.title", oldValue: null },
    { world: "v", subscription: "sub1", path: "player.bag", newValue: { rope: 1 } },
    { world: "v", subscription: "sub1", path: "quest", newValue: "ring" },
  ]);
  assert.deepEqual(messages[messages.length - 1].result, { world: "v", path: "", version: 3 });

  messages = await exchange(c, "world/remove", { world: "v", path: "player.bag" });
  assert.deepEqual(changes(messages), [
    { world: "v", subscription: "sub1", path: "player.bag", oldValue: { rope: 1 } },
  ]);
  assert.deepEqual(messages[messages.length - 1].result, {
    world: "v",
    path: "player.bag",
    removed: true,
    oldValue: { rope: 1 },
    version: 4,
  });

  messages = await exchange(c, "world/set", { world: "v", value: { fresh: true } });
  assert.deepEqual(changes(messages), [{
    world: "v",
    subscription: "sub1",
    path: "",
    oldValue: { player: { gold: 50 }, quest: "ring" },
    newValue: { fresh: true },
  }]);

  // Merging a patch that changes nothing: no notification, no version bump.
  messages = await exchange(c, "world/merge", { world: "v", patch: { fresh: true, gone: null } });
  assert.deepEqual(messages.map(WireClient.kind), ["response"]);
  assert.equal((messages[0].result as JsonObject).version, 5);
  await c.close();
});

Deno.test("world/subscribe fires at, inside and above its path, in registration order", async () => {
  const c = new WireClient();
  await c.call("world/create", { world: "v", state: { player: { gold: 1 }, town: { name: "Oak" } } });
  const at = await c.call("world/subscribe", { world: "v", path: "$.player.gold" });
  assert.deepEqual(at, { subscription: "sub1", world: "v", path: "player.gold" });
  await c.call("world/subscribe", { world: "v", path: "player" }); // sub2: the change is inside
  await c.call("world/subscribe", { world: "v", path: "player.gold.coins" }); // sub3: the change is above
  await c.call("world/subscribe", { world: "v", path: "town" }); // sub4: unrelated

  const messages = await exchange(c, "world/set", { world: "v", path: "player.gold", value: 2 });
  assert.deepEqual(
    changes(messages).map((p) => (p as JsonObject).subscription),
    ["sub1", "sub2", "sub3"],
  );
  // A change inside the subscribed path.
  const town = await exchange(c, "world/set", { world: "v", path: "town.name", value: "Elm" });
  assert.deepEqual(changes(town), [
    { world: "v", subscription: "sub4", path: "town.name", oldValue: "Oak", newValue: "Elm" },
  ]);
  // A subscription to a path in another world never fires.
  await c.call("world/create", { world: "other" });
  const other = await exchange(c, "world/set", { world: "other", path: "player.gold", value: 1 });
  assert.deepEqual(changes(other), []);

  assert.deepEqual(await failure(c, "world/subscribe", { world: "v", path: "a..b" }), {
    code: -32054,
    message: "'a..b' is not a valid path. Use dot-separated keys such as 'player.gold'.",
    data: { code: "world_error", world: "v", path: "a..b" },
  });
  assert.deepEqual(await failure(c, "world/subscribe", { world: "zz" }), {
    code: -32052,
    message: "No world with id 'zz'.",
    data: { code: "world_not_found", world: "zz" },
  });
  await c.close();
});

Deno.test("world/unsubscribe stops notifications; unknown subscription", async () => {
  const c = new WireClient();
  await c.call("world/create", { world: "v" });
  await c.call("world/subscribe", { world: "v", path: "a" });
  assert.deepEqual(await c.call("world/unsubscribe", { subscription: "sub1" }), {
    subscription: "sub1",
    world: "v",
    path: "a",
    unsubscribed: true,
  });
  const messages = await exchange(c, "world/set", { world: "v", path: "a", value: 1 });
  assert.deepEqual(messages.map(WireClient.kind), ["response"]);
  for (const id of ["sub1", "sub9"]) {
    assert.deepEqual(await failure(c, "world/unsubscribe", { subscription: id }), {
      code: -32056,
      message:
        `No world subscription with id '${id}'. It was unsubscribed, its world was deleted, or it never existed; world/list shows the active subscriptions.`,
      data: { code: "subscription_not_found", subscription: id },
    });
  }
  assert.deepEqual(await failure(c, "world/unsubscribe", {}), {
    code: -32602,
    message: "Missing required parameter 'subscription'.",
    data: { code: "invalid_params" },
  });
  await c.close();
});

Deno.test("world/remove: removed, nothing to remove, list shift, root, missing path", async () => {
  const c = new WireClient();
  await c.call("world/create", { world: "v", state: { list: ["a", "b", "c"], x: 1 } });
  assert.deepEqual(await c.call("world/remove", { world: "v", path: "list.0" }), {
    world: "v",
    path: "list.0",
    removed: true,
    oldValue: "a",
    version: 1,
  });
  assert.deepEqual((await c.call("world/get", { world: "v", path: "list" })).value, ["b", "c"]);
  assert.deepEqual(await c.call("world/remove", { world: "v", path: "nope.deeper" }), {
    world: "v",
    path: "nope.deeper",
    removed: false,
    oldValue: null,
    version: 1,
  });
  assert.deepEqual(await c.call("world/remove", { world: "v", path: "" }), {
    world: "v",
    path: "",
    removed: true,
    oldValue: { list: ["b", "c"], x: 1 },
    version: 2,
  });
  assert.deepEqual((await c.call("world/snapshot", { world: "v" })).state, {});
  assert.deepEqual(await failure(c, "world/remove", { world: "v" }), {
    code: -32602,
    message: "Missing required parameter 'path'.",
    data: { code: "invalid_params" },
  });
  await c.close();
});

Deno.test("world/merge: at a path, null patch at a path stores null, errors", async () => {
  const c = new WireClient();
  await c.call("world/create", { world: "v", state: { a: { b: 1 } } });
  assert.deepEqual(await c.call("world/merge", { world: "v", path: "a", patch: { c: 2 } }), {
    world: "v",
    path: "a",
    version: 1,
  });
  assert.deepEqual(await c.call("world/merge", { world: "v", path: "a.b", patch: null }), {
    world: "v",
    path: "a.b",
    version: 2,
  });
  assert.deepEqual((await c.call("world/snapshot", { world: "v" })).state, { a: { b: null, c: 2 } });
  assert.deepEqual(await failure(c, "world/merge", { world: "v" }), {
    code: -32602,
    message: "Missing required parameter 'patch'.",
    data: { code: "invalid_params" },
  });
  assert.deepEqual(await failure(c, "world/merge", { world: "v", patch: 7 }), {
    code: -32054,
    message:
      "The world state root must be a JSON object: write a value at a path such as 'player.gold', or an object to replace the whole state.",
    data: { code: "world_error", world: "v", path: "" },
  });
  await c.close();
});

Deno.test("world/list and world/delete: entries, NPC count, ended subscriptions", async () => {
  const extension = new GameExtension();
  const c = new WireClient({ extensions: [extension] });
  await c.call("world/create", { world: "a", state: { x: 1 } });
  await c.call("world/create", { world: "b" });
  await c.call("world/subscribe", { world: "a", path: "x" });
  await c.call("world/subscribe", { world: "b" });
  await c.call("world/subscribe", { world: "a" });
  await c.call("world/set", { world: "a", path: "x", value: 2 });
  extension.game.worlds.get("a")!.npcCount = 2; // as if two NPCs were created with it
  const listed = (await c.call("world/list", {})).worlds as JsonObject[];
  assert.equal(listed.length, 2);
  assert.match(listed[0].createdAt as string, /^\d{4}-\d\d-\d\dT/);
  assert.deepEqual(listed.map((w) => ({ ...w, createdAt: "T" })), [
    {
      world: "a",
      version: 1,
      npcs: 2,
      subscriptions: [
        { subscription: "sub1", world: "a", path: "x" },
        { subscription: "sub3", world: "a", path: "" },
      ],
      createdAt: "T",
    },
    {
      world: "b",
      version: 0,
      npcs: 0,
      subscriptions: [{ subscription: "sub2", world: "b", path: "" }],
      createdAt: "T",
    },
  ]);
  const kept = extension.game.worlds.get("a")!.world;
  assert.deepEqual(await c.call("world/delete", { world: "a" }), {
    world: "a",
    deleted: true,
    endedSubscriptions: 2,
  });
  // Holders of the world (NPCs) keep using it, but its subscriptions are gone.
  const before = c.messages.length;
  kept.set("x", 3);
  assert.equal(c.messages.length, before);
  assert.equal(kept.observerCount, 0);
  assert.deepEqual(await failure(c, "world/unsubscribe", { subscription: "sub1" }), {
    code: -32056,
    message:
      "No world subscription with id 'sub1'. It was unsubscribed, its world was deleted, or it never existed; world/list shows the active subscriptions.",
    data: { code: "subscription_not_found", subscription: "sub1" },
  });
  assert.deepEqual(await failure(c, "world/delete", { world: "a" }), {
    code: -32052,
    message: "No world with id 'a'.",
    data: { code: "world_not_found", world: "a" },
  });
  assert.deepEqual(
    ((await c.call("world/list", {})).worlds as JsonObject[]).map((w) => w.world),
    ["b"],
  );
  await c.close();
});

Deno.test("limits: 64 worlds and 256 subscriptions (data.limit)", async () => {
  const c = new WireClient();
  for (let i = 0; i < 64; i++) await c.call("world/create", {});
  assert.deepEqual(await failure(c, "world/create", { world: "one-more" }), {
    code: -32055,
    message: "The limit of 64 worlds is reached; delete some first.",
    data: { code: "limit_reached", limit: 64 },
  });
  // An existing id is reported as such even at the limit.
  assert.equal((await failure(c, "world/create", { world: "w1" })).code, -32053);
  await c.call("world/delete", { world: "w64" });
  assert.deepEqual(await c.call("world/create", {}), { world: "w65", version: 0 });

  for (let i = 0; i < 256; i++) await c.call("world/subscribe", { world: `w${(i % 3) + 1}` });
  assert.deepEqual(await failure(c, "world/subscribe", { world: "w1" }), {
    code: -32055,
    message: "The limit of 256 world subscriptions is reached; delete some first.",
    data: { code: "limit_reached", limit: 256 },
  });
  await c.call("world/unsubscribe", { subscription: "sub5" });
  assert.equal((await c.call("world/subscribe", { world: "w1" })).subscription, "sub257");
  await c.close();
});

Deno.test("prototype pollution through world/set and world/merge is stored as plain data", async () => {
  const c = new WireClient();
  await c.call("world/create", { world: "v" });
  await c.call("world/subscribe", { world: "v" });
  await c.call("world/set", { world: "v", path: "__proto__.polluted", value: true });
  await c.call("world/set", { world: "v", path: "constructor.prototype.polluted", value: true });
  c.sendLine(
    '{"jsonrpc":"2.0","id":"m","method":"world/merge","params":{"world":"v","patch":{"__proto__":{"polluted2":1},"a":{"__proto__":{"x":1}}}}}',
  );
  const merged = await c.response("m");
  assert.ok("result" in merged);
  c.sendLine(
    '{"jsonrpc":"2.0","id":"s","method":"world/create","params":{"world":"p","state":{"__proto__":{"polluted3":1}}}}',
  );
  assert.ok("result" in await c.response("s"));
  const empty: Record<string, unknown> = {};
  assert.equal(empty.polluted, undefined);
  assert.equal(empty.polluted2, undefined);
  assert.equal(empty.polluted3, undefined);
  assert.equal(empty.x, undefined);
  // The keys are ordinary data, visible on the wire.
  const id = c.request("world/snapshot", { world: "v" });
  await c.response(id);
  const line = c.lines[c.lines.length - 1];
  assert.equal(
    line,
    `{"jsonrpc":"2.0","id":${id},"result":{"world":"v","state":{"__proto__":{"polluted":true,"polluted2":1},` +
      `"constructor":{"prototype":{"polluted":true}},"a":{"__proto__":{"x":1}}},"version":3}}`,
  );
  const got = await c.call("world/get", { world: "v", path: "__proto__" });
  assert.ok(Object.hasOwn(got, "value"));
  assert.equal(JSON.stringify(got.value), '{"polluted":true,"polluted2":1}');
  const p = await c.call("world/get", { world: "p", path: "__proto__.polluted3" });
  assert.equal(p.value, 1);
  // Notifications carry the keys as data too.
  const notes = c.lines.filter((l) => l.includes('"world/changed"'));
  assert.equal(
    notes[0],
    '{"jsonrpc":"2.0","method":"world/changed","params":{"world":"v","subscription":"sub1","path":"__proto__.polluted","newValue":true}}',
  );
  await c.close();
});

Deno.test("shutdown ends subscriptions and removes worlds", async () => {
  const extension = new GameExtension();
  const c = new WireClient({ extensions: [extension] });
  await c.call("world/create", { world: "v" });
  await c.call("world/subscribe", { world: "v" });
  const world = extension.game.worlds.get("v")!.world;
  assert.equal(world.observerCount, 1);
  await c.close();
  assert.equal(world.observerCount, 0);
  assert.equal(extension.game.worlds.size, 0);
  const before = c.messages.length;
  world.set("a", 1);
  assert.equal(c.messages.length, before);
});

Deno.test("world/subscribe to a path that does not exist (yet) is allowed with a warning saying what is there; it fires once created", async () => {
  const c = new WireClient();
  await c.call("world/create", { world: "v", state: { quests: { dragon: { status: "open" } } } });
  assert.deepEqual(await c.call("world/subscribe", { world: "v", path: "quests.dragon" }), {
    subscription: "sub1",
    world: "v",
    path: "quests.dragon",
  });
  assert.deepEqual(await c.call("world/subscribe", { world: "v", path: "/quests/dragn" }), {
    subscription: "sub2",
    world: "v",
    path: "quests.dragn",
    warnings: [
      "'path' names 'quests.dragn', which does not exist in world 'v' (yet): world/changed is sent once it is " +
      "created. 'quests' has keys: dragon.",
    ],
  });
  assert.deepEqual((await c.call("world/subscribe", { world: "v", path: "ring" })).warnings, [
    "'path' names 'ring', which does not exist in world 'v' (yet): world/changed is sent once it is created. " +
    "The world has keys: quests.",
  ]);
  const messages = await exchange(c, "world/set", { world: "v", path: "quests.dragn", value: 1 });
  assert.deepEqual(changes(messages), [{
    world: "v",
    subscription: "sub2",
    path: "quests.dragn",
    newValue: 1,
  }]);
  await c.close();
});

Deno.test("a saved state sent as JSON text (a save file read, not parsed) says to parse it first", async () => {
  const c = new WireClient();
  const text = JSON.stringify({ quests: { wolves: { stage: "done" } } });
  const hint =
    "It is JSON text: send the object it holds (parse the saved text first: JSON.parse, json.loads).";
  assert.equal(
    (await failure(c, "world/create", { world: "v", state: text })).message,
    `'state' must be a JSON object (the world root). ${hint}`,
  );
  await c.call("world/create", { world: "v" });
  for (const [method, key] of [["world/set", "value"], ["world/merge", "patch"]]) {
    const error = await failure(c, method, { world: "v", path: "", [key]: text });
    assert.equal(
      error.message,
      `The world state root must be a JSON object: write a value at a path such as 'player.gold', or an object to replace the whole state. ${hint}`,
    );
  }
  const npc = await c.call("npc/create", { npc: "mira", persona: { name: "Mira" }, model: "scripted" });
  const { state } = await c.call("npc/state", { npc: npc.npc as string });
  const restore = await failure(c, "npc/restore", {
    state: JSON.stringify(state),
    npc: "m2",
    model: "scripted",
  });
  assert.equal(restore.code, -32602);
  assert.match(restore.message as string, /^Parameter 'state' must be an object; got "\{\\"version\\":1,/);
  assert.ok((restore.message as string).endsWith(` ${hint}`), restore.message as string);
  // Text that is no JSON object gets no such hint.
  for (const state of ["x", "[1]", "3"]) {
    assert.equal(
      (await failure(c, "world/create", { world: "w", state })).message,
      "'state' must be a JSON object (the world root).",
    );
  }
  await c.close();
});
