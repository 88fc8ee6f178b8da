import assert from "node:assert/strict";
import type { JsonObject, JsonValue } from "../../../src/protocol/json.ts";
import { WorldError, WorldState } from "../../../src/game/world/world_state.ts";
import {
  coerceWorldValue,
  readWorldStateTool,
  shortenForModel,
  updateWorldStateTool,
  worldTools,
} from "../../../src/game/world/world_tools.ts";

const BASE = "Read the current game state (JSON). Use it to check facts before you answer.";

function village(): WorldState {
  return new WorldState({
    player: { name: "Aria", gold: 60, alive: true, title: null, bag: ["rope", "torch"], stats: { hp: 7 } },
    quests: { lost_ring: { status: "open" } },
    secret: { code: 1234 },
    empty: {},
    none: [],
  });
}

function ok(result: { output: JsonValue; text: string; isError: boolean }, expected: JsonValue): void {
  assert.equal(result.isError, false, JSON.stringify(result.output));
  assert.deepEqual(result.output, expected);
  assert.equal(result.text, JSON.stringify(result.output));
}

function done(result: { output: JsonValue; text: string; isError: boolean }, message: string): void {
  assert.equal(result.isError, false, String(result.output));
  assert.equal(result.output, message);
  assert.equal(result.text, message);
}

function err(result: { output: JsonValue; text: string; isError: boolean }, message: string): void {
  assert.equal(result.isError, true, JSON.stringify(result.output));
  assert.equal(result.output, message);
  assert.equal(result.text, message);
}

Deno.test("read_world_state: definition and descriptions", () => {
  const world = village();
  const all = readWorldStateTool([""], world);
  assert.equal(all.name, "read_world_state");
  assert.deepEqual(all.parameters, {
    type: "object",
    properties: {
      path: {
        type: "string",
        description: "Dot path such as 'player.gold'. Empty string for everything you may read.",
      },
    },
    required: ["path"],
  });
  assert.equal(all.description, `${BASE} Top-level keys: player, quests, secret, empty, none.`);
  world.set("late", 1);
  assert.equal(all.description, `${BASE} Top-level keys: player, quests, secret, empty, none, late.`);
  const many = new WorldState(Object.fromEntries(Array.from({ length: 15 }, (_, i) => [`k${i}`, i])));
  assert.equal(
    readWorldStateTool(["", "k1"], many).description,
    `${BASE} Top-level keys: k0, k1, k2, k3, k4, k5, k6, k7, k8, k9, k10, k11.`,
  );
  assert.equal(
    readWorldStateTool(["$"], new WorldState()).description,
    `${BASE} Readable paths: (everything).`,
  );
  assert.equal(
    readWorldStateTool(["player", "$.quests[0]", "player"], world).description,
    `${BASE} Readable paths: player, quests.0.`,
  );
  assert.throws(() => readWorldStateTool(["a..b"], world), WorldError);
});

Deno.test("read_world_state: values, case-insensitive keys, exact match first", () => {
  const world = village();
  const tool = readWorldStateTool([""], world);
  ok(tool.run({ path: "player.gold" }), 60);
  ok(tool.run({ path: "PLAYER.Gold" }), 60);
  ok(tool.run({ path: "$.player.bag[1]" }), "torch");
  ok(tool.run({ path: "player.title" }), null);
  ok(tool.run({ path: "quests" }), { lost_ring: { status: "open" } });
  ok(tool.run({}), world.snapshot());
  ok(tool.run({ path: "" }), world.snapshot());
  ok(tool.run({ path: null }), world.snapshot());
  const cased = new WorldState({ Gold: 1, gold: 2, GOLD: 3 });
  const t2 = readWorldStateTool([""], cased);
  ok(t2.run({ path: "gold" }), 2);
  ok(t2.run({ path: "GOLD" }), 3);
  ok(t2.run({ path: "gOLD" }), 1); // first case-insensitive match in stored order
  const numeric = new WorldState({ "7": "seven" });
  ok(readWorldStateTool([""], numeric).run({ path: 7 }), "seven");
});

Deno.test("read_world_state: missing values name what exists", () => {
  const world = village();
  const tool = readWorldStateTool([""], world);
  err(
    tool.run({ path: "player.gld" }),
    "No value at 'player.gld'. 'player' has keys: name, gold, alive, title, bag, stats.",
  );
  err(
    tool.run({ path: "nothing.x" }),
    "No value at 'nothing.x'. The state has keys: player, quests, secret, empty, none.",
  );
  err(
    tool.run({ path: "player.bag.5" }),
    "No value at 'player.bag.5'. 'player.bag' is a list of 2 items (indices 0...1).",
  );
  const single = new WorldState({ flags: ["met_gorm"] });
  err(
    readWorldStateTool([""], single).run({ path: "flags.3" }),
    "No value at 'flags.3'. 'flags' is a list of 1 item (index 0).",
  );
  assert.deepEqual(shortenForModel({ a: [1], b: { c: 1 }, d: "x".repeat(2000) }), {
    a: "[list of 1 item]",
    b: "{object with 1 key}",
    d: "x".repeat(77) + "...",
    _note: "Shortened. Read a narrower path for details.",
  });
  err(
    tool.run({ path: "player.bag.x.y" }),
    "No value at 'player.bag.x.y'. 'player.bag' is a list of 2 items (indices 0...1).",
  );
  err(tool.run({ path: "player.gold.x" }), "No value at 'player.gold.x'. 'player.gold' is a number: 60.");
  err(
    tool.run({ path: "player.name.x" }),
    "No value at 'player.name.x'. 'player.name' is a string: \"Aria\".",
  );
  err(
    tool.run({ path: "player.alive.x" }),
    "No value at 'player.alive.x'. 'player.alive' is a boolean: true.",
  );
  err(tool.run({ path: "player.title.x" }), "No value at 'player.title.x'. 'player.title' is null.");
  err(tool.run({ path: "empty.x" }), "No value at 'empty.x'.");
  err(tool.run({ path: "none.0" }), "No value at 'none.0'. 'none' is an empty list.");
  const wide = new WorldState({ o: Object.fromEntries(Array.from({ length: 25 }, (_, i) => [`k${i}`, i])) });
  const keys20 = Array.from({ length: 20 }, (_, i) => `k${i}`).join(", ");
  err(
    readWorldStateTool([""], wide).run({ path: "o.zz" }),
    `No value at 'o.zz'. 'o' has keys: ${keys20}, ....`,
  );
});

Deno.test("read_world_state: readable prefixes", () => {
  const world = village();
  const tool = readWorldStateTool(["player.gold", "player.bag", "quests", "ghost.x"], world);
  ok(tool.run({ path: "player.gold" }), 60);
  ok(tool.run({ path: "Quests.Lost_Ring.status" }), "open");
  // ancestors of readable paths show only the readable subtrees (missing ones skipped)
  ok(tool.run({ path: "" }), {
    player: { gold: 60, bag: ["rope", "torch"] },
    quests: { lost_ring: { status: "open" } },
  });
  ok(tool.run({ path: "player" }), { gold: 60, bag: ["rope", "torch"] });
  ok(tool.run({ path: "ghost" }), {});
  const list = "Readable paths: player.gold, player.bag, quests, ghost.x.";
  err(tool.run({ path: "secret" }), `You cannot read 'secret'. ${list}`);
  err(tool.run({ path: "SECRET.code" }), `You cannot read 'secret.code'. ${list}`);
  err(tool.run({ path: "player.name" }), `You cannot read 'player.name'. ${list}`);
  err(tool.run({ path: "nowhere" }), `You cannot read 'nowhere'. ${list}`);
  // a missing value under a readable path: ancestors outside the readable area are not described
  err(tool.run({ path: "quests.other" }), "No value at 'quests.other'. 'quests' has keys: lost_ring.");
  err(tool.run({ path: "Ghost.X" }), "No value at 'ghost.x'.");
  err(tool.run({ path: "player.gold.x" }), "No value at 'player.gold.x'. 'player.gold' is a number: 60.");
  // nested prefixes are not duplicated
  ok(readWorldStateTool(["player", "player.gold"], world).run({ path: "" }), {
    player: world.get("player").value,
  });
});

Deno.test("read_world_state: bad arguments", () => {
  const tool = readWorldStateTool([""], village());
  err(
    tool.run({ path: "a..b" }),
    "'a..b' is not a valid path. Use dot-separated keys such as 'player.gold'.",
  );
  err(tool.run({ path: true }), "The path must be a string such as 'player.gold'.");
  err(tool.run({ path: ["player"] }), "The path must be a string such as 'player.gold'.");
});

Deno.test("read_world_state: large values are shortened to at most 1500 characters", () => {
  const long = "x".repeat(120);
  const state: JsonObject = {
    big: {
      text: long,
      short: "hi",
      n: 5,
      nested: { a: 1, b: 2 },
      list: [1, 2, 3],
      filler: "y".repeat(1600),
    },
    list: Array.from({ length: 300 }, (_, i) => ({ id: i, name: `item ${i}` })),
    huge: Array.from({ length: 3 }, () => ({ blob: "z".repeat(2000) })),
    story: 'é"'.repeat(2000),
    wide: Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`key_number_${i}`, { v: i }])),
  };
  const tool = readWorldStateTool([""], new WorldState(state));
  const big = tool.run({ path: "big" });
  ok(big, {
    text: "x".repeat(77) + "...",
    short: "hi",
    n: 5,
    nested: "{object with 2 keys}",
    list: "[list of 3 items]",
    filler: "y".repeat(77) + "...",
    _note: "Shortened. Read a narrower path for details.",
  });
  const list = tool.run({ path: "list" });
  assert.ok(list.text.length <= 1500, String(list.text.length));
  const listOut = list.output as { items: JsonValue[]; _note: string };
  const k = listOut.items.length;
  assert.ok(k > 10 && k < 300);
  assert.deepEqual(listOut.items, (state.list as JsonValue[]).slice(0, k));
  assert.equal(listOut._note, `Showing ${k} of 300 items.`);
  // the next item would not have fit
  const withOneMore = JSON.stringify({
    items: (state.list as JsonValue[]).slice(0, k + 1),
    _note: listOut._note,
  });
  assert.ok(withOneMore.length > 1500);
  ok(tool.run({ path: "huge" }), {
    items: ["{object with 1 key}", "{object with 1 key}", "{object with 1 key}"],
    _note: "Showing 3 of 3 items.",
  });
  const story = tool.run({ path: "story" });
  assert.ok(story.text.length <= 1500 && story.text.length > 1400, String(story.text.length));
  assert.ok((story.output as string).endsWith("..."));
  assert.ok((state.story as string).startsWith((story.output as string).slice(0, -3)));
  const wide = tool.run({ path: "wide" });
  assert.ok(wide.text.length <= 1500);
  const wideOut = wide.output as JsonObject;
  const shown = Object.keys(wideOut).length - 1;
  assert.ok(shown > 10 && shown < 200);
  assert.equal(wideOut.key_number_0, "{object with 1 key}");
  assert.equal(wideOut._note, `Shortened. Showing ${shown} of 200 keys. Read a narrower path for details.`);
  // the whole state is shortened too
  const all = tool.run({ path: "" });
  assert.ok(all.text.length <= 1500);
  assert.equal((all.output as JsonObject).list, "[list of 300 items]");
  // small values are untouched
  assert.deepEqual(shortenForModel({ a: [1] }), { a: [1] });
  assert.equal(shortenForModel("abcdef", 7), "ab...");
  assert.equal(shortenForModel("abcdef", 5), "...");
  assert.equal(JSON.stringify(shortenForModel("abcdefgh", 8)), '"abc..."');
});

Deno.test("update_world_state: definition and descriptions", () => {
  const world = village();
  const tool = updateWorldStateTool(["quests", "player.gold"], world);
  assert.equal(tool.name, "update_world_state");
  assert.equal(tool.description, "Change a value in the game state. Writable paths: quests, player.gold.");
  assert.deepEqual(tool.parameters, {
    type: "object",
    properties: {
      path: { type: "string", description: "Dot path to change, such as 'quests.lost_ring.status'." },
      value: { type: "string", description: 'The new value, e.g. 42, true, done, or {"a": 1}.' },
    },
    required: ["path", "value"],
  });
  assert.deepEqual(Object.keys(tool.parameters.properties as JsonObject), ["path", "value"]);
  assert.equal(
    updateWorldStateTool(["", "x"], world).description,
    "Change a value in the game state. Writable paths: (everything), x.",
  );
  assert.throws(() => updateWorldStateTool(["a."], world), WorldError);
});

Deno.test("update_world_state: coercion by stored type and texts", () => {
  const world = village();
  const changes: string[] = [];
  world.observe("", (c) => changes.push(c.path));
  const tool = updateWorldStateTool([""], world);
  done(tool.run({ path: "player.gold", value: "45" }), "Set player.gold to 45 (was 60).");
  assert.deepEqual(changes, ["player.gold"]);
  done(tool.run({ path: "player.gold", value: " 1,250 " }), "Set player.gold to 1250 (was 45).");
  done(tool.run({ path: "Player.Gold", value: '"-3.5e1"' }), "Set player.gold to -35 (was 1250).");
  done(tool.run({ path: "player.gold", value: 7 }), "Set player.gold to 7 (was -35).");
  err(
    tool.run({ path: "player.gold", value: "lots" }),
    "Cannot set 'player.gold': it holds a number; 'lots' is not a number.",
  );
  err(
    tool.run({ path: "player.gold", value: "" }),
    "Cannot set 'player.gold': it holds a number; '' is not a number.",
  );
  err(
    tool.run({ path: "player.gold", value: "1e999" }),
    "Cannot set 'player.gold': it holds a number; '1e999' is not a number.",
  );
  done(tool.run({ path: "player.alive", value: "No" }), "Set player.alive to false (was true).");
  done(tool.run({ path: "player.alive", value: "1" }), "Set player.alive to true (was false).");
  done(tool.run({ path: "player.alive", value: "YES" }), "Set player.alive to true (was true).");
  done(tool.run({ path: "player.alive", value: false }), "Set player.alive to false (was true).");
  err(
    tool.run({ path: "player.alive", value: "maybe" }),
    "Cannot set 'player.alive': it holds true or false; got 'maybe'.",
  );
  done(tool.run({ path: "player.name", value: "Brom" }), 'Set player.name to "Brom" (was "Aria").');
  done(tool.run({ path: "player.name", value: '"Cara"' }), 'Set player.name to "Cara" (was "Brom").');
  done(tool.run({ path: "player.name", value: "42" }), 'Set player.name to "42" (was "Cara").');
  done(
    tool.run({ path: "player.bag", value: '["map"]' }),
    'Set player.bag to ["map"] (was ["rope","torch"]).',
  );
  err(
    tool.run({ path: "player.bag", value: "map" }),
    `Cannot set 'player.bag': it holds a list; send a JSON list such as ["a", "b"].`,
  );
  err(
    tool.run({ path: "player.bag", value: '{"a":1}' }),
    `Cannot set 'player.bag': it holds a list; send a JSON list such as ["a", "b"].`,
  );
  done(
    tool.run({ path: "player.stats", value: '{"hp": 8}' }),
    'Set player.stats to {"hp":8} (was {"hp":7}).',
  );
  done(tool.run({ path: "player.stats", value: { hp: 9 } }), 'Set player.stats to {"hp":9} (was {"hp":8}).');
  err(
    tool.run({ path: "player.stats", value: "[1]" }),
    `Cannot set 'player.stats': it holds an object; send a JSON object such as {"key": "value"}.`,
  );
  err(
    tool.run({ path: "player.stats", value: "null" }),
    `Cannot set 'player.stats': it holds an object; send a JSON object such as {"key": "value"}.`,
  );
  done(tool.run({ path: "player.title", value: "Sir" }), 'Set player.title to "Sir" (was null).');
  done(tool.run({ path: "quests.lost_ring.reward", value: "50" }), "Set quests.lost_ring.reward to 50.");
  done(tool.run({ path: "quests.new", value: "done" }), 'Set quests.new to "done".');
  done(tool.run({ path: "quests.flag", value: "true" }), "Set quests.flag to true.");
  done(tool.run({ path: "quests.obj", value: '{"a": [1]}' }), 'Set quests.obj to {"a":[1]}.');
  done(tool.run({ path: "quests.nil", value: "null" }), "Set quests.nil to null.");
  done(tool.run({ path: "player.bag.1", value: "rope" }), 'Set player.bag.1 to "rope".');
  assert.deepEqual(world.get("player.bag").value, ["map", "rope"]);
  assert.deepEqual(world.get("quests").value, {
    lost_ring: { status: "open", reward: 50 },
    new: "done",
    flag: true,
    obj: { a: [1] },
    nil: null,
  });
});

Deno.test("update_world_state: writable prefixes and failures", () => {
  const world = village();
  const version = world.version;
  const tool = updateWorldStateTool(["quests", "player.gold"], world);
  const list = "You may change: quests, player.gold.";
  err(tool.run({ path: "player.name", value: "x" }), `'player.name' is read-only. ${list}`);
  err(tool.run({ path: "player", value: "{}" }), `'player' is read-only. ${list}`);
  err(tool.run({ path: "", value: "{}" }), `'' is read-only. ${list}`);
  err(tool.run({ path: "SECRET.code", value: "1" }), `'secret.code' is read-only. ${list}`);
  err(
    tool.run({ path: "a..b", value: "1" }),
    "'a..b' is not a valid path. Use dot-separated keys such as 'player.gold'.",
  );
  err(tool.run({ path: "quests.x" }), "Cannot set 'quests.x': no value was given.");
  // a missing writable prefix takes the configured spelling
  const empty = new WorldState();
  done(
    updateWorldStateTool(["quests"], empty).run({ path: "QUESTS.ring", value: "found" }),
    'Set quests.ring to "found".',
  );
  assert.deepEqual(empty.snapshot(), { quests: { ring: "found" } });
  // WorldState errors become error outputs
  const w2 = new WorldState({ q: { n: 1, l: [] } });
  const t2 = updateWorldStateTool(["q"], w2);
  err(
    t2.run({ path: "q.n.x", value: "1" }),
    "Cannot write 'q.n.x': 'q.n' is a number, not an object or list.",
  );
  err(
    t2.run({ path: "q.l.3", value: "1" }),
    "'q.l' is a list of 0 items; '3' is not a valid index (use 0...0, where 0 appends).",
  );
  let deep = "1";
  for (let i = 0; i < 70; i++) deep = `[${deep}]`;
  err(
    t2.run({ path: "q.d", value: deep }),
    "The value for 'q.d' is nested too deeply (a world nests at most 64 levels).",
  );
  assert.equal(world.version, version);
  assert.deepEqual(w2.snapshot(), { q: { n: 1, l: [] } });
});

Deno.test("update_world_state: prototype pollution attempts stay data", () => {
  const world = new WorldState();
  const tool = updateWorldStateTool([""], world);
  done(tool.run({ path: "__proto__.polluted", value: "1" }), "Set __proto__.polluted to 1.");
  done(
    tool.run({ path: "constructor.prototype.polluted", value: "2" }),
    "Set constructor.prototype.polluted to 2.",
  );
  done(
    tool.run({ path: "x", value: '{"__proto__": {"polluted": 3}}' }),
    'Set x to {"__proto__":{"polluted":3}}.',
  );
  done(tool.run({ path: "x.__proto__.polluted", value: "4" }), "Set x.__proto__.polluted to 4 (was 3).");
  done(
    tool.run({ path: "", value: '{"__proto__": {"polluted": 5}}' }),
    'Set  to {"__proto__":{"polluted":5}} (was {"__proto__":{"polluted":1},"constructor":{"prototype":{"polluted":2}},"x":{"__proto__":{"polluted":4}}}).',
  );
  assert.equal(({} as Record<string, unknown>).polluted, undefined);
  assert.equal((Object.prototype as Record<string, unknown>).polluted, undefined);
  assert.equal(world.get("__proto__.polluted").value, 5);
  const read = readWorldStateTool([""], world);
  ok(read.run({ path: "__PROTO__" }), JSON.parse('{"polluted": 5}'));
  err(read.run({ path: "constructor" }), "No value at 'constructor'. The state has keys: __proto__.");
});

Deno.test("read_world_state: readable paths under __proto__ and inherited keys are read as data", () => {
  // Own keys named like inherited ones; the readable paths pass through them. Run this file with
  // --unstable-unsafe-proto too (`deno task test:proto`): there `({})["__proto__"]` is Object.prototype, so
  // a lookup without an own-property check would write the readable subtree into it.
  const state = '{"__proto__": {"polluted": 1, "deep": {"x": 2}, "hidden": 0}, ' +
    '"constructor": {"prototype": {"polluted": 3}}, "toString": {"x": 4}, "secret": 5}';
  const world = new WorldState(JSON.parse(state));
  const tool = readWorldStateTool(
    ["__proto__.polluted", "__proto__.deep.x", "constructor.prototype.polluted", "toString.x"],
    world,
  );
  const expected = '{"__proto__": {"polluted": 1, "deep": {"x": 2}}, ' +
    '"constructor": {"prototype": {"polluted": 3}}, "toString": {"x": 4}}';
  ok(tool.run({ path: "" }), JSON.parse(expected));
  ok(tool.run({ path: "__proto__" }), JSON.parse('{"polluted": 1, "deep": {"x": 2}}'));
  ok(tool.run({ path: "__proto__.deep" }), { x: 2 });
  ok(tool.run({ path: "constructor" }), { prototype: { polluted: 3 } });
  err(
    tool.run({ path: "__proto__.hidden" }),
    "You cannot read '__proto__.hidden'. Readable paths: __proto__.polluted, __proto__.deep.x, " +
      "constructor.prototype.polluted, toString.x.",
  );
  assert.equal(({} as Record<string, unknown>).polluted, undefined);
  assert.deepEqual(Object.keys(Object.prototype), []);
  assert.equal(Object.hasOwn(Object.prototype, "deep"), false);
  assert.equal(Object.hasOwn(Object.prototype, "x"), false);
});

Deno.test("coerceWorldValue: direct", () => {
  assert.deepEqual(coerceWorldValue("x", { path: "p", current: undefined }), { value: "x" });
  assert.deepEqual(coerceWorldValue("[1, 2]", { path: "p", current: null }), { value: [1, 2] });
  assert.deepEqual(coerceWorldValue("0.5", { path: "p", current: 1 }), { value: 0.5 });
  assert.deepEqual(coerceWorldValue(".5", { path: "p", current: 1 }), { value: 0.5 });
  assert.deepEqual(coerceWorldValue("0x10", { path: "p", current: 1 }), {
    error: "Cannot set 'p': it holds a number; '0x10' is not a number.",
  });
  assert.deepEqual(coerceWorldValue("  spaced  ", { path: "p", current: "s" }), { value: "  spaced  " });
  assert.deepEqual(coerceWorldValue(" FALSE ", { path: "p", current: true }), { value: false });
});

Deno.test("worldTools: composition", () => {
  const world = village();
  assert.deepEqual(worldTools(world, { readable: [""], writable: [] }).map((t) => t.name), [
    "read_world_state",
  ]);
  assert.deepEqual(worldTools(world, { readable: [], writable: ["x"] }).map((t) => t.name), [
    "update_world_state",
  ]);
  assert.deepEqual(worldTools(world, { readable: ["a"], writable: ["x"] }).map((t) => t.name), [
    "read_world_state",
    "update_world_state",
  ]);
  assert.deepEqual(worldTools(world, { readable: [], writable: [] }), []);
});
