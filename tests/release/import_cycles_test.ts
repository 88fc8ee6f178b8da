/**
 * No import cycles under src/ (issue 16, item 12): the engine core knows no method set and no model backend;
 * method sets, the game and the models import the engine, never the reverse.
 */
import assert from "node:assert/strict";
import { cycles, folderGraph, importGraph, unexpectedCycles } from "../../scripts/import_cycles.ts";

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

Deno.test("folder graph: files of one folder collapse into one node; a cross-folder circle is a cycle", () => {
  const graph = new Map([
    ["src/protocol/transcript.ts", ["src/util/ids.ts", "src/protocol/json.ts"]],
    ["src/protocol/json.ts", []],
    ["src/util/ids.ts", []],
    ["src/util/sleep.ts", ["src/protocol/errors.ts"]],
    ["src/composition.ts", ["src/util/ids.ts"]],
  ]);
  assert.deepEqual(
    folderGraph(graph),
    new Map([
      ["src/protocol", ["src/util"]],
      ["src/util", ["src/protocol"]],
      ["src/composition.ts", ["src/util"]],
    ]),
  );
  assert.deepEqual(cycles(folderGraph(graph)), [["src/protocol", "src/util"]]);
});

Deno.test("the top folders of src/ import each other without a cycle (protocol/ and util/ included)", async () => {
  assert.deepEqual(cycles(folderGraph(await importGraph(ROOT))), []);
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
