import assert from "node:assert/strict";
import type { JsonObject } from "../../../src/protocol/json.ts";
import { segmentsText } from "../../../src/protocol/transcript.ts";
import { summaryRequest } from "../../../src/game/npc/instructions.ts";
import { capture, captureWithContext, NpcClient, reply } from "./npc_helpers.ts";

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
  // The save keeps the summary and the turns after the summarized ones.
  const state = (await c.result(4)).state as JsonObject;
  assert.deepEqual(state.memory, { facts: [], relationship: 0, summary: "They met three times." });
  const entries = ((state.transcript as JsonObject).transcript as JsonObject).entries as JsonObject[];
  assert.deepEqual(entries.map((e) => e.role), ["instructions", "user", "response"]);
  const reqs = c.model.requests;
  assert.equal(reqs.length, 5);
  // The summary is asked as the next message of the conversation: same instructions and tools, the whole
  // history, then the request (a prompt cache covers everything before it).
  const [, second, summarizer, third, summarizer2] = reqs;
  assert.equal(summarizer.instructions, reqs[0].instructions);
  assert.deepEqual(summarizer.tools, second.tools);
  assert.deepEqual(summarizer.history.map((e) => e.role), ["user", "response", "user", "response"]);
  assert.equal(summarizer.prompt, summaryRequest("Gorm"));
  assert.match(summarizer.prompt, /^\(Out of character: the game is saving Gorm's memory/);
  assert.equal(summarizer.toolCallingMode, "disallowed");
  // The summarized turn stays in the prompt (the context has room): the next turn just appends.
  assert.equal(third.instructions, reqs[0].instructions);
  assert.equal(third.history.length, 4);
  assert.equal(third.prompt, "Player: Three?");
  assert.equal(summarizer2.history.length, 6);
  const list = ((await c.call("npc/list")).npcs as JsonObject[])[0];
  assert.deepEqual([list.turnCount, list.busy, list.pendingOperations], [1, false, 0]);
  await c.close();
});

Deno.test("background compaction: summarized turns leave the prompt at once when the context needs the room; the summary takes their place", async () => {
  const c = new NpcClient();
  // A 1,400-token context: 376 tokens after the answer's 1,024, of which 60% (≈ 675 characters) for the
  // prompt before summarized turns must go.
  const long = "x".repeat(150);
  await c.call("npc/create", {
    npc: "gorm",
    persona: GORM,
    options: { replyFormat: "text", compactAfterTurns: 3, keepRecentTurns: 1 },
    model: captureWithContext(
      1400,
      { text: `[happy] One ${long}` },
      { text: `[happy] Two ${long}` },
      { text: `[happy] Three ${long}` },
      { text: "They met three times." },
      { text: "[happy] Four." },
      { text: "[happy] Five." },
      { text: "They met five times." },
    ),
  });
  for (const line of ["1", "2", "3", "4", "5"]) await c.result(c.request("npc/talk", { npc: "gorm", line }));
  const reqs = c.model.requests;
  const [, , , summary, fourth, fifth] = reqs;
  assert.equal(summary.prompt, summaryRequest("Gorm"));
  // Turn 4: the two summarized turns left, the summary came in with the newest prompt.
  assert.deepEqual(fourth.history.map((e) => segmentsText(e.contents).slice(0, 10)), [
    "Player: 3",
    `[happy] Th`,
  ]);
  assert.equal(
    fourth.prompt,
    "Memory:\n- Your earlier conversations with the player: They met three times.\nPlayer: 4",
  );
  // Turn 5 appends again; the instructions never changed.
  assert.equal(fifth.history.length, 4);
  assert.equal(fifth.prompt, "Player: 5");
  for (const r of reqs) assert.equal(r.instructions, reqs[0].instructions);
  // Turns 3 to 5 reached compactAfterTurns again: a second summary; the save keeps the newest turn.
  assert.equal(reqs[6].prompt, summaryRequest("Gorm"));
  assert.equal(reqs[6].history.length, 6);
  const state = (await c.call("npc/state", { npc: "gorm" })).state as JsonObject;
  assert.deepEqual(state.memory, { facts: [], relationship: 0, summary: "They met five times." });
  const entries = ((state.transcript as JsonObject).transcript as JsonObject).entries as JsonObject[];
  assert.deepEqual(entries.map((e) => e.role), ["instructions", "user", "response"]);
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
