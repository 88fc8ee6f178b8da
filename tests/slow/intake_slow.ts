/**
 * Slow tier (`deno task test:slow`): work that must stay fast as it grows, measured on the clock. The unit
 * suite checks the same code for correctness without timing it.
 *
 * - Intake of 30,000 requests in flight stays linear: every decision and generation used to add an abort
 *   listener to the one engine lifetime signal, and Deno's EventTarget checks the existing listeners one by
 *   one, so each new request cost more than the last (100,000 decisions took 92 s to read, the bridge
 *   answering nothing meanwhile).
 * - Diamond-shaped `$ref` graphs convert in well under 2 s (a converter that expands every path is 2^n).
 * - The in-process fuzz campaign of tests/fuzz/fuzz_test.ts runs its 3,000 lines in under 5 s of CPU.
 *
 * The bounds are on the CPU time this process used, not on the clock: on a loaded machine (CI's 2 cores are
 * shared) the clock also counts the time other processes ran. At a load of 20, 5,000 requests that took
 * 0.5 s of CPU took 5.8 s on the clock, and the fuzz campaign, which waits for each answer, took 12 s for
 * 1.6 s of CPU. The work they measure runs in this process alone (the tier runs its files one at a time).
 */
import assert from "node:assert/strict";
import process from "node:process";
import { BridgeEngine } from "../../src/composition.ts";
import { convertSchema, SchemaError } from "../../src/schema/convert.ts";
import { flood } from "../limits/flood.ts";
import { diamonds } from "../schema/diamonds.ts";
import { runFuzz } from "../fuzz/fuzz_harness.ts";
import { InProcessTarget } from "../fuzz/fuzz_target.ts";
import { Rng } from "../fuzz/rng.ts";

/** Milliseconds of CPU this process has used so far (user and system, all its threads). */
function cpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

Deno.test("30,000 requests: intake stays linear (the last 5,000 cost about what the first 5,000 did)", async () => {
  const N = 30_000;
  const counts = new Map<number, number>();
  const engine = new BridgeEngine({ maxInFlightRequests: N }, (line) => {
    const id = JSON.parse(line).id;
    if (typeof id === "number") counts.set(id, (counts.get(id) ?? 0) + 1);
  });
  const { lines } = await flood(engine, N);
  const batch = (from: number, to: number) => {
    const start = cpuMs();
    for (let i = from; i < to; i++) engine.receive(lines[i]);
    return cpuMs() - start;
  };
  const first = batch(0, 5000);
  batch(5000, N - 5000);
  const last = batch(N - 5000, N);
  assert.equal(engine.inFlight, N - N / 6);
  // Quadratic intake: 6× and growing.
  assert.ok(last < first * 3 + 100, `first 5,000: ${first.toFixed(0)} ms, last 5,000: ${last.toFixed(0)} ms`);
  await engine.shutdown();
  assert.equal(counts.size, N);
  assert.ok([...counts.values()].every((n) => n === 1));
});

Deno.test("diamond-shaped $ref/allOf graphs convert (or are rejected) in under 2 s of CPU", () => {
  const started = cpuMs();
  for (const [levels, rejected] of [[14, false], [30, true]] as const) {
    const defs = diamonds(levels);
    for (const root of ["all0", "any0", "arr0"]) {
      const schema = { $defs: defs, type: "object", properties: { p: { $ref: `#/$defs/${root}` } } };
      if (rejected) assert.throws(() => convertSchema(schema, "R"), SchemaError);
      else convertSchema(schema, "R");
    }
  }
  const ms = cpuMs() - started;
  assert.ok(ms < 2000, `${ms.toFixed(0)} ms of CPU`);
});

Deno.test("fuzz in-process: 3,000 adversarial lines in under 5 s of CPU", async () => {
  const seed = 20260701;
  const maxLine = 256 * 1024;
  const target = new InProcessTarget(new Rng(seed + 1), maxLine, { toolTimeoutSeconds: 1 });
  const started = cpuMs();
  const report = await runFuzz({ seed, lines: 3000, target, maxLineBytes: maxLine, checkEvery: 250 });
  const seconds = (cpuMs() - started) / 1000;
  assert.deepEqual(report.findings, []);
  assert.ok(seconds < 5, `${seconds.toFixed(2)} s of CPU (${report.seconds.toFixed(1)} s on the clock)`);
});
