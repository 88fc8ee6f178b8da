/**
 * `npc.restore(save)` replaces an NPC with a save. A save the bridge refuses (edited by hand, from another
 * version) must not cost the game the NPC it had: the error names the field and the NPC is still there, with
 * its conversation, memory, tools and world.
 */
import assert from "node:assert/strict";
import { Bridge, BridgeError, type NpcState, type ScriptStep } from "../../mod.ts";

const reply = (line: string): ScriptStep => ({ json: { emotion: "happy", line, ends_conversation: false } });

Deno.test("npc.restore with a save the bridge refuses rejects naming the field and keeps the NPC as it was", async () => {
  await using bridge = await Bridge.open({ onWarning: () => {} });
  const world = await bridge.createWorld({ player: { gold: 20 } });
  const stock = bridge.tool({
    name: "check_stock",
    description: "How many of an item the shop has.",
    parameters: { type: "object", properties: { item: { type: "string" } }, required: ["item"] },
  }, ({ item }) => ({ item, count: 3 }));
  const gorm = await bridge.createNpc({ name: "Gorm" }, {
    npc: "gorm",
    tools: [stock],
    world,
    memory: { facts: ["Aria likes axes."], relationship: 25 },
    options: { toolChoice: "auto", worldWritable: ["player.gold"], playerOptionCount: 0 },
    model: {
      type: "scripted",
      steps: [
        { toolCalls: [{ name: "check_stock", arguments: { item: "axe" } }] },
        reply("Three axes."),
      ],
    },
  });
  assert.equal((await gorm.talk("Any axes?")).line, "Three axes.");
  const before = await gorm.state();

  const edited = structuredClone(before) as NpcState & { memory: { relationship: number } };
  edited.memory.relationship = 500;
  await assert.rejects(gorm.restore(edited), (e) => {
    assert.ok(e instanceof BridgeError, String(e));
    assert.equal(e.code, -32602);
    assert.match(e.message, /'state\.memory\.relationship' must be at most 100/);
    return true;
  });

  assert.deepEqual((await bridge.listNpcs()).map((n) => n.npc), ["gorm"]);
  assert.deepEqual(await gorm.state(), before, "nothing of the NPC was lost");
  // The model is not saved: the NPC is back on a new one (this script from its first step).
  const next = await gorm.talk("Any axes?");
  assert.equal(next.line, "Three axes.");
  assert.deepEqual(
    next.toolCalls.map((c) => c.output),
    [{ item: "axe", count: 3 }],
    "its client tool still runs",
  );
});
