/**
 * A flood of concurrent requests (issue #7): 25,000 decisions, content generations and barks in flight at
 * once. Taking them in must stay linear — every decision and generation used to add an abort listener to the
 * one engine lifetime signal, and Deno's EventTarget checks the existing listeners one by one, so each new
 * request cost more than the last (100,000 decisions took 92 s to read, the bridge answering nothing
 * meanwhile). At shutdown every one of them is answered exactly once.
 */
import assert from "node:assert/strict";
import { BridgeEngine } from "../../src/engine/engine.ts";

const SLOW = { json: { reasoning: "r", choice: "a", confidence: 5, a: "x" }, delayMs: 60_000 };
const MODEL = { type: "scripted", steps: [SLOW] };
const SCHEMA = { type: "object", properties: { a: { type: "string" } } };
const PARAMS: Record<string, unknown> = {
  "decision/decide": { situation: "x", options: ["a", "b"], model: MODEL },
  "content/generate": { prompt: "x", schema: SCHEMA, model: MODEL },
  "npc/bark": { npc: "n" },
  "ping": {},
};
const N = 30_000;
/** Mostly decisions and content generations (which used the engine's signal directly). */
const METHODS = [
  "decision/decide",
  "content/generate",
  "decision/decide",
  "content/generate",
  "npc/bark",
  "ping",
];

Deno.test("30,000 requests: intake stays linear, shutdown answers each in-flight one exactly once", async () => {
  const counts = new Map<number, number>();
  const engine = new BridgeEngine({}, (line) => {
    const id = JSON.parse(line).id;
    if (typeof id === "number") counts.set(id, (counts.get(id) ?? 0) + 1);
  });
  await engine.call("npc/create", {
    npc: "n",
    persona: { name: "N" },
    model: { type: "scripted", steps: [], fallback: { text: "hi", delayMs: 60_000 } },
  });
  const lines = Array.from({ length: N }, (_, i) => {
    const method = METHODS[i % METHODS.length];
    return JSON.stringify({ jsonrpc: "2.0", id: i, method, params: PARAMS[method] });
  });
  const batch = (from: number, to: number) => {
    const start = performance.now();
    for (let i = from; i < to; i++) engine.receive(lines[i]);
    return performance.now() - start;
  };
  const first = batch(0, 5000);
  batch(5000, N - 5000);
  const last = batch(N - 5000, N);
  assert.equal(engine.inFlight, N - N / 6);
  // Linear intake: the last 5,000 cost about what the first 5,000 did (quadratic intake: 6× and growing).
  assert.ok(last < first * 3 + 100, `first 5,000: ${first.toFixed(0)} ms, last 5,000: ${last.toFixed(0)} ms`);
  assert.deepEqual(await engine.call("ping"), {});
  await engine.shutdown();
  assert.equal(counts.size, N);
  assert.ok([...counts.values()].every((n) => n === 1));
});
