/**
 * Saves the game edited or kept for a while: what a hand-edited or outdated `npc/state` restores to, and what
 * the bridge says about it. Nothing in a save may be dropped without a word.
 */
import assert from "node:assert/strict";
import type { JsonObject } from "../../../src/protocol/json.ts";
import { NpcClient, tool } from "./npc_helpers.ts";

const GORM = { name: "Gorm", role: "the village blacksmith" };

async function savedGorm(c: NpcClient, extra: JsonObject = {}): Promise<JsonObject> {
  await c.call("npc/create", {
    npc: "gorm",
    persona: GORM,
    tools: [tool("check_inventory")],
    memory: { facts: ["Aria likes axes."], relationship: 20 },
    model: "scripted",
    ...extra,
  });
  return (await c.call("npc/state", { npc: "gorm" })).state as JsonObject;
}

Deno.test("npc/restore warns about a save's unknown members (a misspelt 'transcript' or 'memory' is not lost silently)", async () => {
  const c = new NpcClient();
  const saved = await savedGorm(c);
  const { memory, transcript, ...rest } = saved;
  const edited = { ...rest, Memory: memory, transcipt: transcript, savedAt: "day 3" };
  const restored = await c.call("npc/restore", { state: edited, npc: "copy", model: "scripted" });
  assert.deepEqual(restored.warnings, [
    "Unknown parameter 'state.Memory' was ignored.",
    "Unknown parameter 'state.transcipt' was ignored.",
    "Unknown parameter 'state.savedAt' was ignored.",
  ]);
  // The whole npc/state result, with the game's own member next to it.
  const wrapped = await c.call("npc/restore", {
    state: { npc: "gorm", state: { ...saved, extra: 1 }, slot: 2 },
    npc: "copy2",
    model: "scripted",
  });
  assert.deepEqual(wrapped.warnings, [
    "Unknown parameter 'state.slot' was ignored.",
    "Unknown parameter 'state.state.extra' was ignored.",
  ]);
  // A save as the bridge wrote it restores without a warning.
  const clean = await c.call("npc/restore", { state: saved, npc: "copy3", model: "scripted" });
  assert.deepEqual(clean.warnings, []);
  await c.close();
});

Deno.test("npc/restore of a save whose groundingTool the game removed: the error names the saved option", async () => {
  const c = new NpcClient();
  const saved = await savedGorm(c, { options: { groundingTool: "check_inventory" } });
  const e = await c.error("npc/restore", {
    state: saved,
    npc: "copy",
    tools: [tool("check_stock")],
    model: "scripted",
  });
  assert.deepEqual([e.code, e.message], [
    -32602,
    "'state.options.groundingTool' names 'check_inventory', which is not one of the NPC's tools: check_stock.",
  ]);
  // Options sent with the restore win, and their error names them.
  const sent = await c.error("npc/restore", {
    state: saved,
    npc: "copy",
    tools: [],
    options: { toolChoice: { tool: "check_stock" } },
    model: "scripted",
  });
  assert.equal(sent.message, "'options.toolChoice' names unknown tool 'check_stock'.");
  const fixed = await c.call("npc/restore", {
    state: saved,
    npc: "copy",
    tools: [tool("check_stock")],
    options: { ...(saved.options as JsonObject), groundingTool: "check_stock" },
    model: "scripted",
  });
  assert.deepEqual(fixed.tools, ["check_stock"]);
  await c.close();
});
