/**
 * Members of a scripted `model` parameter that nothing reads (`"step"` for `steps`, `"delay"` for `delayMs`,
 * a tool call's `"args"`) are reported in the `warnings` of every method that takes a `model`, worded like the
 * ignored members of an `openai` or `llama` spec, in key order, after the method's own warnings. Through the
 * wire, with whole results.
 */
import assert from "node:assert/strict";
import type { JsonObject, JsonValue } from "../../src/protocol/json.ts";
import { WireClient } from "../helpers/wire.ts";

/** The whole response to one request on a fresh bridge. */
async function answer(method: string, params: JsonObject): Promise<JsonObject> {
  const wire = new WireClient();
  try {
    wire.send({ jsonrpc: "2.0", id: 1, method, params });
    return await wire.response(1);
  } finally {
    await wire.engine.shutdown();
  }
}

const REPLY = {
  json: { emotion: "happy", line: "Hi.", player_options: ["a", "b", "c"], ends_conversation: false },
};

/** A script with a typo at every level, in the order its keys are written. */
const TYPOS: JsonObject = {
  type: "scripted",
  stpes: [{ text: "never played" }],
  steps: [
    { text: "Wait.", delay: 500, chunk: 2 },
    { toolCalls: [{ name: "open_gate", args: { gate: "north" } }, { name: "look", argument: {}, ID: "x" }] },
    { json: { a: 1 }, dalayMs: 5 },
  ],
  fallbak: { text: "Done." },
  fallback: { template: "{prompt}", chunk: 1 },
};
const TYPO_WARNINGS = [
  "Unknown parameter 'model.stpes' was ignored (did you mean 'steps'?).",
  "Unknown parameter 'model.steps[0].delay' was ignored (did you mean 'delayMs'?).",
  "Unknown parameter 'model.steps[0].chunk' was ignored (did you mean 'chunks'?).",
  "Unknown parameter 'model.steps[1].toolCalls[0].args' was ignored.",
  "Unknown parameter 'model.steps[1].toolCalls[1].argument' was ignored (did you mean 'arguments'?).",
  "Unknown parameter 'model.steps[1].toolCalls[1].ID' was ignored (did you mean 'id'?).",
  "Unknown parameter 'model.steps[2].dalayMs' was ignored (did you mean 'delayMs'?).",
  "Unknown parameter 'model.fallbak' was ignored (did you mean 'fallback'?).",
  "Unknown parameter 'model.fallback.chunk' was ignored (did you mean 'chunks'?).",
];

Deno.test("scripted warnings: session/create names every unknown member of the script, in key order, after its own; none for a script without typos", async () => {
  assert.deepEqual(await answer("session/create", { session: "s", colour: "red", model: TYPOS }), {
    jsonrpc: "2.0",
    id: 1,
    result: { session: "s", warnings: ["Unknown parameter 'colour' was ignored.", ...TYPO_WARNINGS] },
  });
  // The users' case: "step" for "steps" is an empty script that answers "(script exhausted)".
  assert.deepEqual(
    await answer("session/create", { session: "s", model: { type: "scripted", step: [{ text: "Hi" }] } }),
    {
      jsonrpc: "2.0",
      id: 1,
      result: {
        session: "s",
        warnings: ["Unknown parameter 'model.step' was ignored (did you mean 'steps'?)."],
      },
    },
  );
  // A script that only uses known keys warns about nothing.
  for (
    const model of [
      "scripted",
      { type: "scripted" },
      {
        type: "scripted",
        steps: [
          { text: "Hi", chunks: 2, delayMs: 0 },
          { toolCalls: [{ name: "t", arguments: { a: 1 }, id: "c1" }], delayMs: null },
          { json: { free: { form: 1 } } },
          { template: "{prompt}" },
          { error: "refusal", message: "No." },
        ],
        fallback: null,
      },
      // A tool call's members are only read when the step plays its calls (`text` wins over `toolCalls`).
      { type: "scripted", steps: [{ text: "Hi", toolCalls: [{ name: "t", args: {} }] }] },
    ] as JsonValue[]
  ) {
    assert.deepEqual(await answer("session/create", { session: "s", model }), {
      jsonrpc: "2.0",
      id: 1,
      result: { session: "s", warnings: [] },
    }, JSON.stringify(model));
  }
  // An invalid script is still an error (the typo before it is not reported).
  assert.deepEqual(
    await answer("session/create", {
      session: "s",
      model: { type: "scripted", steps: [{ text: "a", delay: 5 }, { say: "b" }] },
    }),
    {
      jsonrpc: "2.0",
      id: 1,
      error: {
        code: -32602,
        message: "'model.steps[1]' must contain one of 'text', 'toolCalls', 'json', 'template' or 'error'.",
        data: { code: "invalid_params" },
      },
    },
  );
});

Deno.test("scripted warnings: npc/create and npc/restore, after their unknown keys", async () => {
  const model = { type: "scripted", steps: [REPLY], fallbak: REPLY };
  assert.deepEqual(
    await answer("npc/create", { npc: "mira", persona: { name: "Mira", hair: "red" }, model }),
    {
      jsonrpc: "2.0",
      id: 1,
      result: {
        npc: "mira",
        tools: [],
        warnings: [
          "Unknown parameter 'persona.hair' was ignored.",
          "Unknown parameter 'model.fallbak' was ignored (did you mean 'fallback'?).",
        ],
      },
    },
  );
  // npc/restore takes a save from npc/state and a model like npc/create.
  const wire = new WireClient();
  try {
    await wire.call("npc/create", { npc: "mira", persona: { name: "Mira" } });
    const { state } = await wire.call("npc/state", { npc: "mira" }) as { state: JsonObject };
    wire.send({ jsonrpc: "2.0", id: 7, method: "npc/restore", params: { npc: "bram", state, model } });
    assert.deepEqual(await wire.response(7), {
      jsonrpc: "2.0",
      id: 7,
      result: {
        npc: "bram",
        tools: [],
        warnings: ["Unknown parameter 'model.fallbak' was ignored (did you mean 'fallback'?)."],
      },
    });
  } finally {
    await wire.engine.shutdown();
  }
});

Deno.test("scripted warnings: decision/decide, decision/decideMany and content/generate, after their own", async () => {
  const decision = { reasoning: "Safer.", choice: "wait", confidence: 80 };
  const decide = await answer("decision/decide", {
    situation: "A door.",
    options: [{ id: "open", description: "Open it." }, { id: "wait", description: "Wait." }],
    mood: "calm",
    model: { type: "scripted", steps: [{ json: decision, delay: 1 }] },
  });
  assert.deepEqual((decide.result as JsonObject).warnings, [
    "Unknown parameter 'mood' was ignored.",
    "Unknown parameter 'model.steps[0].delay' was ignored (did you mean 'delayMs'?).",
  ], JSON.stringify(decide));
  assert.equal((decide.result as JsonObject).optionID, "wait", JSON.stringify(decide));
  const many = await answer("decision/decideMany", {
    requests: [{ situation: "A door.", options: [{ id: "open", description: "Open it." }], mood: "calm" }],
    model: { type: "scripted", step: [] },
  });
  assert.deepEqual((many.result as JsonObject).warnings, [
    "Unknown parameter 'requests[0].mood' was ignored.",
    "Unknown parameter 'model.step' was ignored (did you mean 'steps'?).",
  ], JSON.stringify(many));
  const content = await answer("content/generate", {
    prompt: "A sword.",
    schema: { type: "object", properties: { name: { type: "string", format: "uuid" } }, required: ["name"] },
    model: { type: "scripted", steps: [{ json: { name: "Rusty Sword" }, chunk: 1 }] },
  });
  const result = content.result as JsonObject;
  assert.deepEqual(result.content, { name: "Rusty Sword" }, JSON.stringify(content));
  const warnings = result.warnings as string[];
  assert.equal(warnings.length, 2, JSON.stringify(warnings));
  assert.ok(warnings[0].includes("format"), JSON.stringify(warnings));
  assert.equal(warnings[1], "Unknown parameter 'model.steps[0].chunk' was ignored (did you mean 'chunks'?).");
});

Deno.test("scripted warnings: the script plays as before: a warned-about 'args' leaves the call's arguments empty", async () => {
  const wire = new WireClient();
  try {
    const created = await wire.call("session/create", {
      session: "s",
      tools: [{ type: "function", function: { name: "open_gate", description: "Opens a gate." } }],
      model: { type: "scripted", steps: [{ toolCalls: [{ name: "open_gate", args: { gate: "north" } }] }] },
    });
    assert.deepEqual(created, {
      session: "s",
      warnings: ["Unknown parameter 'model.steps[0].toolCalls[0].args' was ignored."],
    });
    const id = wire.request("session/respond", { session: "s", prompt: "Open." });
    const call = await wire.waitFor((m) => m.method === "tool/call");
    assert.deepEqual(((call.params as JsonObject).call as JsonObject).arguments, {}, JSON.stringify(call));
    wire.send({ jsonrpc: "2.0", id: call.id, result: { output: "opened" } });
    assert.equal(((await wire.response(id)).result as JsonObject).text, "(script exhausted)");
  } finally {
    await wire.engine.shutdown();
  }
});

Deno.test("scripted warnings: 'chunks' on a step that is not a text step says why it has no effect", async () => {
  const model: JsonObject = {
    type: "scripted",
    steps: [
      { json: { line: "Hi." }, chunks: 3 },
      { template: "{prompt}", chunks: 2 },
      { text: "Streams.", chunks: 2 },
      { toolCalls: [{ name: "look" }], chunks: 2 },
    ],
    fallback: { error: "rate_limited", chunks: 2 },
  };
  const wire = new WireClient();
  wire.send({ jsonrpc: "2.0", id: 1, method: "session/create", params: { session: "s", model } });
  assert.deepEqual(await wire.response(1), {
    jsonrpc: "2.0",
    id: 1,
    result: {
      session: "s",
      warnings: [
        "'model.steps[0].chunks' has no effect: only a 'text' step streams in pieces; a 'json' step's answer comes whole.",
        "'model.steps[1].chunks' has no effect: only a 'text' step streams in pieces; a 'template' step's answer streams in about 3.",
        "'model.steps[3].chunks' has no effect: only a 'text' step streams in pieces; a 'toolCalls' step streams no text.",
        "'model.fallback.chunks' has no effect: only a 'text' step streams in pieces; an 'error' step streams no text.",
      ],
    },
  });
  // The session was made and serves its first turn: the json step's answer, whole.
  const id = wire.request("session/respond", { session: "s", prompt: "Hello." });
  assert.equal(((await wire.response(id)).result as JsonObject).text, '{"line":"Hi."}');
  await wire.engine.shutdown();
});
