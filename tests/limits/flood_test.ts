/**
 * A flood of concurrent requests (issue #7): thousands of decisions, content generations and barks in flight
 * at once; at shutdown every one of them is answered exactly once. That taking them in stays linear (the
 * time per request does not grow) is measured in the slow tier: tests/slow/intake_slow.ts.
 */
import assert from "node:assert/strict";
import { BridgeEngine } from "../../src/composition.ts";
import { flood, PARAMS } from "./flood.ts";
import { withDeadline } from "../helpers/deadline.ts";

const N = 6_000;

Deno.test("6,000 requests in flight: shutdown answers each exactly once", async () => {
  const counts = new Map<number, number>();
  const engine = new BridgeEngine({ maxInFlightRequests: N }, (line) => {
    const id = JSON.parse(line).id;
    if (typeof id === "number") counts.set(id, (counts.get(id) ?? 0) + 1);
  });
  const { lines } = await flood(engine, N);
  for (const line of lines) engine.receive(line);
  assert.equal(engine.inFlight, N - N / 6, "every request but the pings is in flight");
  assert.deepEqual(await engine.call("ping"), {});
  await engine.shutdown();
  assert.equal(counts.size, N);
  assert.ok([...counts.values()].every((n) => n === 1));
});

Deno.test("maxInFlightRequests: past it requests get -32010 busy; ping, list, cancel and shutdown still work", async () => {
  const lines: string[] = [];
  let wake = () => {};
  const engine = new BridgeEngine({ maxInFlightRequests: 100 }, (line) => {
    lines.push(line);
    wake();
  });
  /** Resolves once `check` holds, checked after each message the engine sends. */
  const until = async (check: () => boolean, what: string) => {
    while (!check()) await withDeadline(new Promise<void>((r) => wake = r), what);
  };
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
  // The running turn and the 39 queued behind it answer -32009 (the last one last).
  await until(() => byId(99).length === 1, "the cancelled turns' answers");
  assert.equal(engine.inFlight, 60);
  send("w2", "world/create", {});
  assert.equal(byId("w2")[0].result.world, "w1");
  await engine.shutdown();
  for (let i = 0; i < 100; i++) assert.equal(byId(i).length, 1, `request ${i}`);
});
