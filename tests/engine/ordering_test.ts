/**
 * §2 ordering and concurrency over the wire: pipelining, concurrency across sessions, per-session order,
 * immediate operations during a running turn, client replies bypassing queues, output order, exactly one
 * response per request, and cancellation of running and queued work.
 */
import assert from "node:assert/strict";
import { scripted, WireClient } from "../helpers/wire.ts";
import type { JsonObject, JsonValue } from "../../src/protocol/json.ts";

function responseIds(c: WireClient): JsonValue[] {
  return c.messages.filter((m) => !("method" in m)).map((m) => m.id);
}

function assertOneResponseEach(c: WireClient): void {
  const ids = responseIds(c);
  assert.equal(new Set(ids.map((id) => JSON.stringify(id))).size, ids.length, `duplicate responses: ${ids}`);
}

function cancelledError(message: string): JsonObject {
  return { code: -32009, message, data: { code: "cancelled" } };
}

async function sessionEntry(c: WireClient, id: string): Promise<JsonObject> {
  const list = await c.call("session/list");
  return (list.sessions as JsonObject[]).find((s) => s.session === id)!;
}

const TOOL = { name: "open_gate", description: "Open a gate." };

Deno.test("pipelined create + respond without waiting (no stream: only the two responses)", async () => {
  const c = new WireClient();
  c.request("session/create", { session: "p", model: scripted({ text: "Hmph." }) }, 1);
  c.request("session/respond", { session: "p", prompt: "Hello" }, 2);
  c.request("session/respond", { session: "p", prompt: "Again" }, 3);
  await c.response(3);
  assert.deepEqual(c.messages.map((m) => [WireClient.kind(m), m.id]), [
    ["response", 1],
    ["response", 2],
    ["response", 3],
  ]);
  assert.equal((c.messages[1].result as JsonObject).text, "Hmph.");
  assert.equal((c.messages[2].result as JsonObject).text, "(script exhausted)");
  await c.close();
});

Deno.test("long work runs concurrently: a slow turn on A does not delay a fast turn on B or a ping", async () => {
  const c = new WireClient();
  await c.call("session/create", { session: "A", model: scripted({ text: "slow", delayMs: 300 }) });
  await c.call("session/create", { session: "B", model: scripted({ text: "fast" }) });
  const before = c.messages.length;
  c.request("session/respond", { session: "A", prompt: "x", stream: true }, "a");
  c.request("session/respond", { session: "B", prompt: "x", stream: true }, "b");
  c.request("session/list", {}, "list");
  c.request("ping", {}, "ping");
  await c.response("a");
  const order = c.messages.slice(before).map((m) =>
    `${WireClient.kind(m)}:${m.id ?? (m.params as JsonObject).requestId}`
  );
  // list and ping are answered at once; the turns start right after and B finishes first
  assert.deepEqual(order, [
    "response:list",
    "response:ping",
    "event:modelStep:a",
    "event:modelStep:b",
    "event:text:b",
    "event:text:b",
    "response:b",
    "event:text:a",
    "event:text:a",
    "response:a",
  ]);
  const list = (await c.response("list")).result as JsonObject;
  assert.deepEqual(
    (list.sessions as JsonObject[]).map((s) => [s.session, s.busy, s.pendingOperations]),
    [["A", true, 1], ["B", true, 1]],
  );
  assertOneResponseEach(c);
  await c.close();
});

Deno.test("per-session order: setInstructions pipelined after a slow respond applies after it", async () => {
  const c = new WireClient();
  await c.call("session/create", {
    session: "s",
    instructions: "old",
    model: scripted({ text: "one", delayMs: 100 }, { text: "two" }),
  });
  c.request("session/respond", { session: "s", prompt: "first", stream: true }, 1);
  c.request("session/setInstructions", { session: "s", instructions: "new" }, 2);
  c.request("session/respond", { session: "s", prompt: "second" }, 3);
  await c.waitFor((m) => m.method === "session/event");
  c.request("session/list", {}, 4);
  c.request("session/transcript", { session: "s" }, 5);
  // list and transcript answer at once, before the queued operations ran
  assert.deepEqual(c.messages.slice(-2).map((m) => m.id), [4, 5]);
  const entry = ((c.messages.at(-2)!.result as JsonObject).sessions as JsonObject[])[0];
  assert.equal(entry.instructions, "old");
  assert.equal(entry.pendingOperations, 3);
  assert.equal(entry.busy, true);
  const transcript = ((c.messages.at(-1)!.result as JsonObject).transcript as JsonObject)
    .transcript as JsonObject;
  const entries = transcript.entries as JsonObject[];
  assert.deepEqual(entries.map((e) => e.role), ["instructions", "user"]); // in-progress state
  await c.response(3);
  assert.deepEqual(responseIds(c).slice(-5), [4, 5, 1, 2, 3]);
  const after = await sessionEntry(c, "s");
  assert.equal(after.instructions, "new");
  assert.equal(after.entries, 4);
  assert.equal(after.busy, false);
  await c.close();
});

Deno.test("per-session order: reset, setTools, setContextNote and compact queue behind a slow turn", async () => {
  const c = new WireClient();
  await c.call("session/create", {
    session: "q",
    model: scripted(
      { text: "t1" },
      { text: "t2", delayMs: 80 },
      { template: "SUMMARY[{prompt}]" },
      { text: "t3" },
    ),
  });
  await c.call("session/respond", { session: "q", prompt: "p1" });
  c.request("session/respond", { session: "q", prompt: "p2" }, 1);
  c.request("session/setTools", { session: "q", tools: [TOOL] }, 2);
  c.request("session/setContextNote", { session: "q", note: "The gate is north." }, 3);
  c.request("session/compact", { session: "q", keepRecentTurns: 1 }, 4);
  c.request("session/respond", { session: "q", prompt: "p3" }, 5);
  c.request("session/reset", { session: "q" }, 6);
  c.request("session/list", {}, 7);
  const listed = ((await c.response(7)).result as JsonObject).sessions as JsonObject[];
  assert.deepEqual(listed[0].tools, []);
  assert.equal(listed[0].entries, 2);
  assert.equal(listed[0].pendingOperations, 6);
  await c.response(6);
  assert.deepEqual(responseIds(c).slice(-7), [7, 1, 2, 3, 4, 5, 6]);
  const compact = (await c.response(4)).result as JsonObject;
  // the context note set before compacting is the summary so far; both earlier turns are folded in
  assert.equal(
    compact.summary,
    "SUMMARY[Summary so far:\nThe gate is north.\n\nConversation to fold into the summary:\nUser: p1\nAssistant: t1]",
  );
  assert.deepEqual((await c.response(2)).result, { session: "q", warnings: [] });
  assert.equal(((await c.response(5)).result as JsonObject).text, "t3");
  const after = await sessionEntry(c, "q");
  assert.deepEqual(after.tools, ["open_gate"]);
  assert.equal(after.entries, 0);
  await c.close();
});

Deno.test("cancel, list, transcript and delete act immediately during a running turn", async () => {
  const c = new WireClient();
  await c.call("session/create", { session: "r", model: scripted({ text: "never", delayMs: 60_000 }) });
  await c.call("session/create", { session: "d", model: scripted({ text: "never", delayMs: 60_000 }) });
  c.request("session/respond", { session: "r", prompt: "wait", stream: true }, 1);
  c.request("session/respond", { session: "d", prompt: "wait", stream: true }, 2);
  await c.waitFor((m) => m.method === "session/event" && (m.params as JsonObject).session === "d");
  const before = c.messages.length;
  c.request("session/transcript", { session: "r" }, 3);
  c.request("session/cancel", { session: "r" }, 4);
  c.request("session/delete", { session: "d" }, 5);
  c.request("session/list", {}, 6);
  await c.response(2);
  const out = c.messages.slice(before);
  assert.deepEqual(out.map((m) => m.id), [3, 4, 5, 6, 1, 2]);
  assert.ok(out.every((m) => !("method" in m)));
  const transcript = (out[0].result as JsonObject).transcript as JsonObject;
  assert.deepEqual(
    ((transcript.transcript as JsonObject).entries as JsonObject[]).map((e) => e.role),
    ["instructions", "user"],
  );
  assert.deepEqual(out[1].result, { session: "r", cancelled: 1 });
  assert.deepEqual(out[2].result, { session: "d", deleted: true });
  assert.deepEqual(
    ((out[3].result as JsonObject).sessions as JsonObject[]).map((
      s,
    ) => [s.session, s.busy, s.pendingOperations]),
    [["r", true, 1]], // the cancelled turn is still winding down
  );
  assert.deepEqual(out[4].error, cancelledError("The turn was cancelled."));
  assert.deepEqual(out[5].error, cancelledError("The turn was cancelled."));
  // the cancelled turn left no trace
  const r = await sessionEntry(c, "r");
  assert.deepEqual([r.entries, r.busy, r.pendingOperations], [0, false, 0]);
  c.request("session/respond", { session: "d", prompt: "x" }, 7);
  assert.deepEqual((await c.response(7)).error, {
    code: -32020,
    message: "No session with id 'd'.",
    data: { code: "session_not_found", session: "d" },
  });
  assertOneResponseEach(c);
  await c.close();
});

Deno.test("cancel answers the running turn and every queued operation with -32009 and counts them", async () => {
  const c = new WireClient();
  await c.call("session/create", {
    session: "g",
    instructions: "keep",
    tools: [TOOL],
    model: scripted({ toolCalls: [{ name: "open_gate", arguments: { gate: "north" } }] }, { text: "late" }),
  });
  const before = c.messages.length;
  c.request("session/respond", { session: "g", prompt: "open", stream: true }, 1);
  c.request("session/respond", { session: "g", prompt: "queued" }, 2);
  c.request("session/reset", { session: "g" }, 3);
  c.request("session/setInstructions", { session: "g", instructions: "changed" }, 4);
  c.request("session/compact", { session: "g" }, 5);
  const call = await c.toolCall(1);
  c.request("session/cancel", { session: "g" }, 6);
  await c.response(5);
  const out = c.messages.slice(before).map((m) => `${WireClient.kind(m)}:${m.id ?? ""}`);
  assert.deepEqual(out, [
    "event:modelStep:",
    "event:toolCallStarted:",
    "tool/call:t-1",
    "tool/cancel:",
    "response:6",
    "event:toolCallCompleted:",
    "error:1",
    "error:2",
    "error:3",
    "error:4",
    "error:5",
  ]);
  const cancel = c.messages.find((m) => m.method === "tool/cancel")!;
  const callParams = call.params as JsonObject;
  assert.deepEqual(cancel.params, {
    session: "g",
    requestId: 1,
    id: "t-1",
    callId: (callParams.call as JsonObject).id,
    reason: "Error: The turn was cancelled.",
  });
  assert.deepEqual((await c.response(6)).result, { session: "g", cancelled: 5 });
  assert.deepEqual((await c.response(1)).error, cancelledError("The turn was cancelled."));
  for (const id of [2, 3, 4, 5]) {
    assert.deepEqual(
      (await c.response(id)).error,
      cancelledError("The request was cancelled before it started."),
    );
  }
  // a late reply to the cancelled tool call is ignored; nothing changed
  const n = c.messages.length;
  c.reply("t-1", { output: "opened" });
  assert.equal(c.messages.length, n);
  const entry = await sessionEntry(c, "g");
  assert.equal(entry.entries, 0);
  assert.equal(entry.instructions, "keep");
  // cancelling an idle session counts nothing; as a notification it is not answered
  assert.deepEqual(await c.call("session/cancel", { session: "g" }), { session: "g", cancelled: 0 });
  c.sendLine('{"jsonrpc":"2.0","method":"session/cancel","params":{"session":"g"}}');
  assertOneResponseEach(c);
  await c.close();
});

Deno.test("session/cancel as a notification cancels a running turn", async () => {
  const c = new WireClient();
  await c.call("session/create", { session: "n", model: scripted({ text: "x", delayMs: 60_000 }) });
  c.request("session/respond", { session: "n", prompt: "wait", stream: true }, 1);
  await c.waitFor((m) => m.method === "session/event");
  c.sendLine('{"jsonrpc":"2.0","method":"session/cancel","params":{"session":"n"}}');
  assert.deepEqual((await c.response(1)).error, cancelledError("The turn was cancelled."));
  await c.close();
});

Deno.test("a completed operation is not counted by a later cancel and reports its result", async () => {
  const c = new WireClient();
  await c.call("session/create", { session: "k", model: scripted({ text: "done" }) });
  c.request("session/respond", { session: "k", prompt: "x" }, 1);
  c.request("session/setContextNote", { session: "k", note: "n" }, 2);
  await c.response(2);
  c.request("session/cancel", { session: "k" }, 3);
  assert.deepEqual((await c.response(3)).result, { session: "k", cancelled: 0 });
  assert.equal(((await c.response(1)).result as JsonObject).text, "done");
  await c.close();
});

Deno.test("tool/call replies bypass the queues: a turn waiting on the client is answered while others wait", async () => {
  const c = new WireClient();
  await c.call("session/create", {
    session: "a",
    tools: [TOOL],
    model: scripted(
      { toolCalls: [{ name: "open_gate", arguments: { gate: "west" } }] },
      { template: "A:{toolOutput}" },
      { template: "A2:{prompt}" },
    ),
  });
  await c.call("session/create", {
    session: "b",
    tools: [TOOL],
    model: scripted({ toolCalls: [{ name: "open_gate", arguments: { gate: "east" } }] }, {
      template: "B:{toolOutput}",
    }),
  });
  c.request("session/respond", { session: "a", prompt: "one" }, 1);
  c.request("session/respond", { session: "a", prompt: "two" }, 2); // queued behind 1
  c.request("session/respond", { session: "b", prompt: "one" }, 3);
  const ta = await c.toolCall(1);
  const tb = await c.toolCall(2);
  assert.deepEqual([ta.id, tb.id], ["t-1", "t-2"]);
  assert.deepEqual((ta.params as JsonObject).session, "a");
  assert.deepEqual((tb.params as JsonObject).session, "b");
  c.reply("t-2", { output: "east open" });
  assert.equal(((await c.response(3)).result as JsonObject).text, "B:east open");
  c.reply("t-1", { output: "west open" });
  assert.equal(((await c.response(1)).result as JsonObject).text, "A:west open");
  assert.equal(((await c.response(2)).result as JsonObject).text, "A2:two");
  assert.deepEqual(responseIds(c).slice(-3), [3, 1, 2]);
  await c.close();
});

Deno.test("every event and tool/call of a request is sent before its response; exactly one response each", async () => {
  const c = new WireClient();
  const ids: number[] = [];
  for (let i = 0; i < 4; i++) {
    c.request("session/create", {
      session: `x${i}`,
      tools: [TOOL],
      model: scripted(
        {
          toolCalls: [{ name: "open_gate", arguments: { gate: `g${i}` } }, { name: "open_gate" }],
          delayMs: 5 * i,
        },
        { text: `done ${i}`, delayMs: 3 },
      ),
    }, 100 + i);
    c.request("session/respond", { session: `x${i}`, prompt: "go", stream: true }, i);
    ids.push(i);
  }
  for (let n = 1; n <= 8; n++) {
    const call = await c.toolCall(n);
    c.reply(call.id, { output: `ok ${n}` });
  }
  for (const id of ids) await c.response(id);
  for (const id of ids) {
    const related = c.related(id);
    const kinds = related.map(WireClient.kind);
    assert.equal(kinds.at(-1), "response");
    assert.equal(kinds.filter((k) => k === "response" || k === "error").length, 1);
    assert.deepEqual(kinds, [
      "event:modelStep",
      "event:toolCallStarted",
      "tool/call",
      "event:toolCallStarted",
      "tool/call",
      "event:toolCallCompleted",
      "event:toolCallCompleted",
      "event:modelStep",
      "event:text",
      "event:text",
      "event:text",
      "response",
    ]);
  }
  assertOneResponseEach(c);
  await c.close();
});
