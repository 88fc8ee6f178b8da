/**
 * The short soak (issue #7): scripts/soak.ts for 30 seconds against the real process — 64 sessions and 128
 * NPCs with pipelined turns, client tools, world writes and recycling, plus decisions, generations and
 * short-lived worlds churning; no response lost or duplicated, only the shared world left, exit 0, RSS flat. Slow tier (`deno task test:slow`); the long run: `deno run -A scripts/soak.ts` (600 s).
 */
import assert from "node:assert/strict";
import { runSoak } from "../../scripts/soak.ts";

Deno.test({
  name: "soak 30 s: 64 sessions + 128 NPCs, nothing lost or duplicated, RSS flat, exit 0",
  ignore: Deno.build.os !== "linux",
  fn: async () => {
    const report = await runSoak({
      seconds: 30,
      sessions: 64,
      npcs: 128,
      sampleSeconds: 2,
      warmupSeconds: 10,
      maxGrowthMb: 60, // the heap still settles in 30 s; the 600 s run is the flatness measurement
    });
    // deno-lint-ignore no-console -- the measurements are part of the report
    console.error(
      `soak: ${report.turns} turns (${report.turnsPerSecond}/s), ${report.requests} requests, ` +
        `${report.recycled} recycles, RSS ${report.rss.startMb} → ${report.rss.endMb} MB ` +
        `(thirds ${report.rss.firstThirdMb} → ${report.rss.lastThirdMb}, peak ${report.rss.peakMb})`,
    );
    assert.deepEqual(report.failures, []);
    assert.equal(report.lost, 0);
    assert.equal(report.duplicates, 0);
    assert.equal(report.responses, report.requests);
    assert.equal(report.exitCode, 0);
    assert.ok(report.turns > 1000, `only ${report.turns} turns`);
  },
});
