/**
 * Memory stays bounded when the client stops reading stdout: the stdio transport stops reading stdin while
 * more than its high-water mark of output waits. The test spawns the real process, pipes in thousands of
 * requests with 1 MB responses (400 MB of output) without reading stdout, samples the process's
 * RSS from /proc, then reads everything and checks every response arrived exactly once. Slow tier (about
 * 10 s, and its stall detection waits on the clock).
 */
import assert from "node:assert/strict";
import { BridgeProcess } from "../helpers/process.ts";

const REQUESTS = 400;
const BLOB = 1_000_000;
/** RSS ceiling while the client does not read (the high-water mark is 32 MB of queued output). */
const RSS_LIMIT_MB = 300;
/** Padding (an ignored param) so the input outgrows the pipe buffer and the writer must stall. */
const PAD = "p".repeat(2000);

Deno.test({
  name: "a client that stops reading stdout: RSS stays bounded, then every response arrives once",
  ignore: Deno.build.os !== "linux",
  fn: async () => {
    const p = new BridgeProcess([], { paused: true });
    try {
      const encoder = new TextEncoder();
      await p.request("w", "world/create", { world: "big", state: { blob: "x".repeat(BLOB) } });
      let baseline = 0;
      let peak = 0;
      const sample = () => {
        const kb = p.rssKb();
        if (kb !== null) peak = Math.max(peak, kb);
        return kb ?? 0;
      };
      baseline = sample();
      let written = 0;
      let lastProgress = Date.now();
      const writing = (async () => {
        // 50 requests per write: each chunk the bridge reads holds many requests.
        for (let i = 0; i < REQUESTS; i += 50) {
          let text = "";
          for (let k = i; k < Math.min(REQUESTS, i + 50); k++) {
            text +=
              `{"jsonrpc":"2.0","id":${k},"method":"world/snapshot","params":{"world":"big","pad":"${PAD}"}}\n`;
          }
          await p.write(encoder.encode(text));
          written = Math.min(REQUESTS, i + 50);
          lastProgress = Date.now();
        }
      })();
      // Sample until the writer has been stuck for a second (the bridge stopped reading) or wrote all.
      const curve: number[] = [];
      while (written < REQUESTS && Date.now() - lastProgress < 1500) {
        await new Promise((r) => setTimeout(r, 100));
        curve.push(Math.round(sample() / 1024));
      }
      for (let i = 0; i < 10; i++) {
        await new Promise((r) => setTimeout(r, 100));
        curve.push(Math.round(sample() / 1024));
      }
      const stalledAt = written;
      // deno-lint-ignore no-console -- the measurement is part of the report
      console.error(
        `backpressure: baseline ${Math.round(baseline / 1024)} MB, peak ${Math.round(peak / 1024)} MB, ` +
          `writer stalled after ${stalledAt}/${REQUESTS} requests; RSS curve (MB): ${curve.join(" ")}`,
      );
      assert.ok(stalledAt < REQUESTS, "the bridge kept reading although nobody read its output");
      assert.ok(peak / 1024 < RSS_LIMIT_MB, `RSS peaked at ${Math.round(peak / 1024)} MB`);
      // Resume reading: everything arrives, each response once.
      p.startReading();
      await writing;
      await p.until(
        () => p.messages.length >= REQUESTS + 1,
        60_000,
        `${REQUESTS} responses (have ${p.messages.length})`,
      );
      const seen = new Map<unknown, number>();
      for (const m of p.messages) seen.set(m.id, (seen.get(m.id) ?? 0) + 1);
      for (let k = 0; k < REQUESTS; k++) assert.equal(seen.get(k), 1, `response ${k}`);
      const last = p.messages[p.messages.length - 1];
      assert.equal((last.result as Record<string, Record<string, string>>).state.blob.length, BLOB);
      await p.closeInput();
      assert.equal(await p.exit(20_000), 0);
    } finally {
      await p.kill();
    }
  },
});
