import assert from "node:assert/strict";
import type { JsonObject, JsonValue } from "../../../src/protocol/json.ts";
import { type WorldChange, WorldError, WorldState } from "../../../src/game/world/world_state.ts";

function throwsWorld(fn: () => unknown, message: string, path?: string): void {
  assert.throws(fn, (error: unknown) => {
    assert.ok(error instanceof WorldError, String(error));
    assert.equal(error.message, message);
    if (path !== undefined) assert.equal(error.path, path);
    return true;
  });
}

/** {"x": {"x": ... 1}} with `levels` objects. */
function nested(levels: number): JsonValue {
  let value: JsonValue = 1;
  for (let i = 0; i < levels; i++) value = { x: value };
  return value;
}

const ROOT_MSG = "The world state root must be a JSON object.";
const ROOT_WRITE_MSG =
  "The world state root must be a JSON object: write a value at a path such as 'player.gold', or an object to replace the whole state.";

Deno.test("constructor: default, deep copy, root must be an object", () => {
  assert.deepEqual(new WorldState().snapshot(), {});
  const input: JsonObject = { a: { b: [1, 2] } };
  const world = new WorldState(input);
  ((input.a as JsonObject).b as JsonValue[]).push(3);
  assert.deepEqual(world.snapshot(), { a: { b: [1, 2] } });
  assert.equal(world.version, 0);
  for (const bad of [[], 1, "x", null, true] as unknown[]) {
    throwsWorld(() => new WorldState(bad as JsonObject), ROOT_MSG, "");
  }
});

Deno.test("get: exact keys, indices, null values, copies", () => {
  const world = new WorldState({ player: { gold: 60, name: "Aria", n: null }, party: [{ name: "Brom" }] });
  assert.deepEqual(world.get("player.gold"), { value: 60, exists: true });
  assert.deepEqual(world.get("$.party[0].name"), { value: "Brom", exists: true });
  assert.deepEqual(world.get("party.00.name"), { value: "Brom", exists: true });
  assert.deepEqual(world.get("player.n"), { value: null, exists: true });
  assert.deepEqual(world.get("player.missing"), { value: null, exists: false });
  assert.deepEqual(world.get("Player.gold"), { value: null, exists: false });
  assert.deepEqual(world.get("player.gold.x"), { value: null, exists: false });
  assert.deepEqual(world.get("party.1"), { value: null, exists: false });
  assert.deepEqual(world.get("party.x"), { value: null, exists: false });
  assert.deepEqual(world.get("party.-1"), { value: null, exists: false });
  assert.deepEqual(world.get(""), { value: world.snapshot(), exists: true });
  assert.deepEqual(world.get(["party", "0", "name"]), { value: "Brom", exists: true });
  const copy = world.get("player").value as JsonObject;
  copy.gold = 0;
  assert.equal(world.get("player.gold").value, 60);
  assert.ok(world.has("player.n"));
  assert.ok(!world.has("player.zzz"));
  assert.deepEqual(world.keys("player"), ["gold", "name", "n"]);
  assert.deepEqual(world.keys(), ["player", "party"]);
  assert.equal(world.keys("party"), null);
  assert.equal(world.keys("nothing"), null);
  throwsWorld(
    () => world.get("a..b"),
    "'a..b' is not a valid path. Use dot-separated keys such as 'player.gold'.",
  );
});

Deno.test("get: inherited names are not values", () => {
  const world = new WorldState();
  for (const p of ["constructor", "__proto__", "toString", "hasOwnProperty", "constructor.prototype"]) {
    assert.deepEqual(world.get(p), { value: null, exists: false }, p);
    assert.equal(world.peek(p), undefined, p);
  }
  const list = new WorldState({ l: [1] });
  assert.deepEqual(list.get("l.length"), { value: null, exists: false });
});

Deno.test("set: change lists, creation, null, version", () => {
  const world = new WorldState({ player: { gold: 60 } });
  assert.deepEqual(world.set("player.gold", 45), [{ path: "player.gold", oldValue: 60, newValue: 45 }]);
  assert.equal(world.version, 1);
  assert.deepEqual(world.set("player.name", "Aria"), [{ path: "player.name", newValue: "Aria" }]);
  assert.deepEqual(world.set("player.name", null), [{
    path: "player.name",
    oldValue: "Aria",
    newValue: null,
  }]);
  assert.deepEqual(world.set("player.name", "B"), [{ path: "player.name", oldValue: null, newValue: "B" }]);
  assert.equal(world.version, 4);
  // intermediates are created; one change at the written path
  assert.deepEqual(world.set("$.quests.ring.status", "open"), [{
    path: "quests.ring.status",
    newValue: "open",
  }]);
  assert.deepEqual(world.get("quests"), { value: { ring: { status: "open" } }, exists: true });
  assert.equal(world.version, 5);
});

Deno.test("set: unchanged value does not bump version nor notify", () => {
  const world = new WorldState({ a: { b: [1, { c: 2 }] }, n: null });
  const seen: WorldChange[] = [];
  world.observe("", (c) => seen.push(c));
  assert.deepEqual(world.set("a", { b: [1, { c: 2 }] }), []);
  assert.deepEqual(world.set("n", null), []);
  assert.deepEqual(world.set("", { n: null, a: { b: [1, { c: 2 }] } }), []);
  assert.equal(world.version, 0);
  assert.deepEqual(seen, []);
});

Deno.test("set: lists append at n, reject other indices", () => {
  const world = new WorldState({ party: ["a", "b"] });
  assert.deepEqual(world.set("party.2", "c"), [{ path: "party.2", newValue: "c" }]);
  assert.deepEqual(world.set("party[0]", "A"), [{ path: "party.0", oldValue: "a", newValue: "A" }]);
  assert.deepEqual(world.set("party.03", "d"), [{ path: "party.3", newValue: "d" }]);
  assert.deepEqual(world.get("party").value, ["A", "b", "c", "d"]);
  // appending through an intermediate creates an object
  assert.deepEqual(world.set("party.4.name", "e"), [{ path: "party.4.name", newValue: "e" }]);
  assert.deepEqual(world.get("party.4").value, { name: "e" });
  const msg = (k: string) =>
    `'party' is a list of 5 items; '${k}' is not a valid index (use 0...5, where 5 appends).`;
  throwsWorld(() => world.set("party.6", 1), msg("6"), "party.6");
  throwsWorld(() => world.set("party.x", 1), msg("x"), "party.x");
  throwsWorld(() => world.set("party.-1", 1), msg("-1"));
  throwsWorld(() => world.set("party.9.name", 1), msg("9"), "party.9.name");
  const nestedList = new WorldState({ a: { l: [[1]] } });
  throwsWorld(
    () => nestedList.set("a.l.0.5", 1),
    "'a.l.0' is a list of 1 item; '5' is not a valid index (use 0...1, where 1 appends).",
  );
  assert.equal(world.version, 4);
});

Deno.test("set: writing through scalars fails with the type", () => {
  const world = new WorldState({ n: 1, s: "x", b: true, z: null, deep: { v: 2 }, l: [3] });
  const msg = (p: string, prefix: string, type: string) =>
    `Cannot write '${p}': '${prefix}' is ${type}, not an object or list.`;
  throwsWorld(() => world.set("n.x", 1), msg("n.x", "n", "a number"), "n.x");
  throwsWorld(() => world.set("s.x.y", 1), msg("s.x.y", "s", "a string"), "s.x.y");
  throwsWorld(() => world.set("b.x", 1), msg("b.x", "b", "a boolean"));
  throwsWorld(() => world.set("z.x", 1), msg("z.x", "z", "null"));
  throwsWorld(() => world.set("deep.v.w", 1), msg("deep.v.w", "deep.v", "a number"));
  throwsWorld(() => world.set("l[0].x", 1), msg("l.0.x", "l.0", "a number"));
  throwsWorld(() => world.merge("n.x", { a: 1 }), msg("n.x", "n", "a number"));
  assert.equal(world.version, 0);
  assert.deepEqual(world.snapshot(), { n: 1, s: "x", b: true, z: null, deep: { v: 2 }, l: [3] });
});

Deno.test("set: root", () => {
  const world = new WorldState({ a: 1 });
  for (const bad of [1, "x", null, [], true] as JsonValue[]) {
    throwsWorld(() => world.set("", bad), ROOT_WRITE_MSG, "");
  }
  throwsWorld(() => world.set("$", [1]), ROOT_WRITE_MSG);
  assert.deepEqual(world.set("/", { b: 2 }), [{ path: "", oldValue: { a: 1 }, newValue: { b: 2 } }]);
  assert.deepEqual(world.snapshot(), { b: 2 });
  assert.equal(world.version, 1);
});

Deno.test("set: values are deep copies in and out", () => {
  const world = new WorldState();
  const value: JsonObject = { list: [1, { x: 1 }] };
  const changes = world.set("v", value);
  (value.list as JsonValue[]).push(2);
  assert.deepEqual(world.get("v").value, { list: [1, { x: 1 }] });
  ((changes[0].newValue as JsonObject).list as JsonValue[]).push(9);
  assert.deepEqual(world.get("v").value, { list: [1, { x: 1 }] });
  const snap = world.snapshot();
  (snap.v as JsonObject).list = [];
  assert.deepEqual(world.get("v").value, { list: [1, { x: 1 }] });
  assert.equal(Object.getPrototypeOf(world.get("v").value), Object.prototype);
  assert.equal(Object.getPrototypeOf(snap), Object.prototype);
});

Deno.test("set/merge: non-JSON values are rejected", () => {
  const world = new WorldState();
  const bad: unknown[] = [
    NaN,
    Infinity,
    undefined,
    () => 1,
    { a: undefined },
    [1, undefined],
    new Date(0),
    1n,
  ];
  for (const value of bad) {
    throwsWorld(() => world.set("a.b", value as JsonValue), "The value for 'a.b' is not valid JSON.", "a.b");
  }
  // sparse array
  // deno-lint-ignore no-sparse-arrays
  throwsWorld(() => world.set("a", [1, , 3] as JsonValue), "The value for 'a' is not valid JSON.");
  throwsWorld(() => world.merge("", { a: NaN }), "The value for '' is not valid JSON.");
  assert.deepEqual(world.snapshot(), {});
  assert.equal(world.version, 0);
});

Deno.test("depth bound: 64 levels including the root and the path", () => {
  const deep = (p: string) => `The value for '${p}' is nested too deeply (a world nests at most 64 levels).`;
  const world = new WorldState();
  world.set("a", nested(63)); // root + 63 objects = 64
  throwsWorld(() => world.set("b", nested(64)), deep("b"), "b");
  throwsWorld(() => world.set("", nested(65) as JsonObject), deep(""), "");
  assert.doesNotThrow(() => new WorldState(nested(64) as JsonObject));
  throwsWorld(() => new WorldState(nested(65) as JsonObject), deep(""));
  const path64 = Array.from({ length: 64 }, () => "k").join(".");
  assert.equal(world.set(path64, 1).length, 1);
  const path65 = Array.from({ length: 65 }, () => "m").join(".");
  throwsWorld(() => world.set(path65, 1), deep(path65));
  assert.ok(!world.has("m"));
  throwsWorld(() => world.merge("c", nested(64)), deep("c"));
  // hostile depth is rejected without exhausting the stack
  let hostile: JsonValue = [];
  for (let i = 0; i < 100_000; i++) hostile = [hostile];
  throwsWorld(() => world.set("h", hostile), deep("h"));
  const cyclic: JsonObject = {};
  cyclic.self = cyclic;
  throwsWorld(() => world.set("c", cyclic), deep("c"));
  assert.equal(world.version, 2);
  assert.ok(!world.has("b") && !world.has("h") && !world.has("c"));
});

Deno.test("merge: RFC 7386 per-leaf changes and one version bump per call", () => {
  const world = new WorldState({ player: { gold: 60, name: "Aria", bag: { potion: 2 } }, day: 1 });
  const changes = world.merge("", {
    player: { gold: 45, name: null, bag: { potion: 2, rope: 1 }, title: { rank: "scout", junk: null } },
    day: 2,
    gone: null,
  });
  assert.deepEqual(changes, [
    { path: "player.gold", oldValue: 60, newValue: 45 },
    { path: "player.name", oldValue: "Aria" },
    { path: "player.bag.rope", newValue: 1 },
    { path: "player.title", newValue: { rank: "scout" } },
    { path: "day", oldValue: 1, newValue: 2 },
  ]);
  assert.equal(world.version, 1);
  assert.deepEqual(world.snapshot(), {
    player: { gold: 45, bag: { potion: 2, rope: 1 }, title: { rank: "scout" } },
    day: 2,
  });
  // nothing changes → no bump
  assert.deepEqual(world.merge("", { day: 2, gone: null, player: {} }), []);
  assert.deepEqual(world.merge("player", {}), []);
  assert.equal(world.version, 1);
});

Deno.test("merge: replacing a non-object with an object is one change for the subtree", () => {
  const world = new WorldState({ a: 5, l: [1, 2], n: null });
  assert.deepEqual(world.merge("", { a: { x: 1, y: { z: null } } }), [
    { path: "a", oldValue: 5, newValue: { x: 1, y: {} } },
  ]);
  assert.deepEqual(world.merge("l", { k: 1 }), [{ path: "l", oldValue: [1, 2], newValue: { k: 1 } }]);
  assert.deepEqual(world.merge("n", { k: null }), [{ path: "n", oldValue: null, newValue: {} }]);
  assert.deepEqual(world.merge("new.deep", { k: 1 }), [{ path: "new.deep", newValue: { k: 1 } }]);
  assert.deepEqual(world.get("new").value, { deep: { k: 1 } });
  assert.equal(world.version, 4);
});

Deno.test("merge: arrays and scalars replace; non-object patches at a path", () => {
  const world = new WorldState({ a: { l: [1, 2, 3], s: "x" } });
  assert.deepEqual(world.merge("a", { l: [9] }), [{ path: "a.l", oldValue: [1, 2, 3], newValue: [9] }]);
  assert.deepEqual(world.merge("a.l", { o: 1 }), [{ path: "a.l", oldValue: [9], newValue: { o: 1 } }]);
  assert.deepEqual(world.merge("a.s", "y"), [{ path: "a.s", oldValue: "x", newValue: "y" }]);
  assert.deepEqual(world.merge("a.s", null), [{ path: "a.s", oldValue: "y", newValue: null }]);
  assert.deepEqual(world.merge("a.s", null), []);
  assert.deepEqual(world.merge("a.t", [1]), [{ path: "a.t", newValue: [1] }]);
  for (const bad of [1, null, [], "x"] as JsonValue[]) {
    throwsWorld(() => world.merge("", bad), ROOT_WRITE_MSG, "");
  }
  assert.equal(world.version, 5);
});

Deno.test("merge: list paths and patches are copied", () => {
  const world = new WorldState({ party: [{ name: "a", hp: 3 }] });
  assert.deepEqual(world.merge("party.0", { hp: 2 }), [{ path: "party.0.hp", oldValue: 3, newValue: 2 }]);
  assert.deepEqual(world.merge("party.1", { name: "b" }), [{ path: "party.1", newValue: { name: "b" } }]);
  throwsWorld(
    () => world.merge("party.5", { x: 1 }),
    "'party' is a list of 2 items; '5' is not a valid index (use 0...2, where 2 appends).",
  );
  const patch: JsonObject = { inv: { items: ["x"] } };
  world.merge("", patch);
  ((patch.inv as JsonObject).items as JsonValue[]).push("y");
  assert.deepEqual(world.get("inv.items").value, ["x"]);
});

Deno.test("remove: keys, list shift, root, nothing", () => {
  const world = new WorldState({ a: { b: 1, n: null }, l: ["x", "y", "z"], s: 3 });
  assert.deepEqual(world.remove("a.b"), {
    removed: true,
    oldValue: 1,
    changes: [{ path: "a.b", oldValue: 1 }],
  });
  assert.deepEqual(world.remove("a.n"), {
    removed: true,
    oldValue: null,
    changes: [{ path: "a.n", oldValue: null }],
  });
  assert.equal(world.version, 2);
  assert.deepEqual(world.remove("l[01]"), {
    removed: true,
    oldValue: "y",
    changes: [{ path: "l.1", oldValue: "y" }],
  });
  assert.deepEqual(world.get("l").value, ["x", "z"]);
  const none = { removed: false, oldValue: null, changes: [] };
  assert.deepEqual(world.remove("a.b"), none);
  assert.deepEqual(world.remove("l.2"), none);
  assert.deepEqual(world.remove("l.x"), none);
  assert.deepEqual(world.remove("s.x"), none);
  assert.deepEqual(world.remove("missing.x.y"), none);
  assert.deepEqual(world.remove("constructor"), none);
  assert.deepEqual(world.remove("a.toString"), none);
  assert.equal(world.version, 3);
  const before = world.snapshot();
  assert.deepEqual(world.remove(""), {
    removed: true,
    oldValue: before,
    changes: [{ path: "", oldValue: before, newValue: {} }],
  });
  assert.deepEqual(world.snapshot(), {});
  assert.equal(world.version, 4);
  assert.deepEqual(world.remove("$"), none);
  assert.equal(world.version, 4);
  throwsWorld(
    () => world.remove("a..b"),
    "'a..b' is not a valid path. Use dot-separated keys such as 'player.gold'.",
  );
});

Deno.test("observe: at, inside and above; not siblings", () => {
  const world = new WorldState({ player: { gold: 60, inv: { potion: 1 } }, other: 1 });
  const log: string[] = [];
  world.observe("player.gold", (c) => log.push(`gold:${c.path}`));
  world.observe("player", (c) => log.push(`player:${c.path}`));
  world.observe("", (c) => log.push(`root:${c.path}`));
  world.observe("player.inv.potion", (c) => log.push(`potion:${c.path}`));
  world.observe("other", (c) => log.push(`other:${c.path}`));
  world.set("player.gold", 45);
  assert.deepEqual(log, ["gold:player.gold", "player:player.gold", "root:player.gold"]);
  log.length = 0;
  world.set("player", { gold: 1 }); // above gold and potion: all player observers fire
  assert.deepEqual(log, ["gold:player", "player:player", "root:player", "potion:player"]);
  log.length = 0;
  world.set("playerX", 1); // a key sharing a prefix string is not inside "player"
  assert.deepEqual(log, ["root:playerX"]);
  log.length = 0;
  world.remove("");
  assert.deepEqual(log, ["gold:", "player:", "root:", "potion:", "other:"]);
});

Deno.test("observe: registration order per change, change order, unsubscribe", () => {
  const world = new WorldState({ a: { x: 1, y: 2 } });
  const log: string[] = [];
  const offFirst = world.observe("a", (c) => log.push(`1:${c.path}`));
  world.observe("a.y", (c) => log.push(`2:${c.path}`));
  world.observe("a", (c) => log.push(`3:${c.path}:${JSON.stringify(c)}`));
  const changes = world.merge("a", { x: 10, y: null });
  assert.deepEqual(log, [
    "1:a.x",
    '3:a.x:{"path":"a.x","oldValue":1,"newValue":10}',
    "1:a.y",
    "2:a.y",
    '3:a.y:{"path":"a.y","oldValue":2}',
  ]);
  assert.equal(changes.length, 2);
  assert.equal(world.observerCount, 3);
  offFirst();
  offFirst();
  assert.equal(world.observerCount, 2);
  log.length = 0;
  world.set("a.x", 11);
  assert.deepEqual(log, ['3:a.x:{"path":"a.x","oldValue":10,"newValue":11}']);
  throwsWorld(
    () => world.observe("a..b", () => {}),
    "'a..b' is not a valid path. Use dot-separated keys such as 'player.gold'.",
  );
});

Deno.test("observe: synchronous, re-entrant writes, unsubscribe during dispatch, throwing observers", () => {
  const errors: [unknown, string][] = [];
  const world = new WorldState({}, { onObserverError: (e, c) => errors.push([e, c.path]) });
  const log: string[] = [];
  let off2 = () => {};
  world.observe("a", (c) => {
    log.push(`1:${c.path}:v${world.version}`);
    off2();
    if (c.path === "a") world.set("log", "seen");
  });
  off2 = world.observe("a", (c) => log.push(`2:${c.path}`));
  world.observe("", () => {
    throw new Error("boom");
  });
  world.observe("", (c) => log.push(`4:${c.path}`));
  world.set("a", 1);
  log.push("returned");
  // observer 1 saw the new version; its nested write notified (synchronously) before the outer set returned.
  assert.deepEqual(log, ["1:a:v1", "4:log", "4:a", "returned"]);
  assert.equal(world.version, 2);
  assert.deepEqual(errors.map(([e, p]) => [(e as Error).message, p]), [["boom", "log"], ["boom", "a"]]);
});

Deno.test("prototype pollution: set, merge, constructor never reach Object.prototype", () => {
  const world = new WorldState(JSON.parse('{"__proto__": {"polluted": "ctor"}}'));
  world.set("__proto__.polluted", 1);
  world.set("constructor.prototype.polluted", 2);
  world.set("prototype.polluted", 3);
  world.set("a.__proto__", { polluted: 4 });
  world.merge(
    "",
    JSON.parse('{"__proto__": {"polluted": 5, "x": 1}, "constructor": {"prototype": {"polluted": 6}}}'),
  );
  world.merge("b", JSON.parse('{"__proto__": {"polluted": 7}}'));
  world.merge("a.__proto__", JSON.parse('{"__proto__": {"polluted": 8}}'));
  assert.equal(({} as Record<string, unknown>).polluted, undefined);
  assert.equal((Object.prototype as Record<string, unknown>).polluted, undefined);
  assert.deepEqual(world.get("__proto__").value, { polluted: 5, x: 1 });
  assert.equal(world.get("constructor.prototype.polluted").value, 6);
  assert.equal(world.get("prototype.polluted").value, 3);
  assert.deepEqual(world.keys("a"), ["__proto__"]);
  const snap = world.snapshot();
  assert.ok(Object.hasOwn(snap, "__proto__"));
  assert.equal(Object.getPrototypeOf(snap), Object.prototype);
  assert.deepEqual(JSON.parse(JSON.stringify(snap)).__proto__, { polluted: 5, x: 1 });
  assert.deepEqual(Object.keys(snap), ["__proto__", "constructor", "prototype", "a", "b"]);
  world.remove("__proto__");
  assert.ok(!world.has("__proto__"));
  assert.equal(({} as Record<string, unknown>).polluted, undefined);
});
