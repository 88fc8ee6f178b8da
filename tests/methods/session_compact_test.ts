/**
 * §5 `session/compact` over the wire: summary into the context note, keepRecentTurns, null when nothing to
 * compact, rendering of tool traffic, cancellation changes nothing, parameter errors.
 */
import assert from "node:assert/strict";
import { scripted, WireClient } from "../helpers/wire.ts";
import { invalidParams } from "../helpers/messages.ts";
import type { JsonObject } from "../../src/protocol/json.ts";

async function entries(c: WireClient, id: string): Promise<JsonObject[]> {
  const r = await c.call("session/transcript", { session: id });
  return (((r.transcript as JsonObject).transcript as JsonObject).entries as JsonObject[]).slice(1);
}

function texts(list: JsonObject[]): string[] {
  return list.map((e) => ((e.contents as JsonObject[])[0] as JsonObject | undefined)?.text as string);
}

Deno.test("compact: folds all but the newest turns into the context note (default keep 2)", async () => {
  const c = new WireClient();
  await c.call("session/create", {
    session: "c",
    model: scripted(
      { text: "a1" },
      { text: "a2" },
      { text: "a3" },
      { template: "  {prompt}  " }, // the summarizer sees the rendered conversation; the summary is trimmed
      { text: "a4" },
      { template: "{prompt}" },
    ),
  });
  for (const p of ["p1", "p2", "p3"]) await c.call("session/respond", { session: "c", prompt: p });
  c.request("session/compact", { session: "c" }, 1);
  const r = await c.response(1);
  assert.deepEqual(r, {
    jsonrpc: "2.0",
    id: 1,
    result: { session: "c", summary: "Conversation to fold into the summary:\nUser: p1\nAssistant: a1" },
  });
  assert.deepEqual(texts(await entries(c, "c")), ["p2", "a2", "p3", "a3"]);
  // the next compaction merges into the summary so far (the context note)
  await c.call("session/respond", { session: "c", prompt: "p4" });
  const second = await c.call("session/compact", { session: "c", keepRecentTurns: 1 });
  assert.equal(
    second.summary,
    "Summary so far:\nConversation to fold into the summary:\nUser: p1\nAssistant: a1\n\n" +
      "Conversation to fold into the summary:\nUser: p2\nAssistant: a2\nUser: p3\nAssistant: a3",
  );
  // The summary reached the model ahead of the next prompt (not in the instructions): the entry shows it.
  assert.deepEqual(texts(await entries(c, "c")), [
    "Context:\nConversation to fold into the summary:\nUser: p1\nAssistant: a1\n\np4",
    "a4",
  ]);
  await c.close();
});

Deno.test("compact: summary null when there is nothing to compact (no model call)", async () => {
  const c = new WireClient();
  await c.call("session/create", { session: "n", model: scripted({ text: "a1" }, { text: "next" }) });
  assert.deepEqual(await c.call("session/compact", { session: "n" }), { session: "n", summary: null });
  await c.call("session/respond", { session: "n", prompt: "p1" });
  assert.deepEqual(await c.call("session/compact", { session: "n", keepRecentTurns: 1 }), {
    session: "n",
    summary: null,
  });
  assert.deepEqual(await c.call("session/compact", { session: "n", keepRecentTurns: 5 }), {
    session: "n",
    summary: null,
  });
  assert.equal((await entries(c, "n")).length, 2);
  // no script step was used
  assert.equal((await c.call("session/respond", { session: "n", prompt: "p2" })).text, "next");
  await c.close();
});

Deno.test("compact: keepRecentTurns 0 folds everything; tool traffic is rendered", async () => {
  const c = new WireClient();
  await c.call("session/create", {
    session: "t",
    tools: [{ name: "open_gate", description: "Open a gate." }],
    model: scripted(
      { toolCalls: [{ name: "open_gate", arguments: { gate: "north" } }] },
      { text: "It is open." },
      { template: "{prompt}" },
    ),
  });
  const id = c.request("session/respond", { session: "t", prompt: "Open it." });
  c.reply((await c.toolCall(1)).id, { output: { opened: true } });
  await c.response(id);
  const r = await c.call("session/compact", {
    session: "t",
    keepRecentTurns: 0,
    summaryInstructions: "Be brief.",
  });
  assert.equal(
    r.summary,
    'Conversation to fold into the summary:\nUser: Open it.\n[Assistant used open_gate {"gate":"north"}]\n' +
      '[open_gate result: {"opened":true}]\nAssistant: It is open.',
  );
  assert.deepEqual(await entries(c, "t"), []);
  const list = await c.call("session/list");
  assert.equal((list.sessions as JsonObject[])[0].entries, 0);
  await c.close();
});

Deno.test("compact: cancelling it answers -32009 and changes nothing", async () => {
  const c = new WireClient();
  await c.call("session/create", {
    session: "x",
    model: scripted(
      { text: "a1" },
      { text: "a2" },
      { text: "a3" },
      { text: "never", delayMs: 60_000 },
      { template: "{prompt}" },
    ),
  });
  for (const p of ["p1", "p2", "p3"]) await c.call("session/respond", { session: "x", prompt: p });
  await c.call("session/setContextNote", { session: "x", note: "Old note." });
  const before = await entries(c, "x");
  c.request("session/compact", { session: "x", keepRecentTurns: 1 }, 1);
  c.request("session/compact", { session: "x", keepRecentTurns: 0 }, 2);
  c.request("session/list", {}, 3);
  await c.response(3);
  c.request("session/cancel", { session: "x" }, 4);
  assert.deepEqual((await c.response(4)).result, { session: "x", cancelled: 2 });
  const e1 = (await c.response(1)).error as JsonObject;
  const e2 = (await c.response(2)).error as JsonObject;
  assert.equal(e1.code, -32009);
  assert.deepEqual(e2, {
    code: -32009,
    message: "The request was cancelled before it started.",
    data: { code: "cancelled" },
  });
  assert.deepEqual(await entries(c, "x"), before);
  // the context note is unchanged: a later compaction starts from it
  const r = await c.call("session/compact", { session: "x", keepRecentTurns: 2 });
  assert.equal(
    r.summary,
    "Summary so far:\nOld note.\n\nConversation to fold into the summary:\nUser: p1\nAssistant: a1",
  );
  await c.close();
});

Deno.test("compact: deleting the session during the summary call answers -32009", async () => {
  const c = new WireClient();
  await c.call("session/create", {
    session: "d",
    model: scripted({ text: "a1" }, { text: "never", delayMs: 60_000 }),
  });
  await c.call("session/respond", { session: "d", prompt: "p1" });
  c.request("session/compact", { session: "d", keepRecentTurns: 0 }, 1);
  await c.call("session/list");
  c.request("session/delete", { session: "d" }, 2);
  assert.deepEqual((await c.response(2)).result, { session: "d", deleted: true });
  assert.equal(((await c.response(1)).error as JsonObject).code, -32009);
  await c.close();
});

Deno.test("compact: a failing summary call fails the request and changes nothing", async () => {
  const c = new WireClient();
  await c.call("session/create", {
    session: "f",
    options: { maxAttempts: 1 },
    model: scripted({ text: "a1" }, { error: "guardrail_violation" }),
  });
  await c.call("session/respond", { session: "f", prompt: "p1" });
  c.request("session/compact", { session: "f", keepRecentTurns: 0 }, 1);
  assert.deepEqual((await c.response(1)).error, {
    code: -32002,
    message: "Scripted guardrail_violation.",
    data: { code: "guardrail_violation" },
  });
  assert.deepEqual(texts(await entries(c, "f")), ["p1", "a1"]);
  await c.close();
});

Deno.test("compact: parameter errors", async () => {
  const c = new WireClient();
  await c.call("session/create", { session: "e", model: "scripted" });
  c.request("session/compact", { session: "e", keepRecentTurns: -1 }, 1);
  c.request("session/compact", { session: "e", keepRecentTurns: "two" }, 2);
  c.request("session/compact", { session: "e", keepRecentTurns: 1.5 }, 3);
  c.request("session/compact", { session: "e", summaryInstructions: 5 }, 4);
  assert.deepEqual(
    (await c.response(1)).error,
    invalidParams("Parameter 'keepRecentTurns' must be at least 0."),
  );
  assert.deepEqual(
    (await c.response(2)).error,
    invalidParams(`Parameter 'keepRecentTurns' must be an integer; got "two".`),
  );
  assert.deepEqual(
    (await c.response(3)).error,
    invalidParams("Parameter 'keepRecentTurns' must be an integer; got 1.5."),
  );
  assert.deepEqual(
    (await c.response(4)).error,
    invalidParams("Parameter 'summaryInstructions' must be a string; got 5."),
  );
  await c.close();
});
