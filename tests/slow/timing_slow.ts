/**
 * Slow tier (`deno task test:slow`): the wall-clock bounds the protocol promises — shutdown's ~2 s grace,
 * the EOF and flush graces of the stdio transport, how fast the real process exits after SIGTERM, end of
 * input or `shutdown`, and the demo's run time. The unit suite checks the same behaviour (what is answered,
 * in which order, the exit code) with deadlines that only catch hangs; these tests time it. Run them on a
 * quiet machine: they compare against the clock.
 */
import assert from "node:assert/strict";
import { scripted, WireClient } from "../helpers/wire.ts";
import { BridgeEngine } from "../../src/composition.ts";
import type { BridgeExtension } from "../../src/engine/extension.ts";
import type { JsonObject } from "../../src/protocol/json.ts";
import { createStdioServer } from "../../src/transports/stdio.ts";
import { BridgeProcess } from "../helpers/process.ts";
import { req, server } from "../faults/stdio_server.ts";
import { oam } from "../cli/cli_helper.ts";

/** Milliseconds since `started`. */
const since = (started: number) => Math.round(performance.now() - started);

Deno.test("shutdown with only cancellable work answers well before the 2 s grace (< 1.5 s)", async () => {
  const c = new WireClient();
  await c.call("session/create", { session: "A", model: scripted({ text: "x", delayMs: 60_000 }) });
  await c.call("session/create", {
    session: "B",
    tools: [{ name: "t", description: "T." }],
    model: scripted({ toolCalls: [{ name: "t" }] }, { text: "after" }),
  });
  c.request("session/respond", { session: "A", prompt: "wait", stream: true }, 1);
  c.request("session/respond", { session: "B", prompt: "call" }, 2);
  await c.toolCall(1);
  const started = performance.now();
  c.request("shutdown", {}, 9);
  await c.response(9);
  assert.ok(since(started) < 1500, `shutdown took ${since(started)} ms`);
});

Deno.test("shutdown waits about 2 s (1.9–3.5 s) for work that ignores cancellation, then answers", async () => {
  const stuck: BridgeExtension = {
    register(registry) {
      registry.register("stuck/forever", () => new Promise(() => {}));
    },
    shutdown: () => new Promise(() => {}),
  };
  const c = new WireClient({ extensions: [stuck] });
  c.request("stuck/forever", {}, 1);
  const started = performance.now();
  c.request("shutdown", {}, 2);
  await c.response(2, 5000);
  const elapsed = since(started);
  assert.ok(elapsed >= 1900 && elapsed < 3500, `elapsed ${elapsed} ms`);
  assert.deepEqual(c.messages.map((m) => m.id), [2]);
});

Deno.test("an extension whose shutdown never finishes: shutdown answers within the grace (< 2.6 s)", async () => {
  const hanging: BridgeExtension = { register() {}, shutdown: () => new Promise<void>(() => {}) };
  const c = new WireClient({ extensions: [hanging] });
  const started = performance.now();
  c.request("shutdown", {}, 1);
  assert.deepEqual(await c.response(1), { jsonrpc: "2.0", id: 1, result: {} });
  assert.ok(since(started) < 2600, `took ${since(started)} ms`);
});

Deno.test("stdio transport: the EOF grace (200 ms) and the flush grace (300 ms) bound the end (< 3 s)", async () => {
  const eof = server([
    req(1, "session/create", { session: "slow", model: scripted({ text: "late", delayMs: 60_000 }) }),
    req(2, "session/respond", { session: "slow", prompt: "x" }),
  ], { eofGraceMs: 200 });
  let started = performance.now();
  assert.equal(await eof.server.run(), 0);
  assert.ok(since(started) < 3000, `EOF grace: ${since(started)} ms`);

  const lines = [req(1, "world/create", { world: "w", state: { big: "x".repeat(1_000_000) } })];
  for (let i = 2; i < 7; i++) lines.push(req(i, "world/snapshot", { world: "w" }));
  const flush = server(lines, { readOutput: false, flushGraceMs: 300 });
  started = performance.now();
  assert.equal(await flush.server.run(), 0);
  assert.ok(since(started) < 3000, `flush grace: ${since(started)} ms`);
});

Deno.test("stdio transport: stop() ends the EOF grace (< 2.5 s) and a paused flush (< 2 s)", async () => {
  const grace = server([
    req(1, "session/create", { session: "slow", model: scripted({ text: "late", delayMs: 60_000 }) }),
    req(2, "session/respond", { session: "slow", prompt: "x" }),
  ], { eofGraceMs: 60_000 });
  const run = grace.server.run();
  await grace.first;
  let started = performance.now();
  grace.server.stop();
  assert.equal(await run, 0);
  assert.ok(since(started) < 2500, `stop during the EOF grace: ${since(started)} ms`);

  const encoder = new TextEncoder();
  let wrote!: () => void;
  const firstWrite = new Promise<void>((r) => wrote = r);
  const output = new WritableStream<Uint8Array>({
    write: () => {
      wrote();
      return new Promise<void>(() => {});
    },
  });
  const input = new ReadableStream<Uint8Array>({
    start(controller) {
      let text = req(1, "world/create", { world: "w", state: { big: "x".repeat(100_000) } }) + "\n";
      for (let i = 2; i < 200; i++) text += req(i, "world/snapshot", { world: "w" }) + "\n";
      controller.enqueue(encoder.encode(text)); // and the input stays open
    },
  });
  const paused = createStdioServer((send, onShutdown) => new BridgeEngine({ onShutdown }, send), {
    input,
    output,
    maxBufferedOutput: 500_000,
    flushGraceMs: 300,
  });
  const running = paused.run();
  // Its first write comes after the input chunk was split: reading then waits for the output to drain.
  await firstWrite;
  started = performance.now();
  paused.stop();
  assert.equal(await running, 0);
  assert.ok(since(started) < 2000, `stop while paused: ${since(started)} ms`);
});

/** A bridge with a pending tool/call and a turn of `turnMs`. */
async function busyBridge(turnMs = 60_000): Promise<BridgeProcess> {
  const p = new BridgeProcess();
  await p.request(1, "session/create", {
    session: "tool",
    tools: [{ name: "look", description: "Looks." }],
    model: scripted({ toolCalls: [{ name: "look" }] }, { template: "saw {toolOutput}" }),
  });
  await p.request(2, "session/create", {
    session: "slow",
    model: scripted({ text: "late", delayMs: turnMs }),
  });
  await p.request(3, "session/respond", { session: "tool", prompt: "look" });
  await p.request(4, "session/respond", { session: "slow", prompt: "wait" });
  await p.toolCall(1);
  return p;
}

for (const signal of ["SIGTERM", "SIGINT"] as const) {
  Deno.test({
    name: `real process: ${signal} with a 60 s turn and a pending tool/call → exit 0 within 3 s`,
    ignore: Deno.build.os === "windows",
    fn: async () => {
      const p = await busyBridge();
      try {
        const started = performance.now();
        p.child.kill(signal);
        assert.equal(await p.exit(), 0);
        assert.ok(since(started) < 3000, `exit took ${since(started)} ms`);
        assert.equal(((await p.response(4)).error as JsonObject).code, -32009);
      } finally {
        await p.kill();
      }
    },
  });
}

Deno.test("real process: end of input with a pending tool/call and a 300 ms turn → exit 0 within 5 s", async () => {
  // (A turn longer than the 30 s EOF grace would be cancelled after it.)
  const p = await busyBridge(300);
  try {
    const started = performance.now();
    await p.closeInput();
    assert.equal(await p.exit(), 0);
    assert.ok(since(started) < 5000, `exit took ${since(started)} ms`);
  } finally {
    await p.kill();
  }
});

Deno.test("real process: a shutdown request → exit 0 within 5 s (stdin still open)", async () => {
  const p = await busyBridge();
  try {
    const started = performance.now();
    await p.request(9, "shutdown");
    assert.equal(await p.exit(), 0);
    assert.ok(since(started) < 5000, `exit took ${since(started)} ms`);
    assert.deepEqual(p.messages.at(-1), { jsonrpc: "2.0", id: 9, result: {} });
  } finally {
    await p.kill();
  }
});

Deno.test("demo: the tavern scene runs in under 5 s", async () => {
  const started = performance.now();
  const r = await oam(["demo"], { permissions: ["--allow-read", "--allow-env", "--allow-run"] });
  assert.equal(r.code, 0, r.stderr);
  assert.ok(since(started) < 5000, `the demo took ${since(started)} ms`);
});
