/**
 * `npc.bark()` can be given up on like a decision or a generation (the protocol has no cancel for a bark): a
 * `signal` that aborts rejects with `-32009 cancelled`, a `timeoutMs` that passes with `-32024 timeout`, at
 * once; the bridge finishes the bark and its answer is ignored. A game loop that gives up shows no bark.
 */
import assert from "node:assert/strict";
import { Bridge, BridgeError } from "../../mod.ts";

const slow = { type: "scripted" as const, steps: [{ text: "Rain again.", delayMs: 60_000 }] };

Deno.test("npc.bark(situation, {signal}): an abort rejects at once with -32009 cancelled", async () => {
  await using bridge = await Bridge.open();
  const gorm = await bridge.createNpc({ name: "Gorm" }, { model: slow });
  const walkAway = new AbortController();
  const bark = gorm.bark({ weather: "rain" }, { signal: walkAway.signal });
  walkAway.abort();
  await assert.rejects(bark, (e) => e instanceof BridgeError && e.dataCode === "cancelled");
});

Deno.test("npc.bark(undefined, {timeoutMs}): rejects with -32024 timeout; the NPC keeps serving", async () => {
  await using bridge = await Bridge.open();
  const gorm = await bridge.createNpc({ name: "Gorm" }, {
    model: { type: "scripted", steps: [{ text: "Rain again.", delayMs: 60_000 }, { text: "Sun!" }] },
  });
  await assert.rejects(
    gorm.bark(undefined, { timeoutMs: 1 }),
    (e) => e instanceof BridgeError && e.dataCode === "timeout",
  );
  assert.equal((await gorm.state()).npc, gorm.id);
});
