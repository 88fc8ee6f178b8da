import assert from "node:assert/strict";
import type { JsonObject } from "../../../src/protocol/json.ts";
import { capture, NpcClient, reply } from "./npc_helpers.ts";

const GORM = { name: "Gorm" };

Deno.test("background compaction after compactAfterTurns: the next queued request waits for it", async () => {
  const c = new NpcClient();
  await c.call("npc/create", {
    npc: "gorm",
    persona: GORM,
    options: { replyFormat: "text", compactAfterTurns: 2, keepRecentTurns: 1 },
    model: capture(
      { text: "[happy] One." },
      { text: "[happy] Two." },
      { text: "They met twice.", delayMs: 20 },
      { text: "[happy] Three." },
      { text: "  They met three times.  " },
    ),
  });
  // All pipelined: if talk 3 did not wait for the summary, it would take the summary's script step.
  c.request("npc/talk", { npc: "gorm", line: "One?" }, 1);
  c.request("npc/talk", { npc: "gorm", line: "Two?" }, 2);
  c.request("npc/talk", { npc: "gorm", line: "Three?" }, 3);
  c.request("npc/state", { npc: "gorm" }, 4);
  assert.deepEqual(
    await Promise.all([1, 2, 3].map(async (id) => (await c.result(id)).line)),
    ["One.", "Two.", "Three."],
  );
  const state = (await c.result(4)).state as JsonObject;
  assert.deepEqual(state.memory, { facts: [], relationship: 0, summary: "They met three times." });
  const entries = ((state.transcript as JsonObject).transcript as JsonObject).entries as JsonObject[];
  assert.deepEqual(entries.map((e) => e.role), ["instructions", "user", "response"]);
  const reqs = c.model.requests;
  assert.equal(reqs.length, 5);
  const summarizer = reqs[2];
  assert.match(summarizer.instructions!, /^You keep Gorm's memory of talking with the player/);
  assert.equal(
    summarizer.prompt,
    "Conversation to fold into the summary:\nPlayer: Player: One?\nGorm: [happy] One.",
  );
  assert.deepEqual(summarizer.tools, []);
  assert.match(reqs[3].instructions!, /- Your earlier conversations with the player: They met twice\.$/);
  assert.equal(reqs[3].history.length, 2, "only the kept turn is in the history");
  assert.equal(reqs[4].prompt.startsWith("Summary so far:\nThey met twice.\n\nConversation to fold"), true);
  const list = ((await c.call("npc/list")).npcs as JsonObject[])[0];
  assert.deepEqual([list.turnCount, list.busy, list.pendingOperations], [1, false, 0]);
  await c.close();
});

Deno.test("background compaction: failures are swallowed and the conversation stays longer", async () => {
  const c = new NpcClient();
  await c.call("npc/create", {
    npc: "gorm",
    persona: GORM,
    options: { compactAfterTurns: 1, keepRecentTurns: 0 },
    model: capture(
      reply("One."),
      { error: "invalid_request", message: "no summary" },
      reply("Two."),
      { text: "Summary." },
    ),
  });
  assert.equal((await c.result(c.request("npc/talk", { npc: "gorm", line: "1" }))).line, "One.");
  assert.equal((await c.result(c.request("npc/talk", { npc: "gorm", line: "2" }))).line, "Two.");
  const state = (await c.call("npc/state", { npc: "gorm" })).state as JsonObject;
  assert.deepEqual(state.memory, { facts: [], relationship: 0, summary: "Summary." });
  assert.equal(((await c.call("npc/list")).npcs as JsonObject[])[0].turnCount, 0);
  await c.close();
});

Deno.test("background compaction: compactAfterTurns 0 disables it", async () => {
  const c = new NpcClient();
  await c.call("npc/create", {
    npc: "gorm",
    persona: GORM,
    options: { compactAfterTurns: 0 },
    model: capture(reply("One."), reply("Two."), reply("Three.")),
  });
  for (const line of ["1", "2", "3"]) await c.result(c.request("npc/talk", { npc: "gorm", line }));
  assert.equal(c.model.requests.length, 3);
  assert.equal(((await c.call("npc/list")).npcs as JsonObject[])[0].turnCount, 3);
  await c.close();
});
