/**
 * Client tool replies and timeouts over the wire: every reply form of the §7 table, per-tool / session /
 * engine timeouts with tool/cancel, late replies ignored, 0 = wait forever.
 */
import assert from "node:assert/strict";
import { scripted, WireClient } from "../helpers/wire.ts";
import { eventsOf, tool } from "../helpers/messages.ts";
import type { JsonObject } from "../../src/protocol/json.ts";
import { formatDuration } from "../../src/agent/tool_runtime.ts";

Deno.test("every reply form of the tool/call table: record output and what the model sees", async () => {
  const c = new WireClient();
  const calls = Array.from({ length: 9 }, () => ({ name: "gate" }));
  await c.call("session/create", {
    session: "g",
    tools: [tool("gate")],
    model: scripted({ toolCalls: calls }, { template: "{toolOutputs}" }),
  });
  c.request("session/respond", { session: "g", prompt: "x" }, 1);
  for (let n = 1; n <= 9; n++) await c.toolCall(n);
  c.reply("t-1", { output: "The gate opened." });
  c.reply("t-2", { output: { opened: true, by: ["a", "b"] } });
  c.reply("t-3", { output: "Chain jammed.", isError: true });
  c.send({ id: "t-4", error: { code: -32000, message: "Gate subsystem offline" } });
  c.reply("t-5", { opened: true });
  c.reply("t-6", { output: null });
  c.reply("t-7", { output: { why: "rust" }, isError: true });
  c.reply("t-8", "plain");
  c.reply("t-9", { output: "fine", isError: false, extra: 1 });
  const r = (await c.response(1)).result as JsonObject;
  const records = r.toolCalls as JsonObject[];
  assert.deepEqual(records.map((t) => [t.output, t.isError]), [
    ["The gate opened.", false],
    [{ opened: true, by: ["a", "b"] }, false],
    ["Chain jammed.", true],
    ["Gate subsystem offline", true],
    [{ opened: true }, false],
    [null, false],
    ['{"why":"rust"}', true],
    ["plain", false],
    ["fine", false],
  ]);
  assert.equal(
    r.text,
    [
      "The gate opened.",
      '{"opened":true,"by":["a","b"]}',
      "Error: Chain jammed.",
      "Error: Gate subsystem offline",
      '{"opened":true}',
      "null",
      'Error: {"why":"rust"}',
      "plain",
      "fine",
    ].join("\n"),
  );
  await c.close();
});

Deno.test("a duplicate reply to a finished tool call is ignored", async () => {
  const c = new WireClient();
  await c.call("session/create", {
    session: "g",
    tools: [tool("gate")],
    model: scripted({ toolCalls: [{ name: "gate" }] }, { template: "{toolOutput}" }),
  });
  c.request("session/respond", { session: "g", prompt: "x" }, 1);
  await c.toolCall(1);
  c.reply("t-1", { output: "first" });
  c.reply("t-1", { output: "second" });
  assert.equal(((await c.response(1)).result as JsonObject).text, "first");
  await c.close();
});

async function timeoutTurn(c: WireClient, expectReason: string): Promise<void> {
  c.request("session/respond", { session: "t", prompt: "x", stream: true }, 1);
  const call = await c.toolCall(1);
  const r = await c.response(1);
  const related = c.related(1);
  assert.deepEqual(related.map(WireClient.kind), [
    "event:modelStep",
    "event:toolCallStarted",
    "tool/call",
    "tool/cancel",
    "event:toolCallCompleted",
    "event:modelStep",
    "event:text",
    "event:text",
    "event:text",
    "response",
  ]);
  const callInfo = (call.params as JsonObject).call as JsonObject;
  assert.deepEqual(related[3].params, {
    session: "t",
    requestId: 1,
    id: "t-1",
    callId: callInfo.id,
    reason: `Error: ${expectReason}`,
  });
  const record = ((related[4].params as JsonObject).event as JsonObject).record as JsonObject;
  assert.deepEqual([record.output, record.isError], [expectReason, true]);
  assert.ok((record.durationSeconds as number) >= 0.04, JSON.stringify(record));
  assert.equal((r.result as JsonObject).text, `Error: ${expectReason}`);
  // a late reply is ignored
  const n = c.messages.length;
  c.reply("t-1", { output: "too late" });
  assert.equal(c.messages.length, n);
  assert.deepEqual(await c.call("ping"), {});
}

Deno.test("per-tool timeoutSeconds: tool/cancel with the reason, the model sees the error, late reply ignored", async () => {
  const c = new WireClient();
  await c.call("session/create", {
    session: "t",
    tools: [tool("slow", { timeoutSeconds: 0.05 })],
    options: { toolTimeoutSeconds: 60 },
    model: scripted({ toolCalls: [{ name: "slow" }] }, { template: "{toolOutput}" }),
  });
  await timeoutTurn(c, "Tool 'slow' timed out after 50ms.");
  await c.close();
});

Deno.test("session options.toolTimeoutSeconds applies to tools without their own timeout", async () => {
  const c = new WireClient();
  await c.call("session/create", {
    session: "t",
    tools: [tool("slow")],
    options: { toolTimeoutSeconds: 0.05 },
    model: scripted({ toolCalls: [{ name: "slow" }] }, { template: "{toolOutput}" }),
  });
  await timeoutTurn(c, "Tool 'slow' timed out after 50ms.");
  await c.close();
});

Deno.test("the engine's toolTimeoutSeconds is the default", async () => {
  const c = new WireClient({ toolTimeoutSeconds: 0.05 });
  await c.call("session/create", {
    session: "t",
    tools: [tool("slow")],
    model: scripted({ toolCalls: [{ name: "slow" }] }, { template: "{toolOutput}" }),
  });
  await timeoutTurn(c, "Tool 'slow' timed out after 50ms.");
  await c.close();
});

Deno.test("tools replaced by setTools get the session's toolTimeoutSeconds", async () => {
  const c = new WireClient();
  await c.call("session/create", {
    session: "t",
    options: { toolTimeoutSeconds: 0.05 },
    model: scripted({ toolCalls: [{ name: "slow" }] }, { template: "{toolOutput}" }),
  });
  await c.call("session/setTools", { session: "t", tools: [tool("slow")] });
  await timeoutTurn(c, "Tool 'slow' timed out after 50ms.");
  await c.close();
});

Deno.test("timeout 0 waits forever: a tool's 0 beats the session's limit, the session's 0 beats the engine's", async () => {
  const c = new WireClient({ toolTimeoutSeconds: 0.05 });
  await c.call("session/create", {
    session: "a",
    tools: [tool("patient", { timeoutSeconds: 0 })],
    options: { toolTimeoutSeconds: 0.05 },
    model: scripted({ toolCalls: [{ name: "patient" }] }, { template: "{toolOutput}" }),
  });
  await c.call("session/create", {
    session: "b",
    tools: [tool("patient")],
    options: { toolTimeoutSeconds: 0 },
    model: scripted({ toolCalls: [{ name: "patient" }] }, { template: "{toolOutput}" }),
  });
  // The clock: a third session whose tool has the 50 ms limit, called after the other two. Its timer is
  // set last, so when it fires, a 50 ms timer of the first two would have fired before it.
  await c.call("session/create", {
    session: "clock",
    tools: [tool("ticking")],
    model: scripted({ toolCalls: [{ name: "ticking" }] }, { template: "{toolOutput}" }),
  });
  c.request("session/respond", { session: "a", prompt: "x" }, 1);
  c.request("session/respond", { session: "b", prompt: "x" }, 2);
  await c.toolCall(2);
  c.request("session/respond", { session: "clock", prompt: "x" }, 3);
  await c.waitFor((m) => m.method === "tool/cancel" && (m.params as JsonObject).requestId === 3);
  assert.deepEqual(
    c.messages.filter((m) => m.method === "tool/cancel").map((m) => (m.params as JsonObject).id),
    [
      "t-3",
    ],
  );
  c.reply("t-1", { output: "a done" });
  c.reply("t-2", { output: "b done" });
  assert.equal(((await c.response(1)).result as JsonObject).text, "a done");
  assert.equal(((await c.response(2)).result as JsonObject).text, "b done");
  await c.close();
});

Deno.test("one call of a step times out while the other is answered", async () => {
  const c = new WireClient();
  await c.call("session/create", {
    session: "t",
    tools: [tool("slow", { timeoutSeconds: 0.05 }), tool("fast")],
    model: scripted({ toolCalls: [{ name: "slow" }, { name: "fast" }] }, { template: "{toolOutputs}" }),
  });
  c.request("session/respond", { session: "t", prompt: "x", stream: true }, 1);
  await c.toolCall(2);
  c.reply("t-2", { output: "quick" });
  const r = (await c.response(1)).result as JsonObject;
  assert.deepEqual((r.toolCalls as JsonObject[]).map((t) => (t.call as JsonObject).name), ["fast", "slow"]);
  assert.equal(r.text, "Error: Tool 'slow' timed out after 50ms.\nquick");
  const cancels = c.messages.filter((m) => m.method === "tool/cancel");
  assert.deepEqual(cancels.map((m) => (m.params as JsonObject).id), ["t-1"]);
  assert.deepEqual(eventsOf(c, 1).filter((e) => e.type === "toolCallCompleted").length, 2);
  await c.close();
});

Deno.test("timeout bounds: -1, 86401, 'x', 1e309-like values are -32602", async () => {
  const c = new WireClient();
  const msg = (k: string, got: string) =>
    `Parameter '${k}' must be a number of seconds from 0 to 86400 (0 means no limit); got ${got}.`;
  const cases: Array<[JsonObject, string]> = [
    [{ tools: [tool("a", { timeoutSeconds: -1 })] }, msg("tools[0].timeoutSeconds", "-1")],
    [{ tools: [tool("a", { timeoutSeconds: 86401 })] }, msg("tools[0].timeoutSeconds", "86401")],
    [{ tools: [tool("a", { timeoutSeconds: "x" })] }, msg("tools[0].timeoutSeconds", '"x"')],
    [{ tools: [tool("a", { timeoutSeconds: true })] }, msg("tools[0].timeoutSeconds", "true")],
    [{ tools: [tool("a", { timeoutSeconds: 1e300 })] }, msg("tools[0].timeoutSeconds", "1e+300")],
    [{ options: { toolTimeoutSeconds: -0.001 } }, msg("options.toolTimeoutSeconds", "-0.001")],
    [{ options: { toolTimeoutSeconds: 86400.5 } }, msg("options.toolTimeoutSeconds", "86400.5")],
  ];
  for (const [params, message] of cases) {
    const id = c.request("session/create", { ...params, model: "scripted" });
    assert.deepEqual((await c.response(id)).error, {
      code: -32602,
      message,
      data: { code: "invalid_params" },
    });
  }
  // the OpenAI wrapper's timeout is read too; 86400 and 0 are accepted
  const ok = await c.call("session/create", {
    tools: [
      { type: "function", function: { ...tool("w"), timeoutSeconds: 86400 } },
      tool("z", { timeoutSeconds: 0 }),
    ],
    options: { toolTimeoutSeconds: 86400 },
    model: "scripted",
  });
  assert.deepEqual(ok.warnings, []);
  c.request(
    "session/setTools",
    { session: ok.session as string, tools: [tool("a", { timeoutSeconds: -1 })] },
    99,
  );
  assert.equal(((await c.response(99)).error as JsonObject).message, msg("tools[0].timeoutSeconds", "-1"));
  await c.close();
});

Deno.test("timeout messages show durations like the reference: 120s, 1.5s, 200ms", () => {
  assert.equal(formatDuration(120_000), "120s");
  assert.equal(formatDuration(1_500), "1.5s");
  assert.equal(formatDuration(200), "200ms");
  assert.equal(formatDuration(50), "50ms");
  assert.equal(formatDuration(86_400_000), "86400s");
});
