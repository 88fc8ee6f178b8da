/**
 * End to end on Linux: "system" sessions run through the whole BridgeEngine (agent loop, client tools,
 * streaming, schemas, cancellation) with the system model backed by the C test double.
 */
import assert from "node:assert/strict";
import type { JsonObject, JsonValue } from "../../src/protocol/json.ts";
import { closeSystemModels, createSystemModel, systemModelsIdle } from "../../src/models/system.ts";
import { WireClient } from "../helpers/wire.ts";
import { requireDouble } from "./double.ts";

const PATH = requireDouble();
const AVAILABILITY = {
  available: true,
  contextSize: 8192,
  variant: "AFM 3 Core Advanced",
  supportedLanguages: ["en", "de", "da"],
};

const GATE_TOOL = {
  name: "open_gate",
  description: "Ask the game engine to open a named gate.",
  parameters: { type: "object", properties: { gate: { type: "string" } }, required: ["gate"] },
};

/** A wire client whose system model is the double; `steps` are played per step request, in order. */
function client(steps: JsonObject[], availability: JsonObject = AVAILABILITY) {
  const sent: JsonObject[] = [];
  const queue = [...steps];
  const c = new WireClient({
    systemModel: () =>
      createSystemModel({
        libraryPath: PATH,
        decorateRequest: (body) => {
          if (body.op === "availability") {
            body["x-double"] = { result: availability };
            return;
          }
          sent.push(structuredClone(body));
          const next = queue.shift();
          if (next) body["x-double"] = next;
        },
      }),
  });
  return { c, sent };
}

async function finish(c: WireClient): Promise<void> {
  await c.close();
  closeSystemModels();
  await systemModelsIdle();
}

function result(response: JsonObject): JsonObject {
  assert.ok("result" in response, `expected a result, got ${JSON.stringify(response)}`);
  return response.result as JsonObject;
}

function events(c: WireClient, id: JsonValue, type: string): JsonObject[] {
  return c.related(id)
    .filter((m) => m.method === "session/event")
    .map((m) => (m.params as JsonObject).event as JsonObject)
    .filter((e) => e.type === type);
}

Deno.test("e2e: initialize and model/availability report the plugin's values", async () => {
  const { c } = client([]);
  try {
    const init = await c.call("initialize", { client: { name: "test" }, protocolVersion: "1.0" });
    const expected = {
      available: true,
      contextSize: 8192,
      variant: "AFM 3 Core Advanced",
      supportedLanguages: ["da", "de", "en"],
    };
    assert.deepEqual(init.model, expected);
    assert.deepEqual(await c.call("model/availability"), expected);
  } finally {
    await finish(c);
  }
});

Deno.test("e2e: an unavailable plugin: availability reason, turns fail with -32001", async () => {
  const { c, sent } = client([], {
    available: false,
    reason: "apple_intelligence_not_enabled",
    contextSize: 4096,
    supportedLanguages: [],
  });
  try {
    const availability = await c.call("model/availability");
    assert.equal(availability.available, false);
    assert.equal(availability.reason, "apple_intelligence_not_enabled");
    await c.call("session/create", { session: "s" });
    const response = await c.response(c.request("session/respond", { session: "s", prompt: "Hi" }));
    const error = response.error as JsonObject;
    assert.equal(error.code, -32001);
    assert.equal((error.data as JsonObject).code, "model_unavailable");
    assert.match(error.message as string, /apple_intelligence_not_enabled/);
    assert.equal(sent.length, 0, "no step reached the plugin");
  } finally {
    await finish(c);
  }
});

Deno.test("e2e: a plain turn (not streamed)", async () => {
  const { c, sent } = client([{ result: { kind: "text", text: "Halt! Who goes there?", usage: null } }]);
  try {
    await c.call("session/create", { session: "guard", instructions: "You are a castle guard." });
    const r = result(await c.response(c.request("session/respond", { session: "guard", prompt: "Hello" })));
    assert.equal(r.text, "Halt! Who goes there?");
    assert.equal(sent.length, 1);
    assert.equal(sent[0].op, "step");
    assert.equal(sent[0].prompt, "Hello");
    assert.match(sent[0].instructions as string, /^You are a castle guard\./);
    assert.deepEqual(sent[0].history, []);
    assert.equal(sent[0].toolCallingMode, "disallowed");
  } finally {
    await finish(c);
  }
});

Deno.test("e2e: streaming snapshots become text deltas that add up to the answer", async () => {
  const snapshots = ["The", "The north", "The north gate", "The north gate is shut."];
  const { c } = client([{
    events: snapshots.map((text) => ({ type: "text", text })),
    delayMs: 2,
    result: { kind: "text", text: snapshots[3], usage: null },
  }]);
  try {
    await c.call("session/create", { session: "s" });
    const id = c.request("session/respond", { session: "s", prompt: "Status?", stream: true });
    const r = result(await c.response(id));
    assert.equal(r.text, snapshots[3]);
    const texts = events(c, id, "text");
    assert.ok(texts.length >= 1);
    assert.equal(texts.map((e) => e.delta).join(""), snapshots[3]);
    assert.equal(texts.at(-1)!.text, snapshots[3]);
  } finally {
    await finish(c);
  }
});

Deno.test("e2e: forced first-step tool call answered via tool/call, then the model answers", async () => {
  const { c, sent } = client([
    {
      result: {
        kind: "toolCalls",
        calls: [{ name: "open_gate", arguments: { gate: "north" } }],
        usage: null,
      },
    },
    { result: { kind: "text", text: "The north gate stays shut: the chain is jammed.", usage: null } },
  ]);
  try {
    await c.call("session/create", {
      session: "guard",
      tools: [GATE_TOOL],
      options: { toolChoice: "required" },
    });
    const id = c.request("session/respond", {
      session: "guard",
      prompt: "Open the north gate.",
      stream: true,
    });
    const call = await c.toolCall(1);
    const params = call.params as JsonObject;
    const callInfo = params.call as JsonObject;
    assert.equal(callInfo.name, "open_gate");
    assert.deepEqual(callInfo.arguments, { gate: "north" });
    c.reply(call.id as string, { output: { opened: false, reason: "the chain is jammed" } });
    const r = result(await c.response(id));
    assert.equal(r.text, "The north gate stays shut: the chain is jammed.");
    const toolCalls = r.toolCalls as JsonObject[];
    assert.equal(toolCalls.length, 1);

    // Step 0: the tool is forced; step 1: the output is in the history, empty prompt, tools allowed.
    assert.equal(sent.length, 2);
    assert.equal(sent[0].toolCallingMode, "required");
    assert.deepEqual((sent[0].tools as JsonObject[]).map((t) => t.name), ["open_gate"]);
    assert.equal(typeof (sent[0].tools as JsonObject[])[0].parameters, "object");
    assert.equal(sent[0].prompt, "Open the north gate.");
    assert.equal(sent[1].toolCallingMode, "allowed");
    assert.equal(sent[1].prompt, "");
    const history = sent[1].history as JsonObject[];
    assert.deepEqual(history.map((e) => e.role), ["user", "response", "tool"]);
    const calls = history[1].toolCalls as JsonObject[];
    assert.equal(calls[0].name, "open_gate");
    assert.equal(calls[0].id, callInfo.id, "the transcript uses the protocol call id");
    assert.deepEqual(JSON.parse(calls[0].arguments as string), { gate: "north" });
    assert.equal(history[2].toolCallID, calls[0].id);
    assert.equal(history[2].toolName, "open_gate");
    assert.match(JSON.stringify(history[2].contents), /chain is jammed/);
  } finally {
    await finish(c);
  }
});

Deno.test("e2e: explicit tool choice offers respond_directly on step 0; choosing it disallows tools", async () => {
  const { c, sent } = client([
    { result: { kind: "toolCalls", calls: [{ name: "respond_directly", arguments: {} }], usage: null } },
    { result: { kind: "text", text: "Good evening, traveller.", usage: null } },
  ]);
  try {
    await c.call("session/create", { session: "s", tools: [GATE_TOOL], options: { toolChoice: "explicit" } });
    const r = result(
      await c.response(c.request("session/respond", { session: "s", prompt: "Good evening!" })),
    );
    assert.equal(r.text, "Good evening, traveller.");
    assert.deepEqual(r.toolCalls ?? [], []);
    assert.equal(
      c.messages.filter((m) => m.method === "tool/call").length,
      0,
      "respond_directly is not a client tool",
    );
    assert.equal(sent[0].toolCallingMode, "required");
    assert.deepEqual((sent[0].tools as JsonObject[]).map((t) => t.name).sort(), [
      "open_gate",
      "respond_directly",
    ]);
    assert.equal(sent[1].toolCallingMode, "disallowed");
    assert.deepEqual(sent[1].tools, []);
  } finally {
    await finish(c);
  }
});

Deno.test("e2e: a schema turn sends a generation schema and returns structured output", async () => {
  const value = { reasoning: "The guard is tired.", choice: "refuse" };
  const { c, sent } = client([{
    events: [{ type: "partial", value: { reasoning: "The guard" } }],
    delayMs: 1,
    result: { kind: "structured", value, usage: null },
  }]);
  try {
    await c.call("session/create", { session: "s" });
    const schema = {
      type: "object",
      properties: { reasoning: { type: "string" }, choice: { type: "string", enum: ["open", "refuse"] } },
      required: ["reasoning", "choice"],
    };
    const id = c.request("session/respond", { session: "s", prompt: "Decide.", schema, stream: true });
    const r = result(await c.response(id));
    assert.deepEqual(r.structured, value);
    assert.equal(r.text, JSON.stringify(value));
    const generationSchema = sent[0].responseSchema as JsonObject;
    assert.equal(typeof generationSchema, "object");
    assert.ok(generationSchema !== null);
    assert.ok(JSON.stringify(generationSchema).includes("refuse"));
    assert.ok(events(c, id, "partial").length >= 1);
  } finally {
    await finish(c);
  }
});

Deno.test("e2e: session/cancel mid-stream answers -32009 and the plugin stops", async () => {
  const { c } = client([{ events: [{ type: "text", text: "Let me" }], hang: true }]);
  try {
    await c.call("session/create", { session: "s" });
    const id = c.request("session/respond", { session: "s", prompt: "Talk forever.", stream: true });
    await c.waitFor((m) => m.method === "session/event" && (m.params as JsonObject).requestId === id);
    c.send({ method: "session/cancel", params: { session: "s" } });
    const response = await c.response(id);
    assert.equal((response.error as JsonObject).code, -32009);
    const transcript = await c.call("session/transcript", { session: "s" });
    const entries = ((transcript.transcript as JsonObject).transcript as JsonObject).entries as JsonObject[];
    assert.ok(!entries.some((e) => e.role === "user"), "a cancelled turn leaves no trace");
  } finally {
    await finish(c);
  }
});

Deno.test("e2e: plugin errors map to protocol errors on the wire", async () => {
  const { c } = client([
    { error: { code: "guardrail_violation", message: "Blocked by the guardrails." } },
    {
      error: {
        code: "context_size_exceeded",
        message: "Too long.",
        detail: { contextSize: 8192, tokenCount: 9000 },
      },
    },
  ]);
  try {
    await c.call("session/create", { session: "s", options: { maxAttempts: 1 } });
    const a = await c.response(c.request("session/respond", { session: "s", prompt: "x" }));
    assert.equal((a.error as JsonObject).code, -32002);
    const b = await c.response(c.request("session/respond", { session: "s", prompt: "y" }));
    const error = b.error as JsonObject;
    assert.equal(error.code, -32004);
    assert.equal((error.data as JsonObject).tokenCount, 9000);
  } finally {
    await finish(c);
  }
});

Deno.test("e2e: parallel calls keep the plugin's order and its native ids become the transcript ids", async () => {
  const LOOK = {
    name: "look",
    description: "Look somewhere.",
    parameters: { type: "object", properties: {} },
  };
  const { c, sent } = client([
    {
      result: {
        kind: "toolCalls",
        // The plugin lists them in the transcript entry's order, each with the entry's ToolCall.id.
        calls: [
          { name: "open_gate", arguments: { gate: "north" }, nativeId: "fm-call-1" },
          { name: "look", arguments: {}, nativeId: "fm-call-2" },
        ],
        usage: null,
      },
    },
    { result: { kind: "text", text: "Done.", usage: null } },
  ]);
  try {
    await c.call("session/create", { session: "s", tools: [GATE_TOOL, LOOK] });
    const id = c.request("session/respond", { session: "s", prompt: "Both." });
    const first = await c.toolCall(1);
    const second = await c.toolCall(2);
    assert.deepEqual(
      [first, second].map((m) => ((m.params as JsonObject).call as JsonObject).name),
      ["open_gate", "look"],
    );
    c.reply(second.id as string, { output: "nothing" });
    c.reply(first.id as string, { output: "opened" });
    assert.ok("result" in await c.response(id));
    const history = sent[1].history as JsonObject[];
    const calls = history[1].toolCalls as JsonObject[];
    assert.deepEqual(calls.map((call) => call.id), ["fm-call-1", "fm-call-2"]);
    assert.deepEqual(history.slice(2).map((e) => [e.toolCallID, e.toolName]), [
      ["fm-call-1", "open_gate"],
      ["fm-call-2", "look"],
    ]);
  } finally {
    await finish(c);
  }
});

Deno.test("e2e: a rate_limited plugin error (what ModelManagerError 1012 maps to) is retried; tool_failed is not", async () => {
  const { c, sent } = client([
    {
      error: {
        code: "rate_limited",
        message: "The on-device model is busy.",
        detail: { retryAfterSeconds: 0 },
      },
    },
    { result: { kind: "text", text: "Second try.", usage: null } },
    { error: { code: "tool_failed", message: "Tool 'open_gate' failed: broken." } },
  ]);
  try {
    await c.call("session/create", { session: "s", options: { maxAttempts: 2 } });
    assert.equal(
      result(await c.response(c.request("session/respond", { session: "s", prompt: "x" }))).text,
      "Second try.",
    );
    assert.equal(sent.length, 2);
    const failed = await c.response(c.request("session/respond", { session: "s", prompt: "y" }));
    assert.equal((failed.error as JsonObject).code, -32008);
    assert.equal(sent.length, 3, "not retried");
  } finally {
    await finish(c);
  }
});
