/**
 * §5 session operations over the wire: cancel, reset, delete, list, transcript, setInstructions,
 * setContextNote, setTools, and session_not_found for each.
 */
import assert from "node:assert/strict";
import { scripted, WireClient } from "../helpers/wire.ts";
import { invalidParams, tool } from "../helpers/messages.ts";
import type { JsonObject } from "../../src/protocol/json.ts";

async function listEntry(c: WireClient, id: string): Promise<JsonObject> {
  const list = await c.call("session/list");
  return (list.sessions as JsonObject[]).find((s) => s.session === id)!;
}

async function transcriptEntries(c: WireClient, id: string): Promise<JsonObject[]> {
  const r = await c.call("session/transcript", { session: id });
  return ((r.transcript as JsonObject).transcript as JsonObject).entries as JsonObject[];
}

Deno.test("every session method answers -32020 for an unknown session and -32602 without 'session'", async () => {
  const c = new WireClient();
  const methods: Array<[string, JsonObject]> = [
    ["session/respond", { prompt: "x" }],
    ["session/cancel", {}],
    ["session/reset", {}],
    ["session/delete", {}],
    ["session/transcript", {}],
    ["session/setInstructions", { instructions: "x" }],
    ["session/setContextNote", { note: "x" }],
    ["session/setTools", { tools: [] }],
    ["session/compact", {}],
  ];
  for (const [method, params] of methods) {
    const a = c.request(method, { session: "ghost", ...params });
    assert.deepEqual((await c.response(a)).error, {
      code: -32020,
      message: "No session with id 'ghost'.",
      data: { code: "session_not_found", session: "ghost" },
    }, method);
    const b = c.request(method, params);
    assert.deepEqual(
      (await c.response(b)).error,
      invalidParams("Missing required parameter 'session'."),
      method,
    );
  }
  await c.close();
});

Deno.test("session/list: creation order, entries, busy, pendingOperations, instructions only when set", async () => {
  const c = new WireClient();
  await c.call("session/create", { session: "z", instructions: "Zed.", model: "scripted" });
  await c.call("session/create", {
    session: "a",
    tools: [tool("look"), tool("take")],
    model: scripted({ toolCalls: [{ name: "look" }, { name: "take" }] }, { text: "done" }),
  });
  await c.call("session/create", { session: "m", model: scripted({ text: "slow", delayMs: 60_000 }) });
  const id = c.request("session/respond", { session: "a", prompt: "go" });
  const t1 = await c.toolCall(1);
  const t2 = await c.toolCall(2);
  c.request("session/respond", { session: "m", prompt: "x" }, "m1");
  c.request("session/respond", { session: "m", prompt: "y" }, "m2");
  const list = (await c.call("session/list")).sessions as JsonObject[];
  assert.deepEqual(list.map((s) => s.session), ["z", "a", "m"]);
  assert.deepEqual(list.map((s) => s.instructions), ["Zed.", undefined, undefined]);
  assert.deepEqual(list.map((s) => [s.busy, s.pendingOperations]), [[false, 0], [true, 1], [true, 2]]);
  assert.deepEqual(list[1].tools, ["look", "take"]);
  c.reply(t2.id, { output: "taken" });
  c.reply(t1.id, { output: "seen" });
  await c.response(id);
  // prompt, tool calls, two outputs, answer
  assert.equal((await listEntry(c, "a")).entries, 5);
  await c.call("session/cancel", { session: "m" });
  await c.close();
});

Deno.test("session/transcript: envelope, entry shapes, output ids equal call ids", async () => {
  const c = new WireClient();
  await c.call("session/create", {
    session: "g",
    instructions: "Guard.",
    tools: [{
      name: "open_gate",
      description: "Open a gate.",
      parameters: { type: "object", properties: { gate: { type: "string" } } },
    }],
    model: scripted(
      { toolCalls: [{ name: "open_gate", arguments: { gate: "north" } }, { name: "open_gate", id: "mine" }] },
      { text: "Done." },
    ),
  });
  const id = c.request("session/respond", { session: "g", prompt: "Open." });
  c.reply((await c.toolCall(1)).id, { output: { opened: true } });
  c.reply((await c.toolCall(2)).id, { output: "jammed", isError: true });
  await c.response(id);
  const r = await c.call("session/transcript", { session: "g" });
  assert.deepEqual(Object.keys(r), ["session", "transcript"]);
  assert.equal(r.session, "g");
  const envelope = r.transcript as JsonObject;
  assert.deepEqual(Object.keys(envelope), ["type", "version", "transcript"]);
  assert.equal(envelope.type, "FoundationModels.Transcript");
  assert.equal(envelope.version, "1.1");
  assert.deepEqual(Object.keys(envelope.transcript as JsonObject), ["entries"]);
  const entries = (envelope.transcript as JsonObject).entries as JsonObject[];
  assert.deepEqual(entries.map((e) => e.role), [
    "instructions",
    "user",
    "response",
    "tool",
    "tool",
    "response",
  ]);
  const [instructions, prompt, calls, out1, out2, answer] = entries;
  assert.deepEqual(Object.keys(instructions), ["id", "role", "contents", "tools"]);
  assert.deepEqual((instructions.contents as JsonObject[]).map((s) => [s.type, s.text]), [[
    "text",
    "Guard.",
  ]]);
  assert.deepEqual(instructions.tools, [{
    type: "function",
    function: {
      name: "open_gate",
      description: "Open a gate.",
      parameters: { type: "object", properties: { gate: { type: "string" } } },
    },
  }]);
  assert.deepEqual(Object.keys(prompt), ["id", "role", "contents", "options"]);
  assert.deepEqual((prompt.contents as JsonObject[]).map((s) => [s.type, s.text]), [["text", "Open."]]);
  assert.deepEqual(Object.keys(calls), ["id", "role", "toolCalls", "contents", "assets"]);
  const toolCalls = calls.toolCalls as JsonObject[];
  assert.deepEqual(toolCalls.map((t) => [t.name, t.arguments]), [["open_gate", '{"gate":"north"}'], [
    "open_gate",
    "{}",
  ]]);
  assert.equal(toolCalls[1].id, "mine");
  for (const [k, out] of [out1, out2].entries()) {
    assert.deepEqual(Object.keys(out), ["id", "role", "toolCallID", "toolName", "contents"]);
    assert.equal(out.id, toolCalls[k].id);
    assert.equal(out.toolCallID, toolCalls[k].id);
    assert.equal(out.toolName, "open_gate");
  }
  assert.deepEqual((out1.contents as JsonObject[])[0].structure, {
    source: "open_gate",
    content: { opened: true },
  });
  assert.deepEqual(((out2.contents as JsonObject[])[0] as JsonObject).text, "Error: jammed");
  assert.deepEqual(Object.keys(answer), ["id", "role", "contents", "assets"]);
  assert.deepEqual((answer.contents as JsonObject[]).map((s) => s.text), ["Done."]);
  // entry ids are unique
  assert.equal(new Set(entries.map((e) => e.id)).size, entries.length);
  await c.close();
});

Deno.test("session/reset clears the conversation and the context note, keeps instructions and tools", async () => {
  const c = new WireClient();
  await c.call("session/create", {
    session: "r",
    instructions: "Keep me.",
    tools: [tool("look")],
    model: scripted({ text: "one" }, { text: "two" }, { template: "{prompt}" }),
  });
  await c.call("session/respond", { session: "r", prompt: "a" });
  await c.call("session/setContextNote", { session: "r", note: "A note." });
  c.request("session/reset", { session: "r" }, 1);
  assert.deepEqual(await c.response(1), { jsonrpc: "2.0", id: 1, result: { session: "r" } });
  const entry = await listEntry(c, "r");
  assert.deepEqual([entry.entries, entry.instructions, entry.tools], [0, "Keep me.", ["look"]]);
  assert.deepEqual((await transcriptEntries(c, "r")).map((e) => e.role), ["instructions"]);
  // the context note is gone: compacting two new turns shows no "Summary so far"
  await c.call("session/respond", { session: "r", prompt: "b" });
  const compacted = await c.call("session/compact", { session: "r", keepRecentTurns: 0 });
  assert.equal(compacted.summary, "Conversation to fold into the summary:\nUser: b\nAssistant: two");
  await c.close();
});

Deno.test("session/delete frees the session; its id can be reused", async () => {
  const c = new WireClient();
  await c.call("session/create", { session: "x", model: "scripted" });
  c.request("session/delete", { session: "x" }, 1);
  assert.deepEqual(await c.response(1), { jsonrpc: "2.0", id: 1, result: { session: "x", deleted: true } });
  assert.deepEqual(await c.call("session/list"), { sessions: [] });
  c.request("session/delete", { session: "x" }, 2);
  assert.equal(((await c.response(2)).error as JsonObject).code, -32020);
  assert.deepEqual(await c.call("session/create", { session: "x", model: "scripted" }), {
    session: "x",
    warnings: [],
  });
  await c.close();
});

Deno.test("setInstructions: applies from the next turn; null clears; errors", async () => {
  const c = new WireClient();
  await c.call("session/create", { session: "i", instructions: "Old.", model: "scripted" });
  c.request("session/setInstructions", { session: "i", instructions: "New." }, 1);
  assert.deepEqual(await c.response(1), { jsonrpc: "2.0", id: 1, result: { session: "i" } });
  assert.equal((await listEntry(c, "i")).instructions, "New.");
  const t = await transcriptEntries(c, "i");
  assert.deepEqual((t[0].contents as JsonObject[])[0].text, "New.");
  await c.call("session/setInstructions", { session: "i", instructions: null });
  assert.equal((await listEntry(c, "i")).instructions, undefined);
  assert.deepEqual((await transcriptEntries(c, "i"))[0].contents, []);
  c.request("session/setInstructions", { session: "i" }, 2);
  c.request("session/setInstructions", { session: "i", instructions: 5 }, 3);
  assert.deepEqual((await c.response(2)).error, invalidParams("Missing required parameter 'instructions'."));
  assert.deepEqual(
    (await c.response(3)).error,
    invalidParams("Parameter 'instructions' must be a string; got 5."),
  );
  await c.close();
});

Deno.test("setContextNote: result, null clears, errors", async () => {
  const c = new WireClient();
  await c.call("session/create", {
    session: "n",
    model: scripted({ text: "a1" }, { text: "S1" }, { text: "a2" }, { template: "{prompt}" }),
  });
  c.request("session/setContextNote", { session: "n", note: "Quest: find the ring." }, 1);
  assert.deepEqual(await c.response(1), { jsonrpc: "2.0", id: 1, result: { session: "n" } });
  await c.call("session/respond", { session: "n", prompt: "p1" });
  // the note is the summary so far of a compaction
  assert.equal((await c.call("session/compact", { session: "n", keepRecentTurns: 0 })).summary, "S1");
  await c.call("session/setContextNote", { session: "n", note: null });
  await c.call("session/respond", { session: "n", prompt: "p2" });
  assert.equal(
    (await c.call("session/compact", { session: "n", keepRecentTurns: 0 })).summary,
    "Conversation to fold into the summary:\nUser: p2\nAssistant: a2",
  );
  c.request("session/setContextNote", { session: "n" }, 2);
  c.request("session/setContextNote", { session: "n", note: ["x"] }, 3);
  assert.deepEqual((await c.response(2)).error, invalidParams("Missing required parameter 'note'."));
  assert.deepEqual(
    (await c.response(3)).error,
    invalidParams(`Parameter 'note' must be a string; got ["x"].`),
  );
  await c.close();
});

Deno.test("setTools: replaces the tool set; warnings; errors change nothing", async () => {
  const c = new WireClient();
  await c.call("session/create", { session: "t", tools: [tool("a")], model: "scripted" });
  c.request("session/setTools", { session: "t", tools: [tool("b"), { name: "c" }] }, 1);
  assert.deepEqual(await c.response(1), {
    jsonrpc: "2.0",
    id: 1,
    result: { session: "t", warnings: ["c: no description; the model may not know when to call it."] },
  });
  assert.deepEqual((await listEntry(c, "t")).tools, ["b", "c"]);
  const six = await c.call("session/setTools", {
    session: "t",
    tools: ["a", "b", "c", "d", "e", "f"].map((name) => tool(name)),
  });
  assert.deepEqual(six.warnings, [
    "6 tools: Apple recommends at most 3-5 tools per request on-device; narrow them per turn with 'enabledTools'.",
  ]);
  c.request("session/setTools", { session: "t" }, 2);
  c.request("session/setTools", { session: "t", tools: [tool("x"), tool("x")] }, 3);
  c.request("session/setTools", { session: "t", tools: [{ name: "y", parameters: { type: "frob" } }] }, 4);
  assert.deepEqual((await c.response(2)).error, invalidParams("Missing required parameter 'tools'."));
  assert.deepEqual(
    (await c.response(3)).error,
    invalidParams("'tools[1].name' must be unique: 'x' is also the name of 'tools[0]'."),
  );
  assert.equal(((await c.response(4)).error as JsonObject).code, -32007);
  assert.deepEqual((await listEntry(c, "t")).tools, ["a", "b", "c", "d", "e", "f"]);
  assert.deepEqual(await c.call("session/setTools", { session: "t", tools: [] }), {
    session: "t",
    warnings: [],
  });
  assert.deepEqual((await listEntry(c, "t")).tools, []);
  await c.close();
});

Deno.test("transcript: reading it twice without a turn in between gives identical JSON", async () => {
  const { WireClient: Client, scripted: s } = await import("../helpers/wire.ts");
  const c = new Client();
  await c.call("session/create", { session: "t", instructions: "Be brief.", model: s({ text: "Hi." }) });
  await c.call("session/respond", { session: "t", prompt: "Hello" });
  const a = await c.call("session/transcript", { session: "t" });
  const b = await c.call("session/transcript", { session: "t" });
  if (JSON.stringify(a) !== JSON.stringify(b)) {
    throw new Error(`differs:\n${JSON.stringify(a)}\n${JSON.stringify(b)}`);
  }
  await c.close();
});
