import assert from "node:assert/strict";
import type { JsonObject } from "../../../src/protocol/json.ts";
import { segmentsText } from "../../../src/protocol/transcript.ts";
import { capture, captureWithContext, FnModel, NpcClient, reply, tool } from "./npc_helpers.ts";

const GORM = { name: "Gorm", role: "the village blacksmith", secrets: ["He deserted."] };

Deno.test("save → restore → talk continues the conversation with persona, memory, options, tools and world", async () => {
  const c = new NpcClient();
  await c.call("world/create", { world: "village", state: { shop: { swords: 3 } } });
  await c.call("npc/create", {
    npc: "gorm",
    persona: GORM,
    tools: [tool("check_inventory"), { ...tool("ask_price"), timeoutSeconds: 5 }],
    world: "village",
    memory: { facts: ["Aria likes axes."], relationship: 20 },
    options: {
      replyFormat: "text",
      worldWritable: ["shop"],
      memoryTools: "all",
      secretsUnlockAtRelationship: null,
    },
    model: capture({ text: "[happy] Welcome back." }),
  });
  await c.result(c.request("npc/talk", { npc: "gorm", line: "Hello again" }));
  const saved = await c.call("npc/state", { npc: "gorm" });
  assert.deepEqual(Object.keys(saved), ["npc", "state"]);
  const state = saved.state as JsonObject;
  assert.deepEqual(Object.keys(state), [
    "version",
    "persona",
    "memory",
    "transcript",
    "npc",
    "options",
    "tools",
    "world",
  ]);
  assert.deepEqual([state.version, state.npc, state.world], [1, "gorm", "village"]);
  assert.deepEqual(state.memory, { facts: ["Aria likes axes."], relationship: 20 });
  assert.deepEqual(state.tools, [tool("check_inventory"), { ...tool("ask_price"), timeoutSeconds: 5 }]);
  const options = state.options as JsonObject;
  assert.deepEqual(Object.keys(options), [
    "replyFormat",
    "groundingTool",
    "toolChoice",
    "maxToolRounds",
    "maxToolCalls",
    "toolTimeoutSeconds",
    "worldReadable",
    "worldWritable",
    "worldContextPaths",
    "memoryTools",
    "maxFacts",
    "maxRelationshipChange",
    "secretsUnlockAtRelationship",
    "emotions",
    "playerOptionCount",
    "canEndConversation",
    "extraInstructions",
    "compactAfterTurns",
    "keepRecentTurns",
    "fallbackOnGuardrail",
    "fallbackLines",
    "temperature",
    "maximumResponseTokens",
    "barkMaximumTokens",
  ]);
  assert.deepEqual(
    [
      options.replyFormat,
      options.toolChoice,
      options.toolTimeoutSeconds,
      options.secretsUnlockAtRelationship,
    ],
    ["text", "explicit", 120, null],
  );
  assert.deepEqual(options.memoryTools, ["rememberFact", "changeRelationship"]);
  await c.call("npc/delete", { npc: "gorm" });
  const restored = await c.call("npc/restore", {
    state: saved,
    model: capture({ text: "[proud] As I said." }),
  });
  assert.deepEqual(restored, {
    npc: "gorm",
    tools: [
      "check_inventory",
      "ask_price",
      "read_world_state",
      "update_world_state",
      "remember_fact",
      "change_relationship",
    ],
    warnings: [
      "6 tools: Apple recommends at most 3-5 tools per request on-device; narrow them per turn with 'enabledTools'.",
    ],
  });
  const r = await c.result(c.request("npc/talk", { npc: "gorm", line: "Remember me?" }));
  assert.deepEqual([r.line, r.emotion, r.relationship], ["As I said.", "proud", 20]);
  const req = c.model.requests[0];
  assert.deepEqual(req.history.map((e) => e.role), ["user", "response"]);
  // The saved prompt as the model saw it, and the restored NPC tells its state again (its model was told
  // nothing yet).
  const memory = "Memory:\n- Your attitude toward the player is neutral (20 on a scale from -100 to 100).\n" +
    "- Things you remember: Aria likes axes.\n";
  assert.equal(segmentsText(req.history[0].contents), `${memory}Player: Hello again`);
  assert.equal(req.prompt, `${memory}Player: Remember me?`);
  assert.match(req.instructions!, /Your secret: He deserted\.[\s\S]*Keep your secret/);
  const again = (await c.call("npc/state", { npc: "gorm" })).state as JsonObject;
  for (const key of ["persona", "memory", "options", "tools", "world", "npc", "version"]) {
    assert.deepEqual(again[key], state[key], key);
  }
  assert.equal(((await c.call("world/list")).worlds as JsonObject[])[0].npcs, 1);
  await c.close();
});

Deno.test("npc/restore: keys sent win (even null or []), a missing saved world is a warning, errors", async () => {
  const c = new NpcClient();
  await c.call("world/create", { world: "village" });
  await c.call("npc/create", {
    npc: "gorm",
    persona: GORM,
    tools: [tool("check_inventory")],
    world: "village",
    options: { replyFormat: "text", groundingTool: "check_inventory" },
    model: "scripted",
  });
  const saved = (await c.call("npc/state", { npc: "gorm" })).state as JsonObject;
  const copy = await c.call("npc/restore", {
    state: saved,
    npc: "copy",
    tools: [],
    options: null,
    world: null,
    model: "scripted",
  });
  assert.deepEqual(copy, { npc: "copy", tools: [], warnings: [] });
  const copyState = (await c.call("npc/state", { npc: "copy" })).state as JsonObject;
  assert.deepEqual([copyState.world, (copyState.options as JsonObject).replyFormat, copyState.tools], [
    null,
    "automatic",
    [],
  ]);
  const generated = await c.call("npc/restore", { state: saved, npc: null, model: "scripted", bogus: 1 });
  assert.equal(generated.npc, "npc1");
  assert.deepEqual(generated.warnings, ["Unknown parameter 'bogus' was ignored."]);
  // Loading a save twice: the message says how to restore anyway.
  assert.deepEqual(await c.error("npc/restore", { state: saved, model: "scripted" }), {
    code: -32051,
    message:
      "An NPC with id 'gorm' already exists: delete it first (npc/delete) to replace it with the save, " +
      "or pass another 'npc' to restore a copy.",
    data: { code: "npc_exists", npc: "gorm" },
  });
  await c.call("world/delete", { world: "village" });
  const orphan = await c.call("npc/restore", {
    state: saved,
    npc: "orphan",
    model: "scripted",
    tools: [],
    options: {},
  });
  assert.deepEqual(orphan, {
    npc: "orphan",
    tools: [],
    warnings: [
      "The saved world 'village' does not exist; the NPC was restored without a world. Pass 'world' to attach one.",
    ],
  });
  assert.equal(
    (await c.error("npc/restore", { state: saved, npc: "x", world: "village", model: "scripted" })).code,
    -32052,
  );
  const errors: Array<[JsonObject, string]> = [
    [{}, "Missing required parameter 'state'."],
    [
      { state: { ...saved, version: 2 } },
      "'state.version' is 2: the save was made by a newer bridge, and this one reads saves of version 1. Restore it with the bridge that made it, or a newer one than this.",
    ],
    [{ state: { ...saved, version: 0 } }, "'state.version' must be 1, as npc/state writes it; got 0."],
    [{ state: { ...saved, version: "1" } }, "'state.version' must be 1, as npc/state writes it; got \"1\"."],
    [{ state: { ...saved, persona: { role: "x" } } }, "Missing required parameter 'state.persona.name'."],
    [
      { state: { ...saved, npc: "t1", transcript: { nope: 1 } } },
      "'state.transcript' must be a transcript object from session/transcript.",
    ],
    [
      { state: { ...saved, npc: "t2", tools: [{ name: "bad name" }] } },
      "'state.tools[0].name' must be 1-64 ASCII letters, digits, '_', '-' or '.' (write other languages in its description); got 'bad name'.",
    ],
    [
      { state: { npc: "t3", state: { ...saved, npc: "t3", options: { maxFacts: -1 } } } },
      "Parameter 'state.state.options.maxFacts' must be at least 0.",
    ],
    [{ state: { ...saved, npc: "t4", memory: 5 } }, "Parameter 'state.memory' must be an object; got 5."],
    [{ state: { ...saved, npc: "t5", options: 5 } }, "Parameter 'state.options' must be an object; got 5."],
    // Keys sent win over the saved ones, and their errors name them.
    [
      { state: { ...saved, npc: "t6", options: 5 }, options: 7 },
      "Parameter 'options' must be an object; got 7.",
    ],
    [
      { state: { ...saved, npc: "t7", tools: "x" }, tools: "y" },
      "'tools' must be an array of tool definitions.",
    ],
    [{ state: { ...saved, npc: "t8", tools: "x" } }, "'state.tools' must be an array of tool definitions."],
    // A repeated tool name names the definition, in the save or in the key sent.
    [
      { state: { ...saved, npc: "t11", tools: [tool("a"), tool("a")] } },
      "'state.tools[1].name' must be unique: 'a' is also the name of 'state.tools[0]'.",
    ],
    [
      { state: { ...saved, npc: "t12" }, tools: [tool("a"), tool("a")] },
      "'tools[1].name' must be unique: 'a' is also the name of 'tools[0]'.",
    ],
    [
      { state: { ...saved, npc: "t13", tools: [tool("remember_fact")], options: { memoryTools: "all" } } },
      "'state.tools[0].name' must not be 'remember_fact': the built-in world and memory tools use " +
      "read_world_state, update_world_state, remember_fact and change_relationship.",
    ],
    // The saved persona is checked before the saved options, and those before the memory.
    [
      { state: { ...saved, npc: "t9", persona: {}, options: 5, memory: 5 } },
      "Missing required parameter 'state.persona.name'.",
    ],
    [
      { state: { ...saved, npc: "t10", options: 5, memory: 5 } },
      "Parameter 'state.options' must be an object; got 5.",
    ],
  ];
  for (const [params, message] of errors) {
    const e = await c.error("npc/restore", { model: "scripted", ...params });
    assert.deepEqual([e.code, e.message], [-32602, message]);
  }
  await c.close();
});

Deno.test("npc/restore: the model is not saved (system model by default); the transcript drops an unanswered prompt", async () => {
  const c = new NpcClient({
    systemModel: () =>
      new FnModel([() => ({ kind: "text", text: '{"line":"System."}', usage: null })], "system"),
  });
  await c.call("npc/create", { npc: "gorm", persona: GORM, model: capture(reply("One.")) });
  await c.result(c.request("npc/talk", { npc: "gorm", line: "1" }));
  const saved = (await c.call("npc/state", { npc: "gorm" })).state as JsonObject;
  const transcript = structuredClone(saved.transcript) as JsonObject;
  ((transcript.transcript as JsonObject).entries as JsonObject[]).push({
    id: "x",
    role: "user",
    contents: [{ type: "text", id: "y", text: "unanswered" }],
    options: {},
  });
  const restored = await c.call("npc/restore", { state: { ...saved, transcript }, npc: "again" });
  assert.equal(restored.npc, "again");
  const list = ((await c.call("npc/list")).npcs as JsonObject[]).find((n) => n.npc === "again")!;
  assert.deepEqual([list.model, list.turnCount], ["system", 1]);
  assert.equal((await c.result(c.request("npc/talk", { npc: "again", line: "2" }))).line, "System.");
  await c.close();
});

Deno.test("a memory too big for the model's context is a warning where it is set: npc/restore, npc/create, npc/update", async () => {
  const c = new NpcClient();
  const facts = Array.from(
    { length: 3000 },
    (_, i) => `The player told you about quest number ${i} in the northern hills.`,
  );
  const overflow = (path: string, size: number) =>
    new RegExp(
      `^The NPC's prompt takes about \\d+ tokens \\(estimated; \\d+ of them '${
        path.replace(".", "\\.")
      }'\\), ` +
        `more than the model's ${size}-token context: its turns will not fit\\. Keep fewer or shorter facts\\.$`,
    );
  const save = { version: 1, persona: GORM, memory: { facts, relationship: 0 }, npc: "gorm" };
  const restored = await c.call("npc/restore", { state: save, model: "scripted" });
  // First the facts beyond maxFacts (12 by default), then the context.
  assert.equal((restored.warnings as string[]).length, 2, JSON.stringify(restored.warnings));
  assert.match((restored.warnings as string[])[0], /^'state\.memory' holds 3000 facts, more than /);
  assert.match((restored.warnings as string[])[1], overflow("state.memory", 8192));
  // The whole npc/state result as the save names its memory 'state.state.memory'.
  const whole = await c.call("npc/restore", { state: { state: save }, npc: "whole", model: "scripted" });
  assert.match((whole.warnings as string[]).at(-1)!, overflow("state.state.memory", 8192));
  const created = await c.call("npc/create", {
    npc: "made",
    persona: GORM,
    memory: { facts },
    model: "scripted",
  });
  assert.match((created.warnings as string[]).at(-1)!, overflow("memory", 8192));
  await c.call("npc/create", { npc: "small", persona: GORM, model: "scripted" });
  const updated = await c.call("npc/update", { npc: "small", memory: { facts } });
  assert.match((updated.warnings as string[]).at(-1)!, overflow("memory", 8192));
  // The model's own context size counts: ten facts fit 8192 tokens, not 256.
  const ten = { ...save, memory: { facts: facts.slice(0, 10), relationship: 0 } };
  const fits = await c.call("npc/restore", { state: ten, npc: "ten", model: "scripted" });
  assert.deepEqual(fits.warnings, []);
  const tight = await c.call("npc/restore", { state: ten, npc: "tight", model: captureWithContext(256) });
  assert.match((tight.warnings as string[])[0], overflow("state.memory", 256));
  await c.close();
});
