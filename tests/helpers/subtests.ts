/**
 * Running some tests of another test file in a child `deno test`, for tests about what the suite prints (an
 * error a passing test must not leave in `deno task test`'s output): the child's stdout and stderr as one text,
 * after asserting that it passed and ran `passed` tests.
 *
 * ```ts
 * import { runSubtests } from "./subtests.ts";
 * const text = await runSubtests(new URL("../cli/models_test.ts", import.meta.url), {
 *   filter: "/^models: an interrupted download/",
 *   passed: 1,
 * });
 * text.includes("Error: server closed"); // false
 * ```
 */
import assert from "node:assert/strict";
import { DEADLINE_MS } from "./deadline.ts";

/** Which tests of the file to run (`deno test --filter`) and how many must pass. */
export interface SubtestRun {
  /** A test name, or a `/regexp/` as `deno test --filter` takes it. */
  filter: string;
  /** How many tests the filter selects (the run must say "ok | <passed> passed"); by default at least one. */
  passed?: number;
}

/** Runs the tests of `file` that `run.filter` selects, without type-checking, and returns what they printed. */
export async function runSubtests(file: URL, run: SubtestRun): Promise<string> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["test", "--allow-all", "--no-check", "--filter", run.filter, file.pathname],
    stdin: "null",
    env: { NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(DEADLINE_MS * 6),
  }).output();
  const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
  assert.equal(out.code, 0, text);
  const count = run.passed === undefined ? "[1-9][0-9]*" : String(run.passed);
  assert.match(text, new RegExp(`ok \\| ${count} passed\\b`), text);
  return text;
}
