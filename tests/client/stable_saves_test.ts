// Golden files: an NPC (or a session) that plays the same script saves the same bytes, in any process and
// after any other conversation the process had.
import assert from "node:assert/strict";
import { Bridge, type JsonObject, type NpcState } from "../../mod.ts";

const STEPS = [
  { text: "[happy] Welcome!" },
  { toolCalls: [{ name: "check_stock", arguments: { item: "ale" } }] },
  { template: "[neutral] We have {toolOutput}." },
];

/** A fresh bridge: an NPC with a client tool plays two turns of STEPS; its save. */
async function playedSave(): Promise<NpcState> {
  await using bridge = await Bridge.open({ onWarning: () => {} });
  const stock = bridge.tool({
    name: "check_stock",
    description: "Stock of an item.",
    parameters: { type: "object", properties: { item: { type: "string" } }, required: ["item"] },
  }, () => ({ ale: 3 }));
  const npc = await bridge.createNpc({ name: "Mira" }, {
    npc: "mira",
    tools: [stock],
    options: { replyFormat: "text", compactAfterTurns: 0 },
    model: { type: "scripted", steps: STEPS },
  });
  await npc.talk("Hello.");
  await npc.talk("Any ale?");
  return await npc.state();
}

function ids(state: NpcState): string[] {
  const out: string[] = [];
  const entries = ((state.transcript as JsonObject).transcript as JsonObject).entries as JsonObject[];
  for (const entry of entries) {
    out.push(String(entry.id));
    for (const segment of (entry.contents ?? []) as JsonObject[]) out.push(String(segment.id));
    for (const call of (entry.toolCalls ?? []) as JsonObject[]) out.push(`call ${call.id}`);
  }
  return out;
}

Deno.test("the same script saves the same transcript ids, however many conversations the process had", async () => {
  const first = await playedSave();
  const second = await playedSave();
  assert.deepEqual(ids(second), ids(first));
  assert.equal(JSON.stringify(second), JSON.stringify(first));
});

Deno.test("ids stay unique in a restored conversation that goes on with the same script", async () => {
  await using bridge = await Bridge.open({ onWarning: () => {} });
  bridge.tool({ name: "check_stock", description: "Stock of an item." }, () => ({ ale: 3 }));
  const restored = await bridge.restoreNpc(await playedSave(), {
    model: { type: "scripted", steps: STEPS.slice(1) },
  });
  await restored.talk("More ale?");
  const all = ids(await restored.state());
  assert.deepEqual(all.filter((id, i) => all.indexOf(id) !== i), []);
});
