/**
 * The last visit's label: the time alone on the same day, the date and time on another, an older page's
 * time-only value as it is.
 */
import assert from "node:assert/strict";
import { lastVisitLabel, seenNow, visitTime } from "../../../src/serve/playground/page/last_visit.ts";

const seen = new Date(2026, 2, 1, 9, 49, 51); // 1 March 2026, 9:49:51 local time

Deno.test("visitTime: the time alone on the day it was seen, up to its last second", () => {
  assert.equal(visitTime(seenNow(seen), new Date(2026, 2, 1, 23, 59, 59)), seen.toLocaleTimeString());
});

Deno.test("visitTime: the date too on another day (the next one, the same day of another month or year)", () => {
  for (const now of [new Date(2026, 2, 2, 0, 0, 0), new Date(2026, 3, 1, 9, 49, 51), new Date(2027, 2, 1)]) {
    const label = visitTime(seenNow(seen), now);
    assert.match(label, /2026/);
    assert.equal(label, seen.toLocaleString(undefined, { dateStyle: "medium", timeStyle: "medium" }));
  }
});

Deno.test("visitTime: an older page's time alone is shown as it is; anything else is empty", () => {
  assert.equal(visitTime("9:49:51 AM", seen), "9:49:51 AM");
  assert.equal(visitTime(undefined, seen), "");
  assert.equal(visitTime(42, seen), "");
});

Deno.test("lastVisitLabel: the persona's name (NPC without one) and when; empty without a state", () => {
  const savedAt = seenNow(seen);
  assert.equal(
    lastVisitLabel({ npc: "mira", state: { persona: { name: "Mira" } }, savedAt }, seen),
    `Mira, ${seen.toLocaleTimeString()}`,
  );
  assert.equal(lastVisitLabel({ state: {} }, seen), "NPC");
  assert.doesNotMatch(lastVisitLabel({ state: { persona: { name: "Mira" } }, savedAt }, seen), /2026/);
  assert.equal(lastVisitLabel(null, seen), "");
});
