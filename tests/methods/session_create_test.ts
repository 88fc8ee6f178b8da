/**
 * §5 `session/create` over the wire: every option, defaults, validation errors (messages name the parameter)
 * and their order, session ids, exists/limit errors, history resume, model errors and warnings.
 */
import assert from "node:assert/strict";
import { scripted, WireClient } from "../helpers/wire.ts";
import { invalidParams, tool } from "../helpers/messages.ts";
import type { JsonObject, JsonValue } from "../../src/protocol/json.ts";
import { UnavailableModel } from "../../src/models/unavailable.ts";

async function createError(c: WireClient, params: JsonObject): Promise<JsonValue> {
  const id = c.request("session/create", params);
  const r = await c.response(id);
  assert.ok("error" in r, `expected an error for ${JSON.stringify(params)}: ${JSON.stringify(r)}`);
  return r.error;
}

async function listEntry(c: WireClient, id: string): Promise<JsonObject> {
  const list = await c.call("session/list");
  return (list.sessions as JsonObject[]).find((s) => s.session === id)!;
}

const TOOL = { name: "open_gate", description: "Open a gate." };

Deno.test("session/create defaults: generated id, warnings [], list entry", async () => {
  const c = new WireClient();
  c.request("session/create", { model: "scripted" }, 1);
  assert.deepEqual(await c.response(1), { jsonrpc: "2.0", id: 1, result: { session: "s1", warnings: [] } });
  assert.equal(c.lines[0], '{"jsonrpc":"2.0","id":1,"result":{"session":"s1","warnings":[]}}');
  const entry = await listEntry(c, "s1");
  assert.deepEqual(Object.keys(entry), [
    "session",
    "model",
    "tools",
    "busy",
    "pendingOperations",
    "entries",
    "createdAt",
  ]);
  assert.deepEqual({ ...entry, createdAt: "" }, {
    session: "s1",
    model: "scripted",
    tools: [],
    busy: false,
    pendingOperations: 0,
    entries: 0,
    createdAt: "",
  });
  assert.ok(!Number.isNaN(Date.parse(entry.createdAt as string)));
  // the default policy: auto with 4 rounds and 12 calls
  await c.call("session/create", { session: "d", tools: [TOOL], model: scripted({ text: "hi" }) });
  const r = await c.call("session/respond", { session: "d", prompt: "x" });
  assert.deepEqual(r.steps, [
    {
      index: 0,
      completedToolRounds: 0,
      toolCallingMode: "allowed",
      enabledTools: ["open_gate"],
      trimmedEntries: 0,
    },
  ]);
  await c.close();
});

Deno.test("session/create accepts every option at once", async () => {
  const c = new WireClient();
  const r = await c.call("session/create", {
    session: "all",
    instructions: "You are a guard.",
    tools: [TOOL, tool("ring_bell")],
    options: {
      toolChoice: { tool: "ring_bell" },
      maxToolRounds: 2,
      maxToolCalls: 3,
      enabledTools: ["open_gate", "ring_bell"],
      temperature: 0.5,
      maxResponseTokens: 100,
      sampling: { topK: 5, seed: 7 },
      toolTimeoutSeconds: 30,
      trimHistory: false,
      reservedResponseTokens: 0,
      maxAttempts: 1,
    },
    model: scripted({ text: "ok" }),
  });
  assert.deepEqual(r, { session: "all", warnings: [] });
  const entry = await listEntry(c, "all");
  assert.equal(entry.instructions, "You are a guard.");
  assert.deepEqual(entry.tools, ["open_gate", "ring_bell"]);
  const samplings: JsonValue[] = ["greedy", { topP: 0.9 }, { topP: 0 }, { topP: 1, seed: 0 }, { topK: 1 }, {
    type: "x",
    topK: 2,
  }];
  for (const sampling of samplings) {
    const ok = await c.call("session/create", { options: { sampling }, model: "scripted" });
    assert.deepEqual(ok.warnings, []);
  }
  await c.close();
});

Deno.test("session/create option validation errors name the parameter", async () => {
  const c = new WireClient();
  const cases: Array<[JsonObject, string]> = [
    [{ options: 1 }, "'options' must be an object."],
    [{ options: [] }, "'options' must be an object."],
    [
      { options: { toolChoice: "bogus" } },
      `'options.toolChoice' must be "auto", "none", "required", "explicit" or {"tool": "<name>"}; got "bogus".`,
    ],
    [
      { options: { toolChoice: "open_gate" }, tools: [TOOL] },
      `'options.toolChoice' must be "auto", "none", "required", "explicit" or {"tool": "<name>"}; got "open_gate".`,
    ],
    [
      { options: { toolChoice: 3 } },
      `'options.toolChoice' must be "auto", "none", "required", "explicit" or {"tool": "<name>"}; got 3.`,
    ],
    [{ options: { toolChoice: { x: 1 } } }, `'options.toolChoice' object must be {"tool": "<name>"}.`],
    [{ options: { toolChoice: { tool: "" } } }, `'options.toolChoice' object must be {"tool": "<name>"}.`],
    [
      { options: { toolChoice: { tool: "nope" } }, tools: [TOOL] },
      "'options.toolChoice' names tool 'nope', which is not in 'tools'.",
    ],
    [
      { options: { toolChoice: { tool: "nope" } } },
      "'options.toolChoice' names tool 'nope', which is not in 'tools'.",
    ],
    [{ options: { maxToolRounds: -1 } }, "Parameter 'options.maxToolRounds' must be at least 0."],
    [{ options: { maxToolRounds: 1.5 } }, "Parameter 'options.maxToolRounds' must be an integer; got 1.5."],
    [
      { options: { maxToolRounds: 1e300 } },
      "Parameter 'options.maxToolRounds' must be an integer; got 1e+300.",
    ],
    [{ options: { maxToolCalls: "x" } }, `Parameter 'options.maxToolCalls' must be an integer; got "x".`],
    [{ options: { maxToolCalls: -3 } }, "Parameter 'options.maxToolCalls' must be at least 0."],
    [
      { options: { enabledTools: "open_gate" } },
      `Parameter 'options.enabledTools' must be an array; got "open_gate".`,
    ],
    [{ options: { enabledTools: ["a", 1] } }, "Parameter 'options.enabledTools[1]' must be a string; got 1."],
    [{ options: { temperature: -0.1 } }, "Parameter 'options.temperature' must be at least 0."],
    [{ options: { temperature: "hot" } }, `Parameter 'options.temperature' must be a number; got "hot".`],
    [{ options: { maxResponseTokens: 0 } }, "Parameter 'options.maxResponseTokens' must be at least 1."],
    [{ options: { sampling: "hot" } }, `'options.sampling' must be "greedy", {"topK": n} or {"topP": p}.`],
    [{ options: { sampling: 3 } }, `'options.sampling' must be "greedy", {"topK": n} or {"topP": p}.`],
    [{ options: { sampling: { topP: 2 } } }, "'options.sampling.topP' must be between 0 and 1."],
    [{ options: { sampling: { topP: -0.5 } } }, "'options.sampling.topP' must be between 0 and 1."],
    [{ options: { sampling: {} } }, "'options.sampling' must contain 'topK' or 'topP'."],
    [{ options: { sampling: { seed: 1 } } }, "'options.sampling' must contain 'topK' or 'topP'."],
    [
      { options: { toolTimeoutSeconds: -1 } },
      "Parameter 'options.toolTimeoutSeconds' must be a number of seconds from 0 to 86400 (0 means no limit); got -1.",
    ],
    [
      { options: { toolTimeoutSeconds: 86401 } },
      "Parameter 'options.toolTimeoutSeconds' must be a number of seconds from 0 to 86400 (0 means no limit); got 86401.",
    ],
    [
      { options: { toolTimeoutSeconds: "x" } },
      `Parameter 'options.toolTimeoutSeconds' must be a number of seconds from 0 to 86400 (0 means no limit); got "x".`,
    ],
    [
      { options: { toolTimeoutSeconds: 1e300 } },
      "Parameter 'options.toolTimeoutSeconds' must be a number of seconds from 0 to 86400 (0 means no limit); got 1e+300.",
    ],
    [{ options: { trimHistory: "yes" } }, `Parameter 'options.trimHistory' must be a boolean; got "yes".`],
    [
      { options: { reservedResponseTokens: -1 } },
      "Parameter 'options.reservedResponseTokens' must be at least 0.",
    ],
    [{ options: { maxAttempts: 0 } }, "Parameter 'options.maxAttempts' must be at least 1."],
    [{ instructions: 5 }, "Parameter 'instructions' must be a string; got 5."],
    [{ session: 5 }, "Parameter 'session' must be a string; got 5."],
    [{ session: "" }, "'session' must be 1-128 printable characters; got ''."],
    [{ session: "x".repeat(129) }, `'session' must be 1-128 printable characters; got '${"x".repeat(129)}'.`],
    [{ session: "a\nb" }, "'session' must be 1-128 printable characters; got 'a\nb'."],
    [{ session: "a\u0000" }, "'session' must be 1-128 printable characters; got 'a\u0000'."],
  ];
  for (const [params, message] of cases) {
    assert.deepEqual(await createError(c, { ...params, model: "scripted" }), invalidParams(message));
  }
  // nothing was created
  assert.deepEqual(await c.call("session/list"), { sessions: [] });
  // 128 printable characters (including spaces and non-ASCII) are fine
  const long = "é".repeat(64) + " ".repeat(64);
  assert.equal((await c.call("session/create", { session: long, model: "scripted" })).session, long);
  await c.close();
});

Deno.test("session/create tool definition errors", async () => {
  const c = new WireClient();
  const cases: Array<[JsonValue, JsonObject]> = [
    ["open_gate", invalidParams("'tools' must be an array of tool definitions.")],
    [{ name: "x" }, invalidParams("'tools' must be an array of tool definitions.")],
    [[5], invalidParams("'tools[0]' must be an object.")],
    [
      [TOOL, { name: "bad name" }],
      invalidParams(
        "'tools[1].name' must be 1-64 ASCII letters, digits, '_', '-' or '.' (write other languages in its description); got 'bad name'.",
      ),
    ],
    [
      [{ name: "x".repeat(65) }],
      invalidParams(
        `'tools[0].name' must be 1-64 ASCII letters, digits, '_', '-' or '.' (write other languages in its description); got '${
          "x".repeat(65)
        }'.`,
      ),
    ],
    [
      [{ name: "café" }],
      invalidParams(
        "'tools[0].name' must be 1-64 ASCII letters, digits, '_', '-' or '.' (write other languages in its description); got 'café'.",
      ),
    ],
    [
      [{ name: "金貨を渡す" }],
      invalidParams(
        "'tools[0].name' must be 1-64 ASCII letters, digits, '_', '-' or '.' (write other languages in its " +
          "description); got '金貨を渡す'.",
      ),
    ],
    [[{ description: "no name" }], {
      code: -32602,
      message:
        "'tools[0].name' must be 1-64 ASCII letters, digits, '_', '-' or '.' (write other languages in its description); got 'null'.",
      data: { code: "invalid_params" },
    }],
    [
      [TOOL, TOOL],
      invalidParams("'tools[1].name' must be unique: 'open_gate' is also the name of 'tools[0]'."),
    ],
    [
      [{ name: "respond_directly" }],
      invalidParams("'respond_directly' is reserved for ToolChoice.explicit."),
    ],
    [
      [{ ...TOOL, execution: "local" }],
      invalidParams(
        `'tools[0].execution' must be "client" (the engine executes the tool via tool/call); got 'local'.`,
      ),
    ],
    [[{ ...TOOL, parameters: 5 }], invalidParams("'tools[0].parameters' must be a JSON Schema object.")],
    [
      [{ ...TOOL, parameters: "{not json" }],
      invalidParams("'tools[0].parameters' must be a JSON Schema object."),
    ],
    [[{ ...TOOL, parameters: "[1]" }], invalidParams("'tools[0].parameters' must be a JSON Schema object.")],
    [[{ ...TOOL, parameters: { type: "frob" } }], {
      code: -32007,
      message:
        "tools[0].parameters: unsupported type 'frob' (a type is one of object, array, string, integer, number, boolean, null) (at #)",
      data: { code: "invalid_schema", path: "tools[0].parameters", schemaPath: "#" },
    }],
    [
      [{ ...TOOL, timeoutSeconds: -1 }],
      invalidParams(
        "Parameter 'tools[0].timeoutSeconds' must be a number of seconds from 0 to 86400 (0 means no limit); got -1.",
      ),
    ],
    [
      [{ ...TOOL, timeoutSeconds: 86401 }],
      invalidParams(
        "Parameter 'tools[0].timeoutSeconds' must be a number of seconds from 0 to 86400 (0 means no limit); got 86401.",
      ),
    ],
    [
      [{ ...TOOL, timeoutSeconds: "x" }],
      invalidParams(
        `Parameter 'tools[0].timeoutSeconds' must be a number of seconds from 0 to 86400 (0 means no limit); got "x".`,
      ),
    ],
  ];
  for (const [tools, error] of cases) {
    assert.deepEqual(await createError(c, { tools, model: "scripted" }), error, JSON.stringify(tools));
  }
  await c.close();
});

Deno.test("session/create tool forms: OpenAI wrapper, parameters as JSON text, warnings in order", async () => {
  const c = new WireClient();
  const r = await c.call("session/create", {
    session: "w",
    extra: 1,
    options: { nope: true },
    tools: [
      { type: "function", function: { name: "wrapped", description: "W.", parameters: { type: "object" } } },
      {
        name: "texty",
        description: "T.",
        parameters: '{"type":"object","properties":{"a":{"type":"string"}}}',
      },
      { name: "undescribed" },
      {
        name: "patterned",
        description: "  ",
        parameters: { type: "object", properties: { code: { type: "string", pattern: "^[A-Z]{3}$" } } },
      },
      tool("e"),
      tool("f"),
    ],
    model: "scripted",
  });
  assert.deepEqual(r, {
    session: "w",
    warnings: [
      "Unknown parameter 'extra' was ignored.",
      "Unknown parameter 'options.nope' was ignored.",
      "undescribed: no description; the model may not know when to call it.",
      "patterned: no description; the model may not know when to call it.",
      "patterned: #/properties/code: pattern '^[A-Z]{3}$' is described to the model but not enforced",
      "6 tools: Apple recommends at most 3-5 tools per request on-device; narrow them per turn with 'enabledTools'.",
    ],
  });
  assert.deepEqual((await listEntry(c, "w")).tools, [
    "wrapped",
    "texty",
    "undescribed",
    "patterned",
    "e",
    "f",
  ]);
  // exactly 5 tools: no count warning
  const five = await c.call("session/create", {
    tools: ["a", "b", "c", "d", "e"].map((name) => tool(name)),
    model: "scripted",
  });
  assert.deepEqual(five.warnings, []);
  await c.close();
});

Deno.test("session/create validation order: id, options, history, tools, toolChoice, model", async () => {
  const c = new WireClient();
  const badId = { session: "" };
  const badOptions = { options: { maxToolRounds: -1 } };
  const badHistory = { history: 5 };
  const badTools = { tools: [5] };
  const badChoice = { options: { toolChoice: { tool: "zz" } } };
  const badModel = { model: { type: "frob" } };
  const msg = async (p: JsonObject) => ((await createError(c, p)) as JsonObject).message as string;
  assert.match(
    await msg({ ...badModel, ...badTools, ...badHistory, ...badOptions, ...badId }),
    /^'session' must be/,
  );
  assert.match(await msg({ ...badModel, ...badTools, ...badHistory, ...badOptions }), /maxToolRounds/);
  assert.match(await msg({ ...badModel, ...badTools, ...badHistory }), /^'history' must be/);
  assert.match(await msg({ ...badModel, ...badTools }), /^'tools\[0\]' must be an object/);
  assert.match(await msg({ ...badModel, ...badChoice }), /names tool 'zz'/);
  assert.equal(
    await msg(badModel),
    `Unknown model type 'frob'. Supported: "system", "scripted", "openai", "llama".`,
  );
  await c.close();
});

Deno.test("session ids: generated s1, s2… skip used ids and are never reused; exists is -32021", async () => {
  const c = new WireClient();
  const make = async (session?: string) =>
    (await c.call("session/create", { ...(session ? { session } : {}), model: "scripted" })).session;
  assert.equal(await make(), "s1");
  assert.equal(await make("s2"), "s2");
  assert.equal(await make("s4"), "s4");
  assert.equal(await make(), "s3");
  assert.equal(await make(), "s5");
  await c.call("session/delete", { session: "s1" });
  assert.equal(await make(), "s6");
  assert.equal(await make("s1"), "s1");
  c.request("session/create", { session: "s2", model: "scripted" }, 1);
  assert.deepEqual((await c.response(1)).error, {
    code: -32021,
    message: "A session with id 's2' already exists.",
    data: { code: "session_exists", session: "s2" },
  });
  const list = await c.call("session/list");
  assert.deepEqual((list.sessions as JsonObject[]).map((s) => s.session), [
    "s2",
    "s4",
    "s3",
    "s5",
    "s6",
    "s1",
  ]);
  await c.close();
});

Deno.test("session_limit: -32022 with data.limit from maxSessions; deleting frees a slot", async () => {
  const c = new WireClient({ maxSessions: 2 });
  await c.call("session/create", { session: "a", model: "scripted" });
  await c.call("session/create", { session: "b", model: "scripted" });
  c.request("session/create", { session: "c", model: "scripted" }, 1);
  c.request("session/create", { model: "scripted" }, 2);
  const limit = {
    code: -32022,
    message: "The session limit (2) is reached; delete a session first.",
    data: { code: "session_limit", limit: 2 },
  };
  assert.deepEqual((await c.response(1)).error, limit);
  assert.deepEqual((await c.response(2)).error, limit);
  // exists wins over the limit
  c.request("session/create", { session: "a", model: "scripted" }, 3);
  assert.equal(((await c.response(3)).error as JsonObject).code, -32021);
  await c.call("session/delete", { session: "a" });
  assert.equal((await c.call("session/create", { model: "scripted" })).session, "s1");
  await c.close();
});

Deno.test("model parameter errors and scripted-model parsing", async () => {
  const c = new WireClient();
  const cases: Array<[JsonValue, string]> = [
    [5, `'model' must be "system" or an object with a 'type'.`],
    [[], `'model' must be "system" or an object with a 'type'.`],
    [{}, `'model' must be "system" or an object with a 'type'.`],
    [{ type: 5 }, "Parameter 'model.type' must be a string; got 5."],
    [{ type: { name: "mine" } }, `Parameter 'model.type' must be a string; got {"name":"mine"}.`],
    ["frob", `Unknown model type 'frob'. Supported: "system", "scripted", "openai", "llama".`],
    [{ type: "frob" }, `Unknown model type 'frob'. Supported: "system", "scripted", "openai", "llama".`],
    // A model's own name where its type belongs: the message says where the name goes.
    [
      "gpt-4o-mini",
      `Unknown model type 'gpt-4o-mini'. Supported: "system", "scripted", "openai", "llama". A model's name goes in the 'model' of a server's spec: {"type": "openai", "baseURL": "…/v1", "model": "gpt-4o-mini"}.`,
    ],
    [
      { type: "qwen2.5:7b" },
      `Unknown model type 'qwen2.5:7b'. Supported: "system", "scripted", "openai", "llama". A model's name goes in the 'model' of a server's spec: {"type": "openai", "baseURL": "…/v1", "model": "qwen2.5:7b"}.`,
    ],
    [
      "models/Npc.GGUF",
      `Unknown model type 'models/Npc.GGUF'. Supported: "system", "scripted", "openai", "llama". A GGUF file runs as {"type": "llama", "path": "models/Npc.GGUF"}.`,
    ],
    [
      scripted({}),
      "'model.steps[0]' must contain one of 'text', 'toolCalls', 'json', 'template' or 'error'.",
    ],
    [scripted({ text: "a" }, { toolCalls: [] }), "'model.steps[1].toolCalls' must not be empty."],
    [
      scripted({ error: "nope" }),
      "'model.steps[0].error' must be one of: model_unavailable, guardrail_violation, refusal, context_size_exceeded, rate_limited, unsupported_language, invalid_schema, tool_failed, cancelled, busy, invalid_request, generation_failed; got 'nope'.",
    ],
    [
      scripted({ error: "guardrial_violation" }),
      "'model.steps[0].error' must be one of: model_unavailable, guardrail_violation, refusal, context_size_exceeded, rate_limited, unsupported_language, invalid_schema, tool_failed, cancelled, busy, invalid_request, generation_failed; got 'guardrial_violation' (did you mean 'guardrail_violation'?).",
    ],
    [
      { type: "scripted", steps: [], fallback: { nothing: 1 } },
      "'model.fallback' must contain one of 'text', 'toolCalls', 'json', 'template' or 'error'.",
    ],
    [{ type: "scripted", steps: "x" }, "'model.steps' must be an array."],
  ];
  for (const [model, message] of cases) {
    assert.deepEqual(await createError(c, { model }), invalidParams(message), JSON.stringify(model));
  }
  assert.deepEqual(await c.call("session/list"), { sessions: [] });
  await c.close();
});

Deno.test("scripted models disabled by allowsScriptedModels: false, and not offered for an unknown type", async () => {
  const c = new WireClient({
    allowsScriptedModels: false,
    systemModel: () => new UnavailableModel("unknown"),
  });
  for (const model of ["scripted", scripted({ text: "x" })]) {
    assert.deepEqual(
      await createError(c, { model }),
      invalidParams("Scripted models are disabled on this bridge."),
    );
  }
  // An unknown type is told what this bridge supports: not the scripted model.
  assert.deepEqual(
    await createError(c, { model: { type: "frob" } }),
    invalidParams(`Unknown model type 'frob'. Supported: "system", "openai", "llama".`),
  );
  // the system model still works
  const r = await c.call("session/create", { session: "sys" });
  assert.equal(r.session, "sys");
  await c.close();
});

Deno.test("system model sessions: unavailable-model warning last; turns fail with -32001", async () => {
  const c = new WireClient({ systemModel: () => new UnavailableModel("model_not_ready") });
  const r = await c.call("session/create", {
    session: "sys",
    bogus: 1,
    tools: ["a", "b", "c", "d", "e", "f"].map((name) => tool(name)),
    model: { type: "system" },
  });
  assert.deepEqual(r.warnings, [
    "Unknown parameter 'bogus' was ignored.",
    "6 tools: Apple recommends at most 3-5 tools per request on-device; narrow them per turn with 'enabledTools'.",
    "The system model is unavailable (model_not_ready); turns will fail with model_unavailable until it is ready.",
  ]);
  for (const model of ["system", null]) {
    const w = await c.call("session/create", { model });
    assert.deepEqual(w.warnings, [
      "The system model is unavailable (model_not_ready); turns will fail with model_unavailable until it is ready.",
    ]);
  }
  c.request("session/respond", { session: "sys", prompt: "hi" }, 1);
  const e = (await c.response(1)).error as JsonObject;
  assert.equal(e.code, -32001);
  assert.equal((e.data as JsonObject).code, "model_unavailable");
  assert.equal((await listEntry(c, "sys")).model, "system");
  await c.close();
});

Deno.test("history: create from a transcript continues the conversation; instructions and tools restored", async () => {
  const c = new WireClient();
  await c.call("session/create", {
    session: "orig",
    instructions: "You are a guard.",
    tools: [{
      name: "open_gate",
      description: "Open a gate.",
      parameters: { type: "object", properties: { gate: { type: "string" } }, required: ["gate"] },
    }],
    model: scripted({ toolCalls: [{ name: "open_gate", arguments: { gate: "north" } }] }, {
      text: "Opened.",
    }),
  });
  const first = c.request("session/respond", { session: "orig", prompt: "Open it." });
  const call = await c.toolCall(1);
  c.reply(call.id, { output: { opened: true } });
  await c.response(first);
  const saved = await c.call("session/transcript", { session: "orig" });
  const transcript = saved.transcript as JsonObject;
  for (const history of [transcript, saved, { transcript: transcript.transcript }]) {
    const id = (await c.call("session/create", { history, model: scripted({ template: "again: {prompt}" }) }))
      .session as string;
    const entry = await listEntry(c, id);
    assert.equal(entry.instructions, "You are a guard.");
    assert.deepEqual(entry.tools, ["open_gate"]);
    assert.equal(entry.entries, 4);
    const r = await c.call("session/respond", { session: id, prompt: "And now?" });
    assert.equal(r.text, "again: And now?");
    assert.deepEqual(r.steps, [{
      index: 0,
      completedToolRounds: 0,
      toolCallingMode: "allowed",
      enabledTools: ["open_gate"],
      trimmedEntries: 0,
    }]);
    const restored = await c.call("session/transcript", { session: id });
    const before = ((transcript.transcript as JsonObject).entries as JsonObject[]).slice(1);
    const after = (((restored.transcript as JsonObject).transcript as JsonObject).entries as JsonObject[])
      .slice(1);
    assert.equal(after.length, 6);
    assert.deepEqual(after.slice(0, 4), before);
    // the restored tool definition is the same
    const tools =
      (((restored.transcript as JsonObject).transcript as JsonObject).entries as JsonObject[])[0].tools;
    assert.deepEqual(tools, ((transcript.transcript as JsonObject).entries as JsonObject[])[0].tools);
  }
  // a present key wins, even null or []
  const blank = await c.call("session/create", {
    session: "blank",
    history: saved,
    instructions: null,
    tools: [],
    model: "scripted",
  });
  assert.deepEqual(blank.warnings, []);
  const entry = await listEntry(c, "blank");
  assert.equal(entry.instructions, undefined);
  assert.deepEqual(entry.tools, []);
  assert.equal(entry.entries, 4);
  const replaced = await c.call("session/create", {
    session: "replaced",
    history: saved,
    instructions: "New.",
    tools: [tool("ring_bell")],
    model: "scripted",
  });
  assert.deepEqual(replaced.warnings, []);
  const r = await listEntry(c, "replaced");
  assert.equal(r.instructions, "New.");
  assert.deepEqual(r.tools, ["ring_bell"]);
  await c.close();
});

Deno.test("history: a transcript saved mid-turn resumes without its unanswered prompt, with a warning", async () => {
  const c = new WireClient();
  await c.call("session/create", {
    session: "orig",
    instructions: "You are a guard.",
    tools: [TOOL],
    model: scripted({ text: "Halt." }, { toolCalls: [{ name: "open_gate", arguments: {} }] }, {
      text: "Opened.",
    }),
  });
  await c.call("session/respond", { session: "orig", prompt: "Who goes there?" });
  // The game saves while the second turn waits for its tool.
  const second = c.request("session/respond", { session: "orig", prompt: "Open it." });
  const call = await c.toolCall(1);
  const saved = await c.call("session/transcript", { session: "orig" });
  const roles = (t: JsonObject) =>
    (((t.transcript as JsonObject).transcript as JsonObject).entries as JsonObject[]).map((e) => e.role);
  // The spec: reading during a running turn returns the in-progress state (the prompt is in the save).
  assert.deepEqual(roles(saved), ["instructions", "user", "response", "user"]);
  c.reply(call.id, { output: { opened: true } });
  await c.response(second);
  const resumed = await c.call("session/create", {
    session: "resumed",
    history: saved,
    model: scripted({ template: "again: {prompt}" }),
  });
  assert.deepEqual(resumed.warnings, [
    "The last prompt in 'history' was never answered (the transcript was read while its turn ran); it was " +
    "left out. Send it again with session/respond.",
  ]);
  assert.equal((await listEntry(c, "resumed")).entries, 2);
  assert.equal(
    (await c.call("session/respond", { session: "resumed", prompt: "Open it." })).text,
    "again: Open it.",
  );
  const after = await c.call("session/transcript", { session: "resumed" });
  assert.deepEqual(roles(after), ["instructions", "user", "response", "user", "response"]);
  // A complete transcript resumes without a warning.
  const whole = await c.call("session/create", { history: after, model: "scripted" });
  assert.deepEqual(whole.warnings, []);
  await c.close();
});

Deno.test("history: restored tools use the session's default timeout", async () => {
  const c = new WireClient();
  await c.call("session/create", {
    session: "orig",
    tools: [{ name: "slow", description: "Slow." }],
    model: "scripted",
  });
  const saved = await c.call("session/transcript", { session: "orig" });
  await c.call("session/create", {
    session: "copy",
    history: saved,
    options: { toolTimeoutSeconds: 0.05 },
    model: scripted({ toolCalls: [{ name: "slow" }] }, { template: "{toolOutput}" }),
  });
  const r = await c.call("session/respond", { session: "copy", prompt: "go" });
  assert.equal(r.text, "Error: Tool 'slow' timed out after 50ms.");
  await c.close();
});

Deno.test("history errors", async () => {
  const c = new WireClient();
  const notTranscript = "'history' must be a transcript object from session/transcript.";
  const histories: JsonValue[] = [5, "x", [], {}, { transcript: 5 }, { transcript: { entries: 5 } }];
  for (const history of histories) {
    assert.deepEqual(await createError(c, { history, model: "scripted" }), invalidParams(notTranscript));
  }
  const bad = {
    type: "FoundationModels.Transcript",
    version: "1.1",
    transcript: { entries: [{ role: "bogus" }] },
  };
  const e = await createError(c, { history: bad, model: "scripted" }) as JsonObject;
  assert.equal(e.code, -32602);
  assert.match(e.message as string, /^'history' is not a valid transcript: /);
  const badSegment = { transcript: { entries: [{ role: "user", contents: [{ type: "image" }] }] } };
  assert.match(
    ((await createError(c, { history: badSegment, model: "scripted" })) as JsonObject).message as string,
    /^'history' is not a valid transcript: /,
  );
  await c.close();
});

Deno.test("session ids count characters (grapheme clusters), not UTF-16 code units", async () => {
  const c = new WireClient();
  const emoji = "😀".repeat(128); // 128 characters, 256 code units
  const family = "👨‍👩‍👧".repeat(100); // 100 characters of 5 code points each
  const accented = "e\u0301".repeat(128); // 128 characters with a combining accent
  for (const session of [emoji, family, accented]) {
    assert.equal((await c.call("session/create", { session, model: "scripted" })).session, session);
  }
  for (const session of ["😀".repeat(129), "e\u0301".repeat(129), "a\u0085b"]) {
    assert.deepEqual(
      await createError(c, { session, model: "scripted" }),
      invalidParams(`'session' must be 1-128 printable characters; got '${session}'.`),
    );
  }
  await c.close();
});

Deno.test("a host system model whose availability check throws: the create still succeeds with a warning", async () => {
  const c = new WireClient({
    systemModel: () => ({
      kind: "system",
      contextSize: 4096,
      trimsHistory: false,
      availability: () => Promise.reject(new Error("plugin crashed")),
      step: () => Promise.reject(new Error("not used")),
    }),
  });
  c.request("session/create", { session: "sys" }, 1);
  assert.deepEqual(await c.response(1), {
    jsonrpc: "2.0",
    id: 1,
    result: {
      session: "sys",
      warnings: [
        "The system model is unavailable (unknown); turns will fail with model_unavailable until it is ready.",
      ],
    },
  });
  assert.equal((await listEntry(c, "sys")).session, "sys");
  await c.close();
});

Deno.test("numbers beyond double range (1e400) are not finite: 'must be a finite number' / seconds message", async () => {
  const c = new WireClient();
  c.sendLine('{"jsonrpc":"2.0","id":1,"method":"session/create","params":{"options":{"temperature":1e400}}}');
  c.sendLine(
    '{"jsonrpc":"2.0","id":2,"method":"session/create","params":{"options":{"toolTimeoutSeconds":-1e400}}}',
  );
  c.sendLine(
    '{"jsonrpc":"2.0","id":3,"method":"session/create","params":{"options":{"maxToolRounds":1e400}}}',
  );
  assert.deepEqual(
    (await c.response(1)).error,
    invalidParams("Parameter 'options.temperature' must be a finite number."),
  );
  assert.deepEqual(
    (await c.response(2)).error,
    invalidParams(
      "Parameter 'options.toolTimeoutSeconds' must be a number of seconds from 0 to 86400 (0 means no limit); got null.",
    ),
  );
  assert.deepEqual(
    (await c.response(3)).error,
    invalidParams("Parameter 'options.maxToolRounds' must be an integer; got null."),
  );
  await c.close();
});

Deno.test("history: a saved tool whose 'parameters' was edited into a non-object is refused naming it, not restored without its arguments", async () => {
  const c = new WireClient();
  await c.call("session/create", {
    session: "orig",
    tools: [tool("open_gate"), { name: "ring_bell", description: "Ring." }],
    model: "scripted",
  });
  const saved = await c.call("session/transcript", { session: "orig" }) as JsonObject;
  const entries = ((saved.transcript as JsonObject).transcript as JsonObject).entries as JsonObject[];
  const definitions = entries[0].tools as JsonObject[];
  for (const parameters of [5, "object", [], null]) {
    (definitions[0].function as JsonObject).parameters = parameters;
    assert.deepEqual(
      await createError(c, { history: saved, model: "scripted" }),
      invalidParams(
        "'history' is not a valid transcript: entries[0].tools[0].function.parameters must be a JSON Schema object",
      ),
    );
  }
  // A definition without 'parameters' (a tool that takes none) still restores.
  delete (definitions[0].function as JsonObject).parameters;
  delete (definitions[1].function as JsonObject).parameters;
  const copy = await c.call("session/create", { session: "copy", history: saved, model: "scripted" });
  assert.deepEqual(copy.warnings, []);
  assert.deepEqual((await listEntry(c, "copy")).tools, ["open_gate", "ring_bell"]);
  await c.close();
});

Deno.test("history: restored tools are checked as a set: a repeated name fails naming both, a bad one is named by its index", async () => {
  const c = new WireClient();
  await c.call("session/create", {
    session: "orig",
    tools: [tool("open_gate"), tool("ring_bell"), tool("light_torch")],
    model: "scripted",
  });
  const saved = await c.call("session/transcript", { session: "orig" }) as JsonObject;
  const entries = ((saved.transcript as JsonObject).transcript as JsonObject).entries as JsonObject[];
  const definitions = entries[0].tools as JsonObject[];
  // An edited save repeats a name: refused like the same tools sent in 'tools', naming where they are.
  (definitions[2].function as JsonObject).name = "open_gate";
  assert.deepEqual(
    await createError(c, { history: saved, model: "scripted" }),
    invalidParams(
      "'history.tools[2].name' must be unique: 'open_gate' is also the name of 'history.tools[0]'.",
    ),
  );
  // A repeated name fails even when the first of them could not be restored.
  (definitions[0].function as JsonObject).parameters = { type: "frob" };
  assert.deepEqual(
    await createError(c, { history: saved, model: "scripted" }),
    invalidParams(
      "'history.tools[2].name' must be unique: 'open_gate' is also the name of 'history.tools[0]'.",
    ),
  );
  // Sent 'tools' win: the saved ones are not read.
  const sent = await c.call("session/create", {
    session: "sent",
    history: saved,
    tools: [],
    model: "scripted",
  });
  assert.deepEqual(sent.warnings, []);
  // A saved tool that cannot be restored is left out with a warning naming its own index.
  (definitions[0].function as JsonObject).parameters = { type: "object", properties: {} };
  (definitions[2].function as JsonObject).name = "light_torch";
  (definitions[1].function as JsonObject).parameters = { type: "frob" };
  const copy = await c.call("session/create", { session: "copy", history: saved, model: "scripted" });
  assert.deepEqual(copy.warnings, [
    "ring_bell: could not be restored from 'history' (history.tools[1].parameters: unsupported type 'frob' (a type is one of object, array, string, integer, number, boolean, null) " +
    "(at #)); send its definition in 'tools'.",
  ]);
  assert.deepEqual((await listEntry(c, "copy")).tools, ["open_gate", "light_torch"]);
  await c.close();
});

Deno.test("history: restored tools are warned about like sent ones (no description, an unenforced constraint)", async () => {
  const c = new WireClient();
  const nodesc = {
    name: "read_sign",
    parameters: { type: "object", properties: { code: { type: "string", pattern: "^[A-Z]+$" } } },
  };
  const first = await c.call("session/create", {
    session: "orig",
    tools: [nodesc, tool("open_gate")],
    model: "scripted",
  });
  const warned = [
    "read_sign: no description; the model may not know when to call it.",
    "read_sign: #/properties/code: pattern '^[A-Z]+$' is described to the model but not enforced",
  ];
  assert.deepEqual(first.warnings, warned);
  const saved = await c.call("session/transcript", { session: "orig" });
  // The save is loaded in a later run of the game: the restored session has the same tools, so the same warnings.
  const copy = await c.call("session/create", { session: "copy", history: saved, model: "scripted" });
  assert.deepEqual(copy.warnings, warned);
  // Tools sent with the history replace the saved ones: only theirs are warned about.
  const sent = await c.call("session/create", {
    session: "sent",
    history: saved,
    tools: [tool("open_gate")],
    model: "scripted",
  });
  assert.deepEqual(sent.warnings, []);
  await c.close();
});

Deno.test("tool parameter warnings are worded for the session's model (tools are read before it), in their place", async () => {
  const c = new WireClient();
  const stats = {
    name: "set_stats",
    description: "Sets stats.",
    parameters: {
      type: "object",
      properties: { stats: { type: "object", additionalProperties: { type: "number" } } },
    },
  };
  const free = "#/properties/stats: free-form object (additionalProperties without properties)";
  const scriptedCreate = await c.call("session/create", {
    session: "a",
    bogus: 1, // an unknown key's warning comes first, then the tools', then the tool count's
    tools: [stats, { name: "t2" }, { name: "t3" }, { name: "t4" }, { name: "t5" }, { name: "t6" }],
    model: scripted(),
  });
  const warnings = scriptedCreate.warnings as string[];
  assert.equal(warnings[0].startsWith("Unknown parameter 'bogus'"), true, warnings[0]);
  assert.equal(warnings[1], `set_stats: ${free} is generated as {}; list the properties it should have`);
  assert.equal(warnings[2], "t2: no description; the model may not know when to call it.");
  assert.equal(warnings.at(-1)!.startsWith("6 tools:"), true, warnings.at(-1));
  // An openai model gets the schema as written: nothing to warn about.
  const openai = await c.call("session/create", {
    session: "b",
    tools: [stats],
    model: { type: "openai", baseURL: "http://127.0.0.1:9/v1", model: "m" },
  });
  assert.deepEqual(openai.warnings, []);
  // session/setTools knows the session's model too.
  const set = await c.call("session/setTools", { session: "a", tools: [stats] });
  assert.deepEqual(set.warnings, [
    `set_stats: ${free} is generated as {}; list the properties it should have`,
  ]);
  // The model is still checked after the tools: a bad tool fails before a bad model.
  const error = await createError(c, {
    tools: [{ name: "bad name" }],
    model: { type: "nope" },
  }) as JsonObject;
  assert.match(error.message as string, /'tools\[0\]\.name' must be/);
  await c.close();
});
