import assert from "node:assert/strict";
import { GameExtension } from "../../src/game/game_extension.ts";
import { WorldState } from "../../src/game/world/mod.ts";
import { WireClient } from "../helpers/wire.ts";

Deno.test("GameExtension.addWorld shares a host world: world/* sees it and host writes notify subscribers", async () => {
  const game = new GameExtension();
  const c = new WireClient({ extensions: [game] });
  const world = new WorldState({ gold: 5 });
  game.addWorld(world, "main");
  const got = await c.call("world/get", { world: "main", path: "gold" });
  assert.equal(got.value, 5);
  await c.call("world/subscribe", { world: "main", path: "gold" });
  world.set("gold", 7);
  const changed = c.messages.find((m) => m.method === "world/changed");
  assert.deepEqual(changed?.params, {
    world: "main",
    subscription: "sub1",
    path: "gold",
    oldValue: 5,
    newValue: 7,
  });
  assert.throws(() => game.addWorld(new WorldState(), "main"), /already exists/);
  assert.throws(() => game.addWorld(new WorldState(), ""), /printable/);
  await c.close();
});
