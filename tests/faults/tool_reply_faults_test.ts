/**
 * A game engine that answers `tool/call` badly (issue #7), through the real process: never (the timeout
 * sends tool/cancel and the model sees the timeout), twice (the second is ignored and logged), late (after
 * the timeout: ignored and logged), malformed replies, and replies to ids that were never sent.
 */
import assert from "node:assert/strict";
import type { JsonObject } from "../../src/protocol/json.ts";
import { BridgeProcess } from "../helpers/process.ts";

const ignored = (id: string) =>
  `[oam stdio] warning: Ignoring a response to unknown or finished request '${id}'.`;

Deno.test("never, twice, late and malformed tool replies: exact messages, logs, and the bridge keeps serving", async () => {
  const p = new BridgeProcess(["--log-level", "warning"]);
  try {
    await p.request(1, "session/create", {
      session: "g",
      tools: [{ name: "open_gate", description: "Opens a gate.", timeoutSeconds: 0.2 }],
      model: {
        type: "scripted",
        steps: [{ toolCalls: [{ name: "open_gate", arguments: { gate: "north" } }] }, {
          template: "{toolOutput}",
        }],
      },
    });
    // 1. never answered: after 200 ms, tool/cancel; the model sees the timeout.
    await p.request(2, "session/respond", { session: "g", prompt: "open" });
    const call1 = await p.toolCall(1);
    const r2 = await p.response(2);
    const cancel = p.messages.find((m) => m.method === "tool/cancel")!;
    const callId = ((call1.params as JsonObject).call as JsonObject).id;
    assert.deepEqual(cancel.params, {
      session: "g",
      requestId: 2,
      id: "t-1",
      callId,
      reason: "Error: Tool 'open_gate' timed out after 200ms.",
    });
    assert.ok(p.messages.indexOf(cancel) < p.messages.indexOf(r2));
    assert.equal((r2.result as JsonObject).text, "Error: Tool 'open_gate' timed out after 200ms.");
    // 2. late: the reply after the timeout is ignored and logged.
    await p.send({ id: "t-1", result: { output: "opened (too late)" } });
    await p.until(() => p.stderr.includes(ignored("t-1")), 5000, "the late-reply log");

    // 3. twice: the first counts, the second is ignored and logged.
    await p.request(5, "session/create", {
      session: "h",
      tools: [{ name: "look", description: "Looks." }],
      model: { type: "scripted", steps: [{ toolCalls: [{ name: "look" }] }, { template: "{toolOutput}" }] },
    });
    await p.request(6, "session/respond", { session: "h", prompt: "look" });
    const call2 = await p.toolCall(2);
    assert.equal(call2.id, "t-2");
    await p.send({ id: "t-2", result: { output: "first" } });
    await p.send({ id: "t-2", result: { output: "second" } });
    assert.equal(((await p.response(6)).result as JsonObject).text, "first");
    await p.until(() => p.stderr.includes(ignored("t-2")), 5000, "the duplicate-reply log");

    // 4. malformed replies and replies to ids never sent.
    await p.send('{"jsonrpc":"2.0","id":"t-999","result":{"output":"?"}}');
    await p.send('{"jsonrpc":"2.0","id":12345,"error":{"code":1,"message":"x"}}');
    await p.send('{"jsonrpc":"2.0","id":"t-2"}');
    await p.request(7, "ping");
    const r7 = await p.response(7);
    assert.deepEqual(r7, { jsonrpc: "2.0", id: 7, result: {} });
    await p.until(() => p.stderr.includes(ignored("12345")), 5000, "the unknown-id log");
    const invalid = p.messages.find((m) => m.id === "t-2" && "error" in m)!;
    assert.deepEqual(invalid.error, {
      code: -32600,
      message: "A message needs 'method' (request or notification) or 'result'/'error' (response).",
      data: { code: "invalid_message" },
    });
    await p.closeInput();
    assert.equal(await p.exit(10_000), 0);
    assert.deepEqual(p.stderr.trim().split("\n"), [
      ignored("t-1"),
      ignored("t-2"),
      ignored("t-999"),
      ignored("12345"),
    ]);
  } finally {
    await p.kill();
  }
});
