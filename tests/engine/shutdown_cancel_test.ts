import assert from "node:assert/strict";
import { scripted, WireClient } from "../helpers/wire.ts";

Deno.test("shutdown sends tool/cancel for a pending client tool call, then the turn's -32009, then {}", async () => {
  const c = new WireClient();
  c.request("session/create", {
    session: "g",
    tools: [{ name: "open_gate", description: "Open a gate." }],
    model: scripted({ toolCalls: [{ name: "open_gate", arguments: { gate: "north" } }] }),
  }, 1);
  c.request("session/respond", { session: "g", prompt: "Open." }, 2);
  await c.toolCall(1);
  c.request("shutdown", undefined, 3);
  await c.response(3);
  const tail = c.messages.slice(c.messages.findIndex((m) => m.method === "tool/call") + 1);
  assert.deepEqual(tail.map(WireClient.kind), ["tool/cancel", "error", "response"]);
  assert.deepEqual(tail[0].params, {
    session: "g",
    requestId: 2,
    id: "t-1",
    callId: (c.messages.find((m) =>
      m.method === "tool/call"
    )!.params as Record<string, Record<string, unknown>>)
      .call.id,
    reason: "Error: The turn was cancelled.",
  });
  assert.equal((tail[1].error as Record<string, unknown>).code, -32009);
  assert.equal(tail[1].id, 2);
  assert.deepEqual(tail[2], { jsonrpc: "2.0", id: 3, result: {} });
});
