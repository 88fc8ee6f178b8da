/**
 * The world size bound (issue #7): a world holds at most 8 MiB of JSON (approximate count, kept up to date
 * on every write); a write past it fails with `-32054 world_error` and changes nothing, over the wire and
 * through an NPC's `update_world_state` tool.
 */
import assert from "node:assert/strict";
import { WorldState } from "../../src/game/world/world_state.ts";
import { jsonWeight, MAX_WORLD_SIZE } from "../../src/game/world/world_size.ts";
import { WorldError } from "../../src/game/world/world_error.ts";
import type { JsonObject, JsonValue } from "../../src/protocol/json.ts";
import { Rng } from "../fuzz/rng.ts";
import { WireClient } from "../helpers/wire.ts";

const LIMIT_MESSAGE = (path: string) =>
  `Writing ${path} would make the world larger than its limit of ${MAX_WORLD_SIZE} bytes of JSON.`;

Deno.test("the size is kept exactly in step with the state through 5,000 random set/merge/remove calls", () => {
  const g = new Rng(99);
  const world = new WorldState({ a: { b: [1, "two", null] } }, { maxSize: 1e9 });
  const keys = ["a", "b", "c", "0", "1", "__proto__", "x.y"];
  const value = (depth = 0): JsonValue => {
    switch (g.int(depth > 2 ? 4 : 6)) {
      case 0:
        return null;
      case 1:
        return g.int(1000);
      case 2:
        return g.word(12);
      case 3:
        return g.chance(0.5);
      case 4:
        return [value(depth + 1), value(depth + 1)];
      default: {
        const o: JsonObject = {};
        for (let i = g.int(3); i > 0; i--) {
          Object.defineProperty(o, g.pick(keys), {
            value: value(depth + 1),
            enumerable: true,
            writable: true,
            configurable: true,
          });
        }
        return o;
      }
    }
  };
  const path = () => {
    const n = g.int(4);
    const out: string[] = [];
    for (let i = 0; i < n; i++) out.push(g.pick(["a", "b", "0", "1", "2", "__proto__", "c"]));
    return out.join(".");
  };
  for (let i = 0; i < 5000; i++) {
    try {
      const op = g.int(3);
      if (op === 0) world.set(path(), value());
      else if (op === 1) world.merge(path(), value());
      else world.remove(path() || "a");
    } catch (error) {
      assert.ok(error instanceof WorldError, String(error));
    }
    assert.equal(world.size, jsonWeight(world.snapshot()), `after operation ${i}`);
  }
});

Deno.test("a write past maxSize throws and changes nothing; removing makes room again", () => {
  const world = new WorldState({}, { maxSize: 100 });
  world.set("a", "x".repeat(50));
  const before = world.snapshot();
  const version = world.version;
  assert.throws(() => world.set("b.c", "y".repeat(50)), (e: unknown) => {
    assert.ok(e instanceof WorldError);
    assert.equal(e.message, "Writing 'b.c' would make the world larger than its limit of 100 bytes of JSON.");
    assert.equal(e.path, "b.c");
    return true;
  });
  assert.throws(() => world.merge("", { b: "y".repeat(50) }), /larger than its limit of 100 bytes/);
  assert.throws(() => world.set("", { z: "y".repeat(200) }), /^WorldError: Writing the root would/);
  assert.deepEqual(world.snapshot(), before);
  assert.equal(world.version, version);
  world.set("a", "short"); // shrinking is always allowed
  world.set("b.c", "y".repeat(50));
  world.remove("b");
  world.merge("", { a: null });
  assert.equal(world.size, 2);
  assert.throws(() => new WorldState({ big: "z".repeat(200) }, { maxSize: 100 }), /Writing the root/);
});

Deno.test("over the wire: world/set, world/merge and world/create past 8 MiB answer -32054 world_error", async () => {
  const c = new WireClient();
  const mb3 = "m".repeat(3 * 1024 * 1024);
  await c.call("world/create", { world: "w" });
  await c.call("world/set", { world: "w", path: "a", value: mb3 });
  await c.call("world/set", { world: "w", path: "b", value: mb3 });
  c.request("world/set", { world: "w", path: "c.d", value: mb3 }, 1);
  c.request("world/merge", { world: "w", patch: { c: mb3 } }, 2);
  c.request("world/create", { world: "w2", state: { a: mb3, b: mb3, c: mb3 } }, 3);
  c.request("world/get", { world: "w", path: "c" }, 4);
  const error = (path: string, world: string, message: string) => ({
    code: -32054,
    message,
    data: { code: "world_error", world, path },
  });
  assert.deepEqual((await c.response(1)).error, error("c.d", "w", LIMIT_MESSAGE("'c.d'")));
  assert.deepEqual((await c.response(2)).error, error("", "w", LIMIT_MESSAGE("the root")));
  assert.deepEqual((await c.response(3)).error, error("", "w2", LIMIT_MESSAGE("the root")));
  assert.deepEqual((await c.response(4)).result, {
    world: "w",
    path: "c",
    value: null,
    exists: false,
    version: 2,
  });
  const list = (await c.call("world/list")).worlds as JsonObject[];
  assert.deepEqual(list.map((w) => w.world), ["w"]);
  await c.call("world/remove", { world: "w", path: "a" });
  await c.call("world/set", { world: "w", path: "c.d", value: mb3 });
  await c.close();
});

Deno.test("an NPC's update_world_state past the limit gets an error output; the world is unchanged", async () => {
  const c = new WireClient();
  const mb4 = "m".repeat(4 * 1024 * 1024);
  await c.call("world/create", { world: "w", state: { a: mb4, note: "" } });
  await c.call("npc/create", {
    npc: "n",
    persona: { name: "N" },
    world: "w",
    options: { replyFormat: "text", toolChoice: "auto", worldWritable: [""] },
    model: {
      type: "scripted",
      steps: [
        { toolCalls: [{ name: "update_world_state", arguments: { path: "note", value: mb4 + "!" } }] },
        { text: "[sad] It would not fit." },
      ],
    },
  });
  const r = await c.call("npc/talk", { npc: "n", line: "Write it down." });
  const record = (r.toolCalls as JsonObject[])[0];
  assert.equal(record.isError, true);
  assert.match(record.output as string, /larger than its limit of 8388608 bytes of JSON/);
  assert.equal(r.line, "It would not fit.");
  const snapshot = (await c.call("world/snapshot", { world: "w" })) as JsonObject;
  assert.equal((snapshot.state as JsonObject).note, "");
  assert.equal(snapshot.version, 0);
  await c.close();
});

Deno.test("fan-out: a write whose notifications would pass the byte limit is rejected before it happens", () => {
  const world = new WorldState({ a: "x".repeat(60) }, { maxNotificationBytes: 100 });
  const seen: string[] = [];
  const end = world.observe("a", (c) => seen.push(c.path));
  world.observe("", (c) => seen.push(c.path));
  world.observe("b", (c) => seen.push(c.path)); // unrelated to "a": not counted
  assert.throws(() => world.set("a", "y".repeat(60)), (e: unknown) => {
    assert.ok(e instanceof WorldError);
    assert.equal(
      e.message,
      "Writing 'a' would send about 248 bytes of change notifications to 2 subscriptions, over the limit of " +
        "100 bytes; subscribe to narrower paths or write smaller values.",
    );
    return true;
  });
  assert.throws(() => world.remove("a"), /^WorldError: Removing 'a' would send about 124 bytes/);
  assert.deepEqual(seen, []);
  end(); // one subscription left: 1 × 124 bytes still too much, 1 × 69 fits
  assert.throws(
    () => world.set("a", "y".repeat(60)),
    /about 124 bytes of change notifications to 1 subscriptions/,
  );
  world.set("a", "short");
  world.remove("a");
  assert.deepEqual(seen, ["a", "a"]);
});

Deno.test("fan-out over the wire: 256 root subscriptions × a 300 KB value is refused, 200 KB goes through", async () => {
  const c = new WireClient();
  await c.call("world/create", { world: "w" });
  for (let i = 0; i < 256; i++) await c.call("world/subscribe", { world: "w" });
  c.request("world/set", { world: "w", path: "big", value: "b".repeat(300_000) }, 1);
  const e = (await c.response(1)).error as JsonObject;
  assert.equal(e.code, -32054);
  assert.deepEqual(e.data, { code: "world_error", world: "w", path: "big" });
  assert.match(
    e.message as string,
    /^Writing 'big' would send about 76800512 bytes of change notifications to 256/,
  );
  const start = c.messages.length;
  c.request("world/set", { world: "w", path: "big", value: "b".repeat(200_000) }, 2);
  await c.response(2);
  assert.equal(c.messages.length - start, 257);
  await c.close();
});
