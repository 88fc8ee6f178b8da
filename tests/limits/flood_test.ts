/**
 * A flood of concurrent requests (issue #7): 25,000 decisions, content generations and barks in flight at
 * once. Taking them in must stay linear — every decision and generation used to add an abort listener to the
 * one engine lifetime signal, and Deno's EventTarget checks the existing listeners one by one, so each new
 * request cost more than the last (100,000 decisions took 92 s to read, the bridge answering nothing
 * meanwhile). At shutdown every one of them is answered exactly once.
 */
import assert from "node:assert/strict";
import { BridgeEngine } from "../../src/composition.ts";

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
  const engine = new BridgeEngine({ maxInFlightRequests: N }, (line) => {
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

Deno.test("maxInFlightRequests: past it requests get -32010 busy; ping, list, cancel and shutdown still work", async () => {
  const lines: string[] = [];
  const engine = new BridgeEngine({ maxInFlightRequests: 100 }, (line) => lines.push(line));
  const byId = (id: number | string) => lines.map((l) => JSON.parse(l)).filter((m) => m.id === id);
  await engine.call("session/create", {
    session: "s",
    model: { type: "scripted", steps: [], fallback: { text: "late", delayMs: 60_000 } },
  });
  for (let i = 0; i < 60; i++) {
    engine.receive(
      JSON.stringify({ jsonrpc: "2.0", id: i, method: "decision/decide", params: PARAMS["decision/decide"] }),
    );
  }
  for (let i = 60; i < 100; i++) {
    engine.receive(
      JSON.stringify({
        jsonrpc: "2.0",
        id: i,
        method: "session/respond",
        params: { session: "s", prompt: "x" },
      }),
    );
  }
  assert.equal(engine.inFlight, 100);
  const send = (id: number | string, method: string, params: unknown = {}) =>
    engine.receive(JSON.stringify({ jsonrpc: "2.0", id, method, params }));
  send("d", "decision/decide", PARAMS["decision/decide"]);
  send("w", "world/create", {});
  assert.deepEqual(byId("d"), [{
    jsonrpc: "2.0",
    id: "d",
    error: {
      code: -32010,
      message:
        "Too many requests are waiting for their response (limit 100); wait for some before sending more.",
      data: { code: "busy", limit: 100 },
    },
  }]);
  assert.equal(byId("w")[0].error.code, -32010);
  send("p", "ping");
  send("l", "session/list");
  send("c", "session/cancel", { session: "s" });
  assert.deepEqual(byId("p")[0].result, {});
  assert.equal(byId("l")[0].result.sessions.length, 1);
  assert.deepEqual(byId("c")[0].result, { session: "s", cancelled: 40 });
  await new Promise((r) => setTimeout(r, 10));
  assert.equal(engine.inFlight, 60);
  send("w2", "world/create", {});
  assert.equal(byId("w2")[0].result.world, "w1");
  await engine.shutdown();
  for (let i = 0; i < 100; i++) assert.equal(byId(i).length, 1, `request ${i}`);
});
