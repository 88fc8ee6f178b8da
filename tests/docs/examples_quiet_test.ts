/**
 * The JSDoc examples print what they show (a typewriter line, a world change, a logger's warning), and in
 * `deno task test` that output came out as "post-test output" blocks, one without a newline run into the next
 * test's name, and a `[oam stdio] warning: …` line that reads as a problem of the suite. tests/docs/examples_test.ts
 * keeps an example's output and shows it only when the example fails.
 */
import assert from "node:assert/strict";

Deno.test("doc examples: a passing example's output stays out of the test run's output", async () => {
  const out = await new Deno.Command(Deno.execPath(), {
    args: [
      "test",
      "--allow-all",
      "--no-check",
      "--filter",
      "/^(mod\\.ts#|src\\/util\\/logger\\.ts#|src\\/game\\/world\\/world_state\\.ts#)/",
      new URL("./examples_test.ts", import.meta.url).pathname,
    ],
    env: { NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(60_000),
  }).output();
  const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
  assert.equal(out.code, 0, text);
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
