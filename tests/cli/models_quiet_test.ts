/**
 * The fake download server of models_test.ts breaks a connection without Deno printing an error with its
 * stack: `deno task test` is the second command a newcomer runs, and an `Error: connection reset` in its
 * output reads as a failure of the suite (the download tests pass).
 */
import assert from "node:assert/strict";
import { runSubtests } from "../helpers/subtests.ts";

Deno.test("models tests: a broken and an interrupted download print no error of the fake server", async () => {
  const text = await runSubtests(new URL("./models_test.ts", import.meta.url), {
    filter: "/^models: (a broken download|an interrupted download)/",
    passed: 2,
  });
  assert.deepEqual(
    text.split("\n").filter((line) => /^\s*(Error|error)\b|\bat Object\.pull\b/.test(line)),
    [],
  );
});
