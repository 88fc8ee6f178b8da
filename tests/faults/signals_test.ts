/**
 * SIGTERM and SIGINT (issue #7): the bridge stops reading, answers every request in flight (cancelled
 * turns get -32009, a pending tool/call is failed), flushes and exits 0 within a few seconds — also when
 * a turn would run for a minute and when the client has stopped reading stdout.
 */
import assert from "node:assert/strict";
import { BridgeProcess } from "../helpers/process.ts";

const CANCELLED = { code: -32009, message: "The turn was cancelled.", data: { code: "cancelled" } };

for (const signal of ["SIGTERM", "SIGINT"] as const) {
  Deno.test({
    name: `${signal}: in-flight turns are answered (cancelled), exit 0`,
    ignore: Deno.build.os === "windows",
    fn: async () => {
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
          session: "slow",
          model: { type: "scripted", steps: [{ text: "finally", delayMs: 60_000 }] },
        });
        await p.request(3, "session/respond", { session: "tool", prompt: "look", stream: true });
        await p.request(4, "session/respond", { session: "slow", prompt: "wait" });
        await p.request(5, "npc/create", { npc: "n", persona: { name: "N" }, model: "scripted" });
        const call = await p.toolCall(1);
        await p.response(5);
        p.child.kill(signal);
        // A 60 s turn is running: exiting within the deadline shows it was cancelled, not waited for (the
        // 3 s bound is timed in tests/slow/timing_slow.ts).
        assert.equal(await p.exit(), 0);
        assert.deepEqual((await p.response(3)).error, CANCELLED);
        assert.deepEqual((await p.response(4)).error, CANCELLED);
        // The pending tool/call was withdrawn before the turn's response.
        const cancel = p.messages.find((m) => m.method === "tool/cancel")!;
        assert.deepEqual(cancel.params, {
          session: "tool",
          requestId: 3,
          id: call.id,
          callId: (call.params as Record<string, Record<string, string>>).call.id,
          reason: "Error: The turn was cancelled.",
        });
        assert.ok(p.messages.indexOf(cancel) < p.messages.findIndex((m) => m.id === 3 && !("method" in m)));
        assert.equal(p.stderr, "");
      } finally {
        await p.kill();
      }
    },
  });
}

Deno.test({
  name: "SIGTERM on an idle bridge: exit 0 at once, nothing written",
  ignore: Deno.build.os === "windows",
  fn: async () => {
    const p = new BridgeProcess();
    try {
      await p.request(1, "ping");
      await p.response(1);
      p.child.kill("SIGTERM");
      assert.equal(await p.exit(5000), 0);
      assert.deepEqual(p.lines, ['{"jsonrpc":"2.0","id":1,"result":{}}']);
    } finally {
      await p.kill();
    }
  },
});
