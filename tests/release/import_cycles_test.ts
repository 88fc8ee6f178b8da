/**
 * No import cycles under src/ (issue 16, item 12): the engine core knows no method set and no model backend;
 * method sets, the game and the models import the engine, never the reverse.
 */
import assert from "node:assert/strict";
import { cycles, importGraph, unexpectedCycles } from "../../scripts/import_cycles.ts";

const ROOT = new URL("../../", import.meta.url);

Deno.test("cycle finder: reports a two-module cycle and a self-import, not a chain", () => {
  const graph = new Map([
    ["a.ts", ["b.ts"]],
    ["b.ts", ["a.ts", "c.ts"]],
    ["c.ts", ["d.ts"]],
    ["d.ts", []],
    ["e.ts", ["e.ts"]],
  ]);
  assert.deepEqual(cycles(graph), [["a.ts", "b.ts"], ["e.ts"]]);
});

Deno.test("src/ has no import cycles, runtime or type-only", async () => {
  const graph = await importGraph(ROOT);
  assert.ok(graph.has("src/composition.ts") && graph.has("src/engine/engine.ts"), "the graph covers src/");
  assert.deepEqual(unexpectedCycles(cycles(graph)), []);
});

Deno.test("the engine core imports no method set, no game code and no model backend", async () => {
  const graph = await importGraph(ROOT);
  const outward = [...graph].filter(([from]) => from.startsWith("src/engine/")).flatMap(([from, to]) =>
    to.filter((t) =>
      /^src\/(methods|game|transports|cli|client|serve)\//.test(t) || t === "src/composition.ts" ||
      /^src\/models\/(?!language_model\.ts|registry\.ts)/.test(t)
    ).map((t) => `${from} → ${t}`)
  );
  assert.deepEqual(outward, []);
});
