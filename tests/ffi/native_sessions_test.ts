/**
 * Native sessions kept alive (ffi/README.md, "Native sessions"): through the whole engine, a system session
 * whose next step's history extends the live plugin session's transcript exactly continues that session; any
 * edit rebuilds it. Observed through the C double, which counts rebuilds and evaluated entries per step.
 */
import assert from "node:assert/strict";
import type { JsonObject } from "../../src/protocol/json.ts";
import { closeSystemModels, createSystemModel, systemModelsIdle } from "../../src/models/system.ts";
import type { NativeStepInfo } from "../../src/models/system_sessions.ts";
import { WireClient } from "../helpers/wire.ts";
import { requireDouble } from "./double.ts";

const PATH = requireDouble();
const AVAILABILITY = { available: true, contextSize: 8192, supportedLanguages: ["en"] };

const GATE_TOOL = {
  name: "open_gate",
  description: "Ask the game engine to open a named gate.",
  parameters: { type: "object", properties: { gate: { type: "string" } }, required: ["gate"] },
};

function text(t: string): JsonObject {
  return { result: { kind: "text", text: t, usage: null } };
}

/** A wire client whose system model is the double; `steps` are played per step request, in order. */
function client(steps: JsonObject[], nativeSessions?: number) {
  const sent: JsonObject[] = [];
  const infos: NativeStepInfo[] = [];
  const queue = [...steps];
  const c = new WireClient({
    systemModel: () =>
      createSystemModel({
        libraryPath: PATH,
        nativeSessions,
        onNativeStep: (info) => infos.push(info),
        decorateRequest: (body) => {
          if (body.op === "availability") {
            body["x-double"] = { result: AVAILABILITY };
            return;
          }
          sent.push(structuredClone(body));
          const next = queue.shift();
          if (next) body["x-double"] = next;
        },
      }),
  });
  return { c, sent, infos };
}

async function finish(c: WireClient): Promise<void> {
  await c.close();
  closeSystemModels();
  await systemModelsIdle();
}

async function respond(c: WireClient, session: string, prompt: string, extra: JsonObject = {}) {
  const response = await c.response(c.request("session/respond", { session, prompt, ...extra }));
  assert.ok("result" in response, JSON.stringify(response));
  return response.result as JsonObject;
}

/** The fields the tests compare: requested, rebuilt, reason, evaluatedEntries, kept. */
function summary(infos: NativeStepInfo[]) {
  return infos.map((i) => [i.requested, i.rebuilt, i.reason, i.evaluatedEntries, i.kept]);
}

Deno.test("native sessions: a plain conversation continues the live session turn after turn", async () => {
  const { c, sent, infos } = client([
    text("Halt!"),
    text("The gate is shut."),
    text("Go away."),
    text("Fine."),
  ]);
  try {
    await c.call("session/create", { session: "guard", instructions: "You are a castle guard." });
    for (const prompt of ["Hello", "Open the gate.", "Please?", "Bye."]) await respond(c, "guard", prompt);
    assert.deepEqual(summary(infos), [
      // The first step builds the session: instructions entry + prompt.
      [false, true, "new", 2, true],
      // Each later step adds only its prompt to the live session.
      [true, false, "continued", 1, true],
      [true, false, "continued", 1, true],
      [true, false, "continued", 1, true],
    ]);
    assert.deepEqual(sent.map((s) => s.native), [
      { key: "n1", continue: false },
      { key: "n1", continue: true },
      { key: "n1", continue: true },
      { key: "n1", continue: true },
    ]);
    // The full history is still sent every time: the plugin can always rebuild.
    assert.deepEqual(sent.map((s) => (s.history as JsonObject[]).length), [0, 2, 4, 6]);
  } finally {
    await finish(c);
  }
});

Deno.test("native sessions: a changed context note continues (it enters the prompt); a reset rebuilds", async () => {
  const { c, sent, infos } = client([
    text("One."),
    text("Two."),
    text("Three."),
    text("Four."),
    text("Five."),
  ]);
  try {
    await c.call("session/create", { session: "s", instructions: "Be brief." });
    await respond(c, "s", "a");
    await respond(c, "s", "b");
    await c.call("session/setContextNote", { session: "s", note: "It is raining." });
    await respond(c, "s", "c");
    await respond(c, "s", "d");
    await c.call("session/reset", { session: "s" });
    await respond(c, "s", "e");
    assert.deepEqual(summary(infos), [
      [false, true, "new", 2, true],
      [true, false, "continued", 1, true],
      // The note is not written into the instructions: it rides on the next prompt, the session goes on.
      [true, false, "continued", 1, true],
      [true, false, "continued", 1, true],
      // After a reset the history no longer extends any live transcript.
      [false, true, "new", 2, true],
    ]);
    assert.deepEqual(sent.map((s) => [s.instructions, s.prompt]), [
      ["Be brief.", "a"],
      ["Be brief.", "b"],
      ["Be brief.", "Context:\nIt is raining.\n\nc"],
      ["Be brief.", "d"],
      ["Be brief.", "e"],
    ]);
  } finally {
    await finish(c);
  }
});

Deno.test("native sessions: a tool round ends the live session (capture and end); the next turns rebuild once", async () => {
  const { c, sent, infos } = client([
    text("Halt!"),
    {
      result: {
        kind: "toolCalls",
        calls: [{ name: "open_gate", arguments: { gate: "north" } }],
        usage: null,
      },
    },
    text("The gate is jammed."),
    text("Still jammed."),
    text("Goodbye."),
  ]);
  try {
    await c.call("session/create", { session: "guard", tools: [GATE_TOOL] });
    await respond(c, "guard", "Hello");
    const id = c.request("session/respond", { session: "guard", prompt: "Open the north gate." });
    const call = await c.toolCall(1);
    c.reply(call.id as string, { output: { opened: false } });
    assert.ok("result" in await c.response(id));
    await respond(c, "guard", "Try again.");
    await respond(c, "guard", "Bye.");
    assert.deepEqual(summary(infos), [
      [false, true, "new", 2, true],
      // Step 0 of the tool turn continues, but a step that ends in tool calls is not kept.
      [true, false, "continued", 1, false],
      // Step 1 (empty prompt after the tool output) is built from the whole history and not kept: the
      // bridge's transcript has no empty prompt, so no later history could extend it.
      [false, true, "new", 7, false],
      [false, true, "new", 8, true],
      [true, false, "continued", 1, true],
    ]);
    assert.equal(sent[2].prompt, "");
  } finally {
    await finish(c);
  }
});

Deno.test("native sessions: two sessions with the same instructions keep their own live sessions", async () => {
  const { c, sent, infos } = client([text("A1"), text("B1"), text("A2"), text("B2"), text("A3")]);
  try {
    await c.call("session/create", { session: "a", instructions: "Same." });
    await c.call("session/create", { session: "b", instructions: "Same." });
    await respond(c, "a", "hello");
    await respond(c, "b", "hello");
    await respond(c, "a", "again");
    await respond(c, "b", "again");
    await respond(c, "a", "third");
    assert.deepEqual(sent.map((s) => s.native), [
      { key: "n1", continue: false },
      { key: "n2", continue: false },
      { key: "n1", continue: true },
      { key: "n2", continue: true },
      { key: "n1", continue: true },
    ]);
    assert.deepEqual(infos.map((i) => i.rebuilt), [true, true, false, false, false]);
  } finally {
    await finish(c);
  }
});

Deno.test("native sessions: structured answers continue when the stored value is the answer", async () => {
  const schema = {
    type: "object",
    properties: { mood: { type: "string" }, line: { type: "string" } },
    required: ["mood", "line"],
  };
  const { c, infos } = client([
    { result: { kind: "structured", value: { mood: "calm", line: "Hello." }, usage: null } },
    text("Plain now."),
    // Keys out of the schema's order: the bridge stores them reordered, which is an edit.
    { result: { kind: "structured", value: { line: "Hm.", mood: "tense" }, usage: null } },
    text("After the reorder."),
  ]);
  try {
    await c.call("session/create", { session: "s" });
    await respond(c, "s", "Greet.", { schema });
    await respond(c, "s", "Talk.");
    await respond(c, "s", "Again.", { schema });
    await respond(c, "s", "And now?");
    assert.deepEqual(summary(infos), [
      [false, true, "new", 1, true],
      [true, false, "continued", 1, true],
      [true, false, "continued", 1, true],
      [false, true, "new", 7, true],
    ]);
  } finally {
    await finish(c);
  }
});

Deno.test("native sessions: nativeSessions 0 turns keeping off; a failed step leaves nothing to continue", async () => {
  const off = client([text("a"), text("b")], 0);
  try {
    await off.c.call("session/create", { session: "s" });
    await respond(off.c, "s", "one");
    await respond(off.c, "s", "two");
    assert.deepEqual(summary(off.infos), [[false, true, "new", 1, false], [false, true, "new", 3, false]]);
  } finally {
    await finish(off.c);
  }
  const failing = client([
    text("a"),
    { error: { code: "guardrail_violation", message: "No." } },
    text("c"),
  ]);
  try {
    await failing.c.call("session/create", { session: "s", options: { maxAttempts: 1 } });
    await respond(failing.c, "s", "one");
    const r = await failing.c.response(failing.c.request("session/respond", { session: "s", prompt: "two" }));
    assert.equal((r.error as JsonObject).code, -32002);
    await respond(failing.c, "s", "three");
    // The failed step took the live session and ended it; the history is unchanged, so the third turn
    // has nothing to continue.
    assert.deepEqual(failing.sent.map((s) => s.native), [
      { key: "n1", continue: false },
      { key: "n1", continue: true },
      { key: "n2", continue: false },
    ]);
    assert.deepEqual(summary(failing.infos), [[false, true, "new", 1, true], [false, true, "new", 3, true]]);
  } finally {
    await finish(failing.c);
  }
});

Deno.test("native sessions: an NPC's memory, attitude and secret changes keep its live session (they ride on the prompt)", async () => {
  const { c, sent, infos } = client([
    text("[neutral] What do you want?"),
    text("[happy] Thanks."),
    text("[happy] Fine, I will tell you."),
  ]);
  try {
    await c.call("npc/create", {
      npc: "gorm",
      persona: { name: "Gorm", secrets: ["He deserted."] },
      options: { replyFormat: "text", toolChoice: "none" },
    });
    const talk = async (line: string) => {
      const response = await c.response(c.request("npc/talk", { npc: "gorm", line }));
      assert.ok("result" in response, JSON.stringify(response));
    };
    await talk("Hello.");
    await c.call("npc/update", { npc: "gorm", memory: { facts: ["Aria helped."], relationship: 30 } });
    await talk("I fixed your forge.");
    await c.call("npc/update", { npc: "gorm", memory: { relationship: 60 } });
    await talk("Any secrets?");
    assert.deepEqual(summary(infos), [
      [false, true, "new", 2, true],
      [true, false, "continued", 1, true],
      [true, false, "continued", 1, true],
    ]);
    assert.equal(new Set(sent.map((s) => s.instructions)).size, 1, "the instructions never changed");
    assert.match(String(sent[2].prompt), /Your secret: He deserted\./);
  } finally {
    await finish(c);
  }
});
