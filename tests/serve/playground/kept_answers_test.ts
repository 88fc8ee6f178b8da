/**
 * Answers typed to a tool call but not sent, kept by persona and tool for the tab: kept, read, taken, and
 * dropped when emptied or when the persona no longer has the tool.
 */
import assert from "node:assert/strict";
import { type AnswerStore, KeptAnswers } from "../../../src/serve/playground/page/kept_answers.ts";

function store(): AnswerStore & { items: Map<string, string> } {
  const items = new Map<string, string>();
  return { items, getItem: (k) => items.get(k) ?? null, setItem: (k, v) => void items.set(k, v) };
}

Deno.test("an answer kept for a persona's tool is read back by a new page on the same storage (a reload)", () => {
  const s = store();
  new KeptAnswers(s).set("mira", "check_stock", '{"stock": 7}');
  const reloaded = new KeptAnswers(s);
  assert.equal(reloaded.get("mira", "check_stock"), '{"stock": 7}');
  assert.equal(reloaded.get("bram", "check_stock"), undefined, "kept per persona");
  assert.deepEqual(reloaded.tools("mira"), ["check_stock"]);
  assert.equal(reloaded.take("mira", "check_stock"), '{"stock": 7}');
  assert.equal(reloaded.get("mira", "check_stock"), undefined, "taken, it is no longer kept");
});

Deno.test("an emptied answer is not kept; a tool the persona no longer has loses its answer", () => {
  const kept = new KeptAnswers(store());
  kept.set("mira", "check_stock", "3");
  kept.set("mira", "weather", "rain");
  kept.set("mira", "weather", "  ");
  assert.deepEqual(kept.tools("mira"), ["check_stock"]);
  kept.set("mira", "weather", "rain");
  kept.prune("mira", ["weather"]);
  assert.deepEqual(kept.tools("mira"), ["weather"]);
});

Deno.test("storage that refuses (full, or off): nothing is kept, nothing throws", () => {
  const kept = new KeptAnswers({
    getItem: () => {
      throw new Error("denied");
    },
    setItem: () => {
      throw new Error("full");
    },
  });
  kept.set("mira", "check_stock", "3");
  assert.equal(kept.get("mira", "check_stock"), undefined);
});

Deno.test("a persona's renamed id takes its answers along; another persona replacing it drops them", () => {
  const kept = new KeptAnswers(store());
  kept.set("mira", "check_stock", "3");
  kept.set("mira", "weather", "rain");
  kept.set("mira-2", "weather", "old");
  kept.rename("mira", "mira-2");
  assert.deepEqual(kept.tools("mira"), []);
  assert.equal(kept.get("mira-2", "check_stock"), "3");
  assert.equal(kept.get("mira-2", "weather"), "rain", "the renamed persona's answer wins");
  kept.rename("nobody", "mira-2");
  assert.deepEqual(kept.tools("mira-2").sort(), ["check_stock", "weather"]);
  kept.drop("mira-2");
  assert.deepEqual(kept.tools("mira-2"), []);
});
