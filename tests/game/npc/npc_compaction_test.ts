/**
 * NPC compaction (`compactAfterTurns`, `keepRecentTurns`): due after that many turns, it runs when the
 * prompt fills the context (in the background after a turn) or when a save needs it; the summary is asked as
 * the conversation's next message; summarized turns leave the save and `turnCount` at once, and the
 * model's prompt only when the context needs the room, the summary then taking their place.
 */
import assert from "node:assert/strict";
import type { JsonObject } from "../../../src/protocol/json.ts";
import { segmentsText } from "../../../src/protocol/transcript.ts";
import { summaryRequest } from "../../../src/game/npc/instructions.ts";
import { capture, captureWithContext, NpcClient, reply } from "./npc_helpers.ts";

const GORM = { name: "Gorm" };

function savedRoles(state: JsonObject): string[] {
  const entries = ((state.transcript as JsonObject).transcript as JsonObject).entries as JsonObject[];
  return entries.map((e) => e.role as string);
}

async function turnCount(c: NpcClient): Promise<number> {
  return ((await c.call("npc/list")).npcs as JsonObject[])[0].turnCount as number;
}

Deno.test("compaction due with room to spare: no summary while talking; a save asks for it as the conversation's next message", async () => {
  const c = new NpcClient();
  await c.call("npc/create", {
    npc: "gorm",
    persona: GORM,
    options: { replyFormat: "text", compactAfterTurns: 2, keepRecentTurns: 1 },
    model: capture(
      { text: "[happy] One." },
      { text: "[happy] Two." },
      { text: "[happy] Three." },
      { text: "  They met three times.  ", delayMs: 20 },
      { text: "[happy] Four." },
    ),
  });
  // Pipelined: the talk after the save waits for the save's summary (else it would take its script step).
  for (const [id, line] of [[1, "One?"], [2, "Two?"], [3, "Three?"]] as const) {
    c.request("npc/talk", { npc: "gorm", line }, id);
  }
  c.request("npc/state", { npc: "gorm" }, 4);
  c.request("npc/talk", { npc: "gorm", line: "Four?" }, 5);
  assert.deepEqual(
    await Promise.all([1, 2, 3, 5].map(async (id) => (await c.result(id)).line)),
    ["One.", "Two.", "Three.", "Four."],
  );
  // The save keeps the summary and the turns after the summarized ones.
  const state = (await c.result(4)).state as JsonObject;
  assert.deepEqual(state.memory, { facts: [], relationship: 0, summary: "They met three times." });
  assert.deepEqual(savedRoles(state), ["instructions", "user", "response"]);
  const [first, , third, summary, fourth] = c.model.requests;
  assert.equal(c.model.requests.length, 5);
  // Turns 1-3 only appended: compaction was due after turn 2, but the context had room.
  assert.deepEqual(third.history.length, 4);
  // The summary request extends the conversation: same instructions and tools, the whole history, then the
  // request (a prompt cache covers everything before it); nothing may be called.
  assert.equal(summary.instructions, first.instructions);
  assert.deepEqual(summary.tools, []);
  assert.equal(summary.history.length, 6);
  assert.equal(summary.prompt, summaryRequest("Gorm"));
  assert.match(summary.prompt, /^\(Out of character: the game is saving Gorm's memory/);
  assert.equal(summary.toolCallingMode, "disallowed");
  // The summarized turns stay in the model's prompt (room to spare): turn 4 just appends again.
  assert.equal(fourth.instructions, first.instructions);
  assert.equal(fourth.history.length, 6);
  assert.equal(fourth.prompt, "Player: Four?");
  assert.equal(await turnCount(c), 2);
  await c.close();
});

Deno.test("compaction when the context fills: summary in the background after the turn; the summarized turns leave at once, the summary takes their place", async () => {
  const c = new NpcClient();
  // A 1,300-token context: 276 tokens after the answer's 1,024. Summaries start past half of that (≈ 414
  // characters of prompt), summarized turns leave past 60% (≈ 497 characters).
  const long = "x".repeat(120);
  await c.call("npc/create", {
    npc: "gorm",
    persona: GORM,
    options: { replyFormat: "text", compactAfterTurns: 3, keepRecentTurns: 1 },
    model: captureWithContext(
      1300,
      { text: `[happy] One ${long}` },
      { text: `[happy] Two ${long}` },
      { text: `[happy] Three ${long}` },
      { text: "They met three times.", delayMs: 20 },
      { text: "[happy] Four." },
      { text: "[happy] Five." },
      { text: "They met five times." },
    ),
  });
  for (const line of ["1", "2", "3", "4", "5"]) {
    c.request("npc/talk", { npc: "gorm", line }, Number(line));
  }
  for (const id of [1, 2, 3, 4, 5]) await c.result(id);
  const state = (await c.call("npc/state", { npc: "gorm" })).state as JsonObject;
  const reqs = c.model.requests;
  assert.equal(reqs.length, 7);
  const [, , , summary, fourth, fifth, again] = reqs;
  // After turn 3 (due, past half the room): the summary, in the background; turn 4 waited for it.
  assert.equal(summary.prompt, summaryRequest("Gorm"));
  assert.equal(summary.history.length, 6);
  // Turn 4: past 60%, the two summarized turns left, and the summary came in with the newest prompt.
  assert.deepEqual(fourth.history.map((e) => segmentsText(e.contents).slice(0, 10)), [
    "Player: 3",
    "[happy] Th",
  ]);
  assert.equal(
    fourth.prompt,
    "Memory:\n- Your earlier conversations with the player: They met three times.\nPlayer: 4",
  );
  // Turn 5 appends again; the instructions never changed.
  assert.equal(fifth.history.length, 4);
  assert.equal(fifth.prompt, "Player: 5");
  for (const r of reqs) assert.equal(r.instructions, reqs[0].instructions);
  // Turns 3-5 are due again and the room is still short: a second summary after turn 5.
  assert.equal(again.prompt, summaryRequest("Gorm"));
  assert.equal(again.history.length, 6);
  assert.deepEqual(state.memory, { facts: [], relationship: 0, summary: "They met five times." });
  assert.deepEqual(savedRoles(state), ["instructions", "user", "response"]);
  assert.equal(await turnCount(c), 1);
  await c.close();
});

Deno.test("compaction: a failed summary is swallowed (the save keeps every turn); the next save tries again", async () => {
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
  const failed = (await c.call("npc/state", { npc: "gorm" })).state as JsonObject;
  assert.deepEqual(failed.memory, { facts: [], relationship: 0 });
  assert.deepEqual(savedRoles(failed), ["instructions", "user", "response"]);
  assert.equal((await c.result(c.request("npc/talk", { npc: "gorm", line: "2" }))).line, "Two.");
  const state = (await c.call("npc/state", { npc: "gorm" })).state as JsonObject;
  assert.deepEqual(state.memory, { facts: [], relationship: 0, summary: "Summary." });
  assert.deepEqual(savedRoles(state), ["instructions"]);
  assert.equal(await turnCount(c), 0);
  // settle: false never waits for a model: the snapshot as it is.
  const quick = (await c.call("npc/state", { npc: "gorm", settle: false })).state as JsonObject;
  assert.deepEqual(quick.memory, state.memory);
  await c.close();
});

Deno.test("compaction: compactAfterTurns 0 disables it, also for saves", async () => {
  const c = new NpcClient();
  await c.call("npc/create", {
    npc: "gorm",
    persona: GORM,
    options: { compactAfterTurns: 0 },
    model: capture(reply("One."), reply("Two."), reply("Three.")),
  });
  for (const line of ["1", "2", "3"]) await c.result(c.request("npc/talk", { npc: "gorm", line }));
  await c.call("npc/state", { npc: "gorm" });
  assert.equal(c.model.requests.length, 3);
  assert.equal(await turnCount(c), 3);
  await c.close();
});
