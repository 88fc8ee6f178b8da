/** Engine safety limits over the wire: queued operations per session and client requests waiting for replies. */
import assert from "node:assert/strict";
import { scripted, WireClient } from "../helpers/wire.ts";
import type { JsonObject } from "../../src/protocol/json.ts";

Deno.test("a session's queue is bounded: past maxQueuedOperations requests fail with -32010 busy", async () => {
  const c = new WireClient({ maxQueuedOperations: 2 });
  await c.call("session/create", { session: "q", model: scripted({ text: "slow", delayMs: 60_000 }) });
  c.request("session/respond", { session: "q", prompt: "1" }, 1);
  c.request("session/setContextNote", { session: "q", note: "n" }, 2);
  c.request("session/reset", { session: "q" }, 3);
  c.request("session/respond", { session: "q", prompt: "4" }, 4);
  const busy = {
    code: -32010,
    message:
      "Session 'q' has too many queued operations (limit 2): wait for their answers, or cancel them with session/cancel.",
    data: { code: "busy", session: "q", limit: 2 },
  };
  assert.deepEqual((await c.response(3)).error, busy);
  assert.deepEqual((await c.response(4)).error, busy);
  // immediate operations are not limited
  assert.equal(((await c.call("session/list")).sessions as JsonObject[])[0].pendingOperations, 2);
  assert.deepEqual(await c.call("session/cancel", { session: "q" }), { session: "q", cancelled: 2 });
  await c.response(2);
  await c.close();
});

Deno.test("client requests waiting for replies are bounded: extra calls get an error output, no tool/call", async () => {
  const c = new WireClient({ maxPendingClientRequests: 1 });
  await c.call("session/create", {
    session: "t",
    tools: [{ name: "look", description: "Look." }],
    model: scripted({ toolCalls: [{ name: "look" }, { name: "look" }] }, { template: "{toolOutputs}" }),
  });
  c.request("session/respond", { session: "t", prompt: "x", stream: true }, 1);
  await c.toolCall(1);
  c.reply("t-1", { output: "seen" });
  const r = (await c.response(1)).result as JsonObject;
  assert.equal(c.messages.filter((m) => m.method === "tool/call").length, 1);
  assert.equal(r.text, "seen\nError: Too many tool calls are waiting for the client (limit 1).");
  assert.deepEqual(c.related(1).map(WireClient.kind), [
    "event:modelStep",
    "event:toolCallStarted",
    "tool/call",
    "event:toolCallStarted",
    "event:toolCallCompleted",
    "event:toolCallCompleted",
    "event:modelStep",
    "event:text",
    "event:text",
    "event:text",
    "response",
  ]);
  await c.close();
});
