import assert from "node:assert/strict";
import { summarizeWorld, WorldState } from "../../../src/game/world/mod.ts";

Deno.test("summarizeWorld: leaves as 'path: value', strings unquoted, others compact JSON", () => {
  const world = new WorldState({
    player: { name: "Aria", gold: 60, alive: true, title: null, bag: ["rope", { n: 1 }], flags: {} },
    tavern: { time_of_day: "evening" },
  });
  assert.equal(
    summarizeWorld(world, ["player", "tavern.time_of_day", "missing", "player.gold.x"]),
    [
      "player.name: Aria",
      "player.gold: 60",
      "player.alive: true",
      "player.title: null",
      'player.bag: ["rope",{"n":1}]',
      "player.flags: {}",
      "tavern.time_of_day: evening",
    ].join("\n"),
  );
  assert.equal(summarizeWorld(world, ["$.player.bag[1]"]), "player.bag.1.n: 1");
  assert.equal(summarizeWorld(world, ["missing", "a..b"]), "");
  assert.equal(summarizeWorld(world, []), "");
  // repeated paths (in any spelling) are summarized once
  assert.equal(summarizeWorld(world, ["tavern", "$.tavern", "/tavern"]), "tavern.time_of_day: evening");
});

Deno.test("summarizeWorld: the root", () => {
  assert.equal(summarizeWorld(new WorldState(), [""]), "state: {}");
  assert.equal(summarizeWorld(new WorldState({ a: 1, b: { c: "x" } }), ["$"]), "a: 1\nb.c: x");
});

Deno.test("summarizeWorld: objects are followed 4 levels below the path", () => {
  const world = new WorldState({ a: { b: { c: { d: { e: { f: 1 } } } } } });
  assert.equal(summarizeWorld(world, ["a"]), 'a.b.c.d.e: {"f":1}');
  assert.equal(summarizeWorld(world, [""]), 'a.b.c.d: {"e":{"f":1}}');
  assert.equal(summarizeWorld(world, ["a.b.c"]), "a.b.c.d.e.f: 1");
});

Deno.test("summarizeWorld: long values are cut to 197 characters plus '...'", () => {
  const world = new WorldState({ s: "x".repeat(250), exact: "y".repeat(200), list: Array(100).fill(1) });
  const lines = summarizeWorld(world, [""]).split("\n");
  assert.equal(lines[0], "s: " + "x".repeat(197) + "...");
  assert.equal(lines[1], "exact: " + "y".repeat(200));
  assert.equal(lines[2].length, "list: ".length + 200);
  assert.ok(lines[2].endsWith("..."));
});

Deno.test("summarizeWorld: at most 30 lines, then how many more", () => {
  const world = new WorldState({ m: Object.fromEntries(Array.from({ length: 35 }, (_, i) => [`k${i}`, i])) });
  const lines = summarizeWorld(world, ["m"]).split("\n");
  assert.equal(lines.length, 31);
  assert.equal(lines[29], "m.k29: 29");
  assert.equal(lines[30], "(5 more not shown)");
  const exactly30 = new WorldState({
    m: Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`k${i}`, i])),
  });
  assert.equal(summarizeWorld(exactly30, ["m"]).split("\n").length, 30);
});
