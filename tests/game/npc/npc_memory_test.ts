import assert from "node:assert/strict";
import type { JsonObject } from "../../../src/protocol/json.ts";
import { capture, NpcClient, reply, stableToolCalls } from "./npc_helpers.ts";

const GORM = { name: "Gorm" };

async function memoryOf(c: NpcClient, npc = "gorm"): Promise<JsonObject> {
  return ((await c.call("npc/state", { npc })).state as JsonObject).memory as JsonObject;
}

Deno.test("memory tools: staged during the turn, committed on success; duplicates, blanks, clamps, maxFacts", async () => {
  const c = new NpcClient();
  await c.call("npc/create", {
    npc: "gorm",
    persona: GORM,
    memory: { facts: ["Old fact.", "Older."], relationship: 98 },
    options: { memoryTools: "all", maxFacts: 2, maxRelationshipChange: 5 },
    model: capture(
      {
        toolCalls: [
          { name: "remember_fact", arguments: { fact: "Aria likes axes." } },
          { name: "remember_fact", arguments: { fact: "aria likes AXES" } },
          { name: "remember_fact", arguments: { fact: "  " } },
          { name: "remember_fact", arguments: { fact: "older" } },
          { name: "change_relationship", arguments: { reason: "Gift", delta: 50 } },
        ],
      },
      reply("Thank you.", { emotion: "grateful" }),
      reply("Farewell."),
    ),
  });
  const result = await c.result(
    c.request("npc/talk", { npc: "gorm", line: "My name is Aria. I like axes." }),
  );
  assert.deepEqual(stableToolCalls(result).map((r) => [r.output, r.isError]), [
    ["Remembered.", false],
    ["You already know that.", false],
    ["The fact is empty.", true],
    ["You already know that.", false],
    ["You now feel trusting toward the player (100).", false],
  ]);
  assert.equal(result.relationship, 100);
  assert.deepEqual(await memoryOf(c), { facts: ["Older.", "Aria likes axes."], relationship: 100 });
  const tools = c.model.requests[0].tools;
  const delta = ((tools.find((t) => t.name === "change_relationship")!.jsonSchema.properties as JsonObject)
    .delta) as JsonObject;
  assert.deepEqual([delta.minimum, delta.maximum], [-5, 5]);
  const instructions = c.model.requests[0].instructions!;
  assert.match(
    instructions,
    /call remember_fact\.\n- When the player clearly pleases or offends you, call change_relationship\./,
  );
  // Memory reaches the model in the turn's prompt; the next turn tells what changed (a fact was dropped by
  // maxFacts, so the whole list again).
  assert.equal(
    c.model.requests[0].prompt,
    "Memory:\n- Your attitude toward the player is trusting (98 on a scale from -100 to 100).\n" +
      "- Things you remember: Old fact; Older.\nPlayer: My name is Aria. I like axes.",
  );
  await c.result(c.request("npc/talk", { npc: "gorm", line: "Bye." }));
  const next = c.model.requests[2];
  assert.equal(next.instructions, instructions);
  assert.equal(
    next.prompt,
    "Memory:\n- Your attitude toward the player is trusting (100 on a scale from -100 to 100).\n" +
      "- Things you remember: Older; Aria likes axes.\nPlayer: Bye.",
  );
  await c.close();
});

Deno.test("memory tools: changes survive the automatic text retry but not a fallback, an error or a cancel", async () => {
  const c = new NpcClient();
  await c.call("npc/create", {
    npc: "gorm",
    persona: GORM,
    options: { memoryTools: ["changeRelationship", "rememberFact"] },
    model: capture(
      { toolCalls: [{ name: "remember_fact", arguments: { fact: "A" } }] },
      { toolCalls: [{ name: "change_relationship", arguments: { reason: "r", delta: 3 } }] },
      { error: "refusal" },
      { text: "[happy] Fine." },
      { toolCalls: [{ name: "remember_fact", arguments: { fact: "B" } }] },
      { error: "guardrail_violation" },
      { error: "guardrail_violation" },
      { toolCalls: [{ name: "change_relationship", arguments: { reason: "r", delta: -9 } }] },
      { error: "context_size_exceeded" },
      { toolCalls: [{ name: "remember_fact", arguments: { fact: "C" } }] },
      { text: "never", delayMs: 5000 },
    ),
  });
  const r1 = await c.result(c.request("npc/talk", { npc: "gorm", line: "1" }));
  assert.deepEqual([r1.line, r1.relationship, r1.isFallback], ["Fine.", 3, false]);
  assert.deepEqual(await memoryOf(c), { facts: ["A"], relationship: 3 });
  const r2 = await c.result(c.request("npc/talk", { npc: "gorm", line: "2" }));
  assert.deepEqual([r2.relationship, r2.isFallback], [3, true]);
  assert.equal(stableToolCalls(r2)[0].output, "Remembered.");
  assert.equal((await c.error("npc/talk", { npc: "gorm", line: "3" })).code, -32004);
  const id = c.request("npc/talk", { npc: "gorm", line: "4" });
  await c.model.requested(11);
  assert.deepEqual(await c.call("npc/cancel", { npc: "gorm" }), { npc: "gorm", cancelled: 1 });
  assert.equal(((await c.response(id)).error as JsonObject).code, -32009);
  assert.deepEqual(await memoryOf(c), { facts: ["A"], relationship: 3 });
  assert.equal(((await c.call("npc/list")).npcs as JsonObject[])[0].turnCount, 1);
  await c.close();
});

Deno.test("more facts than maxFacts (create, restore, lowering it with npc/update) is a warning naming both", async () => {
  const c = new NpcClient();
  const facts = ["Aria likes axes.", "Aria owes 5 gold.", "Aria saved the mill."];
  const created = await c.call("npc/create", {
    npc: "gorm",
    persona: GORM,
    memory: { facts },
    options: { maxFacts: 3 },
    model: "scripted",
  });
  assert.deepEqual(created.warnings, []);
  const lowered = await c.call("npc/update", { npc: "gorm", options: { maxFacts: 1 } });
  const over = (memory: string, options: string, max: number) =>
    `'${memory}' holds 3 facts, more than '${options}.maxFacts' (${max}): the model sees all of them until a ` +
    `memory tool next changes the memory in a turn, which drops the oldest ${
      3 - max
    }. Send the facts to keep ` +
    `in npc/update 'memory.facts' to drop the others now.`;
  assert.deepEqual(lowered.warnings, [over("memory", "options", 1)]);
  // The facts stay until a turn changes the memory (the save holds them all).
  const saved = await c.call("npc/state", { npc: "gorm" });
  assert.deepEqual(((saved.state as JsonObject).memory as JsonObject).facts, facts);
  // An update that changes neither the facts nor maxFacts does not repeat it.
  assert.deepEqual((await c.call("npc/update", { npc: "gorm", persona: { role: "smith" } })).warnings, []);
  // More facts sent than maxFacts allows.
  const sent = await c.call("npc/update", { npc: "gorm", options: { maxFacts: 2 }, memory: { facts } });
  assert.deepEqual(sent.warnings, [over("memory", "options", 2)]);
  // A save with more facts than its maxFacts, and one restored with a lower maxFacts.
  const restored = await c.call("npc/restore", { npc: "copy", state: saved, model: "scripted" });
  assert.deepEqual(restored.warnings, [over("state.state.memory", "state.state.options", 1)]);
  const lower = await c.call("npc/restore", {
    npc: "copy2",
    state: saved,
    options: { maxFacts: 2 },
    model: "scripted",
  });
  assert.deepEqual(lower.warnings, [over("state.state.memory", "options", 2)]);
  const fits = await c.call("npc/create", {
    npc: "fits",
    persona: GORM,
    memory: { facts },
    options: { maxFacts: 2 },
    model: "scripted",
  });
  assert.deepEqual(fits.warnings, [over("memory", "options", 2)]);
  await c.close();
});
