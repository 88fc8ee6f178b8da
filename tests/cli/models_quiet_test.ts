/**
 * The fake download server of models_test.ts breaks a connection without Deno printing an error with its
 * stack: `deno task test` is the second command a newcomer runs, and an `Error: connection reset` in its
 * output reads as a failure of the suite (the download tests pass).
 */
import assert from "node:assert/strict";

Deno.test("models tests: a broken and an interrupted download print no error of the fake server", async () => {
  const out = await new Deno.Command(Deno.execPath(), {
    args: [
      "test",
      "--allow-all",
      "--no-check",
      "--filter",
      "/^models: (a broken download|an interrupted download)/",
      new URL("./models_test.ts", import.meta.url).pathname,
    ],
    env: { NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(60_000),
  }).output();
  const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
  assert.equal(out.code, 0, text);
  assert.match(text, /ok \| 2 passed/, text); // both tests ran
  assert.deepEqual(
    text.split("\n").filter((line) => /^\s*(Error|error)\b|\bat Object\.pull\b/.test(line)),
    [],
  );
});
