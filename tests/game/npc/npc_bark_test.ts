import assert from "node:assert/strict";
import type { JsonObject } from "../../../src/protocol/json.ts";
import { capture, NpcClient } from "./npc_helpers.ts";

const GORM = { name: "Gorm", role: "the village blacksmith", secrets: ["He deserted."] };

Deno.test("npc/bark runs concurrently with a running talk, on a one-off agent without history or tools", async () => {
  const c = new NpcClient();
  await c.call("world/create", { world: "village", state: { weather: "rain" } });
  await c.call("npc/create", {
    npc: "gorm",
    persona: GORM,
    world: "village",
    options: {
      replyFormat: "text",
      worldContextPaths: ["weather"],
      temperature: 0.5,
      secretsUnlockAtRelationship: null,
    },
    model: capture(
      { text: "[happy] Slow answer.", delayMs: 100 },
      { text: '\n  Gorm: "Rain again. Good for quenching."\nSecond line.' },
    ),
  });
  c.request("npc/talk", { npc: "gorm", line: "Hello" }, 1);
  c.request("npc/bark", { npc: "gorm" }, 2);
  const bark = await c.result(2);
  assert.deepEqual(bark, { npc: "gorm", line: "Rain again. Good for quenching." });
  assert.equal(c.messages.some((m) => m.id === 1), false, "the bark answered while the talk was running");
  assert.equal((await c.result(1)).line, "Slow answer.");
  const req = c.model.requests[1];
  assert.equal(
    req.prompt,
    "Game state:\nweather: rain\nSituation: An ordinary moment.\nPlayer: (The player says nothing.)",
  );
  assert.deepEqual([req.tools, req.history, req.toolCallingMode], [[], [], "disallowed"]);
  assert.deepEqual(req.options, { temperature: 0.5, maximumResponseTokens: 48 });
  assert.match(req.instructions!, /Answer in one short sentence\./);
  assert.doesNotMatch(req.instructions!, /deserted|square brackets|Memory/);
  assert.equal(((await c.call("npc/list")).npcs as JsonObject[])[0].turnCount, 1, "barks leave no history");
  await c.close();
});

Deno.test("npc/bark: situation as JSON; errors are returned as they are; an empty bark fails", async () => {
  const c = new NpcClient();
  await c.call("npc/create", {
    npc: "gorm",
    persona: GORM,
    options: { barkMaximumTokens: 20 },
    model: capture({ text: "[annoyed] Orcs again." }, { error: "guardrail_violation", message: "No." }, {
      text: " \n ",
    }),
  });
  assert.deepEqual(await c.call("npc/bark", { npc: "gorm", situation: { orcs: 3 } }), {
    npc: "gorm",
    line: "Orcs again.",
  });
  assert.equal(c.model.requests[0].prompt, 'Situation: {"orcs":3}\nPlayer: (The player says nothing.)');
  assert.equal(c.model.requests[0].options.maximumResponseTokens, 20);
  assert.deepEqual(await c.error("npc/bark", { npc: "gorm" }), {
    code: -32002,
    message: "No.",
    data: { code: "guardrail_violation" },
  });
  assert.deepEqual(await c.error("npc/bark", { npc: "gorm" }), {
    code: -32012,
    message: "The model produced an empty bark.",
    data: { code: "generation_failed" },
  });
  assert.equal((await c.error("npc/bark", { npc: "nobody" })).code, -32050);
  await c.close();
});

Deno.test("npc/delete cancels a running bark and the NPC's turns", async () => {
  const c = new NpcClient();
  await c.call("npc/create", {
    npc: "gorm",
    persona: GORM,
    model: capture({ text: "late", delayMs: 5000 }, { text: "late", delayMs: 5000 }),
  });
  c.request("npc/talk", { npc: "gorm", line: "hi" }, 1);
  c.request("npc/bark", { npc: "gorm" }, 2);
  assert.deepEqual(await c.call("npc/delete", { npc: "gorm" }), { npc: "gorm", deleted: true });
  assert.equal(((await c.response(1)).error as JsonObject).code, -32009);
  assert.equal(((await c.response(2)).error as JsonObject).code, -32009);
  await c.close();
});
