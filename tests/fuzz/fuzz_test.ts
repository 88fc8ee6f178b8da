/**
 * The short CI fuzz runs (issue #7): 3,000 seeded adversarial lines against an in-process engine (fed
 * through the stdio LineSplitter) and 1,000 against the real `deno run cli.ts stdio` process, with every
 * invariant of tests/fuzz/fuzz_harness.ts checked after each line. Long runs: scripts/fuzz.ts; the rate of
 * the in-process run is checked in tests/slow/intake_slow.ts.
 */
import assert from "node:assert/strict";
import { type FuzzReport, runFuzz } from "./fuzz_harness.ts";
import { InProcessTarget, ProcessTarget } from "./fuzz_target.ts";
import { Rng } from "./rng.ts";

const MAX_LINE = 256 * 1024;

function summary(r: FuzzReport): string {
  return `seed ${r.seed}: ${r.lines} lines in ${r.seconds.toFixed(2)} s (${r.linesPerSecond}/s), ` +
    `${r.responses} responses, ${r.toolCalls} tool calls, ${r.notifications} notifications`;
}

Deno.test("fuzz in-process: 3,000 adversarial lines, every invariant after every line", async () => {
  const seed = 20260701;
  const target = new InProcessTarget(new Rng(seed + 1), MAX_LINE, { toolTimeoutSeconds: 1 });
  const report = await runFuzz({ seed, lines: 3000, target, maxLineBytes: MAX_LINE, checkEvery: 250 });
  // deno-lint-ignore no-console -- the rate is part of the report
  console.error(summary(report));
  assert.deepEqual(report.findings, []);
  assert.deepEqual(report.untabledMethods, []);
  assert.equal(report.lines, 3000);
  // The campaign exercised what it is meant to: every category, running turns with client tools.
  assert.ok(Object.keys(report.categories).length >= 17, JSON.stringify(report.categories));
  assert.ok(report.toolCalls > 20 && report.notifications > 50, summary(report));
});

Deno.test("fuzz through the real process: 1,000 lines, exit 0, no error logged", async () => {
  const seed = 4242;
  const target = new ProcessTarget([
    "--max-line-bytes",
    String(MAX_LINE),
    "--tool-timeout",
    "1",
    "--log-level",
    "warning",
  ]);
  const report = await runFuzz({ seed, lines: 1000, target, maxLineBytes: MAX_LINE, checkEvery: 250 });
  // deno-lint-ignore no-console -- the rate is part of the report
  console.error(summary(report));
  assert.deepEqual(report.findings, []);
  assert.equal(report.exitCode, 0);
  assert.ok(
    target.logs.some((l) => l.startsWith("[oam stdio] warning: Ignoring a response")),
    "stray replies logged",
  );
});
