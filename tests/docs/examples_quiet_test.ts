/**
 * The JSDoc examples print what they show (a typewriter line, a world change, a logger's warning), and in
 * `deno task test` that output came out as "post-test output" blocks, one without a newline run into the next
 * test's name, and a `[oam stdio] warning: …` line that reads as a problem of the suite. tests/docs/examples_test.ts
 * keeps an example's output and shows it only when the example fails.
 */
import assert from "node:assert/strict";
import { runSubtests } from "../helpers/subtests.ts";

Deno.test("doc examples: a passing example's output stays out of the test run's output", async () => {
  const text = await runSubtests(new URL("./examples_test.ts", import.meta.url), {
    filter: "/^(mod\\.ts#|src\\/util\\/logger\\.ts#|src\\/game\\/world\\/world_state\\.ts#)/",
  });
  assert.match(text, /mod\.ts#\d+-\d+\.ts \.\.\. ok/, text); // the examples ran
  assert.match(text, /src\/util\/logger\.ts#\d+-\d+\.ts \.\.\. ok/, text);
  for (
    const printed of [
      "------- output -------",
      "post-test output",
      "Three ales left!",
      "[oam stdio] warning",
      "player.gold 60 45",
    ]
  ) {
    assert.ok(!text.includes(printed), `'${printed}' in:\n${text}`);
  }
});
