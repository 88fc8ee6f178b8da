/**
 * End of input mid-turn (issue #7): what can be answered is answered (a pending tool/call fails at once
 * with an error output the model sees, short turns finish), what cannot is cancelled after the EOF grace
 * (-32009), and the bridge exits 0 within a bound — also when the client never reads its output again.
 */
import assert from "node:assert/strict";
import { BridgeEngine } from "../../src/composition.ts";
import type { JsonObject } from "../../src/protocol/json.ts";
import { createStdioServer } from "../../src/transports/stdio.ts";
import { withDeadline } from "../helpers/deadline.ts";
import { req, server } from "./stdio_server.ts";
import { BridgeProcess } from "../helpers/process.ts";

const CLOSED = "The client closed its input before answering.";

Deno.test("real process: stdin closed while a tool/call waits and a short turn runs; both answered, exit 0", async () => {
  const p = new BridgeProcess();
  try {
    await p.request(1, "session/create", {
      session: "tool",
      tools: [{ name: "look", description: "Looks." }],
      model: {
        type: "scripted",
        steps: [{ toolCalls: [{ name: "look" }] }, { template: "saw {toolOutput}" }],
      },
    });
    await p.request(2, "session/create", {
      session: "short",
      model: { type: "scripted", steps: [{ text: "done", delayMs: 300 }] },
    });
    await p.request(3, "session/respond", { session: "tool", prompt: "look" });
    await p.request(4, "session/respond", { session: "short", prompt: "wait" });
    await p.toolCall(1);
    await p.closeInput();
    // The tool's 120 s timeout is not waited for (the 5 s bound is timed in tests/slow/timing_slow.ts).
    assert.equal(await p.exit(), 0);
    const r3 = (await p.response(3)).result as JsonObject;
    assert.equal(r3.text, `saw Error: ${CLOSED}`);
    const record = (r3.toolCalls as JsonObject[])[0];
    assert.deepEqual([record.output, record.isError], [CLOSED, true]);
    assert.equal(((await p.response(4)).result as JsonObject).text, "done");
    assert.equal(p.messages.filter((m) => m.method === "tool/cancel").length, 0);
    assert.equal(p.stderr, "");
  } finally {
    await p.kill();
  }
});

Deno.test("EOF grace: a turn still running when the grace ends is cancelled (-32009), then the server ends", async () => {
  const { server: s, out } = server([
    req(1, "session/create", {
      session: "slow",
      model: { type: "scripted", steps: [{ text: "late", delayMs: 60_000 }] },
    }),
    req(2, "session/respond", { session: "slow", prompt: "x" }),
  ], { eofGraceMs: 200 });
  // The turn would take 60 s: the deadline fails the test if the grace were not applied.
  assert.equal(await withDeadline(s.run(), "the server to end after the EOF grace"), 0);
  assert.deepEqual(out.map((l) => JSON.parse(l)), [
    { jsonrpc: "2.0", id: 1, result: { session: "slow", warnings: [] } },
    {
      jsonrpc: "2.0",
      id: 2,
      error: { code: -32009, message: "The turn was cancelled.", data: { code: "cancelled" } },
    },
  ]);
});

Deno.test("EOF while the client never reads again: the final flush is bounded", async () => {
  const big = "x".repeat(1_000_000);
  const lines = [req(1, "world/create", { world: "w", state: { big } })];
  for (let i = 2; i < 7; i++) lines.push(req(i, "world/snapshot", { world: "w" }));
  const { server: s, out } = server(lines, { readOutput: false, flushGraceMs: 300 });
  // The output is never read: without the flush bound the server would wait forever.
  assert.equal(await withDeadline(s.run(), "the server to end after the flush grace"), 0);
  assert.equal(out.length, 0);
});

Deno.test("stop() during the EOF grace ends the wait at once", async () => {
  const { server: s, out, first } = server([
    req(1, "session/create", {
      session: "slow",
      model: { type: "scripted", steps: [{ text: "late", delayMs: 60_000 }] },
    }),
    req(2, "session/respond", { session: "slow", prompt: "x" }),
  ], { eofGraceMs: 60_000 });
  const run = s.run();
  await withDeadline(first, "the response to session/create");
  s.stop();
  // The grace is 60 s: the deadline fails the test if stop() did not end it.
  assert.equal(await withDeadline(run, "the server to end after stop()"), 0);
  assert.equal(JSON.parse(out[1]).error.code, -32009);
});

Deno.test("stop() while reading is paused because the client does not read: ends within the flush bound", async () => {
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
  const s = createStdioServer((send, onShutdown) => new BridgeEngine({ onShutdown }, send), {
    input,
    output,
    maxBufferedOutput: 500_000,
    flushGraceMs: 300,
  });
  const run = s.run();
  // The input chunk is split in one go and its first write comes after: by then the output buffer is full
  // and reading waits for it to drain.
  await withDeadline(firstWrite, "the server's first write");
  assert.ok(s.engine.phase === "running");
  s.stop();
  // The output never drains: the deadline fails the test if stop() waited for it.
  assert.equal(await withDeadline(run, "the server to end after stop()"), 0);
  assert.equal(s.engine.phase, "shut_down");
});

Deno.test("shutdown ends run() with 0 after its response, also for an engine built without onShutdown", async () => {
  const out: string[] = [];
  const output = new WritableStream<Uint8Array>({
    write: (chunk) => void out.push(...new TextDecoder().decode(chunk).split("\n").filter((l) => l !== "")),
  });
  const input = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(new TextEncoder().encode(req(1, "shutdown", {}) + "\n")); // the input stays open
    },
  });
  // A host's engine that leaves out the `onShutdown` the server hands it.
  const s = createStdioServer((send) => new BridgeEngine({}, send), { input, output });
  assert.equal(await withDeadline(s.run(), "run() to resolve after the shutdown response"), 0);
  assert.deepEqual(out.map((l) => JSON.parse(l)), [{ jsonrpc: "2.0", id: 1, result: {} }]);
});
