/**
 * The bounded "said once" memory behind llama.cpp's refused-grammar warning (src/models/llama_runtime.ts): a
 * warning is said once per key, and a process told about ever new keys (a game generating schemas) keeps at
 * most its limit of them. Before, the refused schemas were kept in a Set without a limit.
 */
import assert from "node:assert/strict";
import { SaidOnce } from "../../src/util/said_once.ts";

Deno.test("SaidOnce: each key is said once", () => {
  const said = new SaidOnce(4);
  assert.deepEqual(["a", "b", "a", "c", "b"].map((k) => said.first(k)), [true, true, false, true, false]);
  assert.equal(said.size, 3);
});

Deno.test("SaidOnce: it keeps at most its limit of keys, forgetting the one asked about longest ago", () => {
  const said = new SaidOnce(3);
  for (let i = 0; i < 1000; i++) said.first(`schema ${i}`);
  assert.equal(said.size, 3);
  assert.equal(said.first("schema 999"), false, "the latest keys are remembered");
  assert.equal(said.first("schema 0"), true, "the oldest was forgotten, so it is said again");
  assert.equal(said.size, 3);
});

Deno.test("SaidOnce: asking about a remembered key keeps it", () => {
  const said = new SaidOnce(2);
  said.first("a");
  said.first("b");
  said.first("a"); // asked again: now the latest
  said.first("c"); // forgets b, not a
  assert.equal(said.first("a"), false);
  assert.equal(said.first("b"), true);
});
