import assert from "node:assert/strict";
import type { JsonObject } from "../../../src/protocol/json.ts";
import { scripted, WireClient } from "../../helpers/wire.ts";
import { NpcClient, tool } from "./npc_helpers.ts";

const GORM = { name: "Gorm", role: "the village blacksmith" };

Deno.test("npc/create: tools in client, world, memory order; ids generated; list, world count, delete", async () => {
  const c = new NpcClient();
  await c.call("world/create", { world: "village", state: { shop: { swords: 3 } } });
  const created = await c.call("npc/create", {
    npc: "gorm",
    persona: GORM,
    tools: [tool("check_inventory")],
    world: "village",
    options: { worldWritable: ["shop"], memoryTools: "all" },
    model: scripted(),
  });
  assert.deepEqual(created, {
    npc: "gorm",
    tools: [
      "check_inventory",
      "read_world_state",
      "update_world_state",
      "remember_fact",
      "change_relationship",
    ],
    warnings: [],
  });
  assert.deepEqual(await c.call("npc/create", { persona: { name: "Aria" }, model: "scripted" }), {
    npc: "npc1",
    tools: [],
    warnings: [],
  });
  const worlds = await c.call("world/list");
  assert.equal((worlds.worlds as JsonObject[])[0].npcs, 1);
  const list = await c.call("npc/list");
  const entries = list.npcs as JsonObject[];
  assert.deepEqual(entries.map((e) => ({ ...e, createdAt: typeof e.createdAt })), [
    {
      npc: "gorm",
      name: "Gorm",
      role: "the village blacksmith",
      world: "village",
      model: "scripted",
      tools: ["check_inventory"],
      turnCount: 0,
      relationship: 0,
      busy: false,
      pendingOperations: 0,
      createdAt: "string",
    },
    {
      npc: "npc1",
      name: "Aria",
      role: "",
      world: null,
      model: "scripted",
      tools: [],
      turnCount: 0,
      relationship: 0,
      busy: false,
      pendingOperations: 0,
      createdAt: "string",
    },
  ]);
  assert.ok(!Number.isNaN(Date.parse(entries[0].createdAt as string)));
  assert.deepEqual(await c.call("npc/delete", { npc: "gorm" }), { npc: "gorm", deleted: true });
  assert.equal(((await c.call("world/list")).worlds as JsonObject[])[0].npcs, 0);
  assert.deepEqual(await c.error("npc/talk", { npc: "gorm", line: "hi" }), {
    code: -32050,
    message: "No NPC with id 'gorm'.",
    data: { code: "npc_not_found", npc: "gorm" },
  });
  await c.close();
});

Deno.test("npc/create: a key written with another word for one of its parts names the key meant", async () => {
  const c = new NpcClient();
  const r = await c.call("npc/create", {
    persona: { name: "Gorm", speechStyle: "curt", back_story: "A smith." },
    model: "scripted",
  }) as { warnings: string[] };
  assert.deepEqual(r.warnings, [
    "Unknown parameter 'persona.speechStyle' was ignored (did you mean 'speakingStyle'?).",
    "Unknown parameter 'persona.back_story' was ignored (did you mean 'backstory'?).",
  ]);
  await c.close();
});

Deno.test("npc/create: unknown keys and options are warned about, in request order; >5 tools warned", async () => {
  const c = new NpcClient();
  const tools = ["a", "b", "c", "d", "e"].map((n) => tool(n));
  const r = await c.call("npc/create", {
    persona: { name: "Gorm", personalty: "gruff" },
    bogus: 1,
    options: { replyFormt: "text", memoryTools: ["remember_fact"], emotions: ["happy", "banana", "Mad"] },
    tools: [...tools, { name: "f", parameters: { type: "object", properties: {} } }],
    model: "scripted",
  });
  assert.deepEqual(r, {
    npc: "npc1",
    tools: ["a", "b", "c", "d", "e", "f", "remember_fact"],
    warnings: [
      "Unknown parameter 'bogus' was ignored.",
      "Unknown parameter 'persona.personalty' was ignored (did you mean 'personality'?).",
      "Unknown parameter 'options.replyFormt' was ignored (did you mean 'replyFormat'?).",
      `'options.emotions[1]' is not a known emotion ('banana'); using "neutral".`,
      "f: no description; the model may not know when to call it.",
      "7 tools: Apple recommends at most 3-5 tools per request on-device; narrow them per turn with 'enabledTools'.",
    ],
  });
  await c.close();
});

Deno.test("npc/create: validation errors name the parameter and change nothing", async () => {
  const c = new NpcClient();
  await c.call("world/create", { world: "village" });
  const cases: Array<[JsonObject, string, number?]> = [
    [{}, "Missing required parameter 'persona'."],
    [{ persona: "Gorm" }, "'persona' must be an object with at least a 'name'."],
    [{ persona: {} }, "Missing required parameter 'persona.name'."],
    [{ persona: { name: "  " } }, "'persona.name' must not be empty."],
    [{ persona: { name: "G", goals: 5 } }, "Parameter 'persona.goals' must be an array; got 5."],
    [{ persona: { name: "G", maxSentences: 0 } }, "Parameter 'persona.maxSentences' must be at least 1."],
    [
      { persona: GORM, options: { replyFormat: "json" } },
      `'options.replyFormat' must be one of "automatic", "structured", "text"; got 'json'.`,
    ],
    [
      { persona: GORM, options: { replyFormat: "txt" } },
      `'options.replyFormat' must be one of "automatic", "structured", "text"; got 'txt' (did you mean 'text'?).`,
    ],
    [
      { persona: GORM, options: { playerOptionCount: 5 } },
      "'options.playerOptionCount' must be between 0 and 4.",
    ],
    [
      { persona: GORM, options: { memoryTools: ["rememberFact", "dance"] } },
      `'options.memoryTools' contains unknown memory tool "dance"; known: "rememberFact", "changeRelationship".`,
    ],
    [
      { persona: GORM, options: { memoryTools: true } },
      `'options.memoryTools' must be a list such as ["rememberFact", "changeRelationship"], "all" or "none".`,
    ],
    [
      { persona: GORM, options: { toolTimeoutSeconds: -1 } },
      "Parameter 'options.toolTimeoutSeconds' must be a number of seconds from 0 to 86400 (0 means no limit); got -1.",
    ],
    [
      { persona: GORM, options: { worldReadable: ["a..b"] } },
      "'options.worldReadable[0]': 'a..b' is not a valid path. Use dot-separated keys such as 'player.gold'.",
    ],
    [
      { persona: GORM, tools: [tool("ask")], options: { groundingTool: "check_inventory" } },
      "'options.groundingTool' names 'check_inventory', which is not one of the NPC's tools: ask. Give the NPC " +
      "a client tool named 'check_inventory' in 'tools', or name one of those.",
    ],
    // A built-in tool that is off: the message says which option turns it on (a client tool of its name is refused).
    [
      { persona: GORM, options: { groundingTool: "read_world_state" } },
      "'options.groundingTool' names 'read_world_state', which is not one of the NPC's tools: (none). " +
      "The built-in 'read_world_state' is on when the NPC has a 'world' and 'options.worldReadable' names paths.",
    ],
    [
      { persona: GORM, world: "village", options: { groundingTool: "update_world_state" } },
      "'options.groundingTool' names 'update_world_state', which is not one of the NPC's tools: read_world_state. " +
      "The built-in 'update_world_state' is on when the NPC has a 'world' and 'options.worldWritable' names paths.",
    ],
    [
      { persona: GORM, options: { groundingTool: "remember_fact" } },
      "'options.groundingTool' names 'remember_fact', which is not one of the NPC's tools: (none). " +
      `The built-in 'remember_fact' is on when 'options.memoryTools' names "rememberFact" (or is "all").`,
    ],
    [
      { persona: GORM, options: { toolChoice: { tool: "ask" } } },
      "'options.toolChoice' names unknown tool 'ask'.",
    ],
    [
      { persona: GORM, world: "village", tools: [tool("read_world_state")] },
      "'tools[0].name' must not be 'read_world_state': the built-in world and memory tools use " +
      "read_world_state, update_world_state, remember_fact and change_relationship.",
    ],
    [
      { persona: GORM, tools: [tool("b"), tool("a"), tool("a")] },
      "'tools[2].name' must be unique: 'a' is also the name of 'tools[1]'.",
    ],
    [
      { persona: GORM, memory: { relationship: 101 } },
      "Parameter 'memory.relationship' must be at most 100.",
    ],
    [{ npc: "", persona: GORM }, "'npc' must be 1-128 printable characters; got ''."],
    [{ persona: GORM, world: "nowhere" }, "No world with id 'nowhere'.", -32052],
  ];
  for (const [params, message, code] of cases) {
    const e = await c.error("npc/create", { model: "scripted", ...params });
    assert.equal(e.message, message, JSON.stringify(params));
    assert.equal(e.code, code ?? -32602, message);
  }
  assert.deepEqual((await c.call("npc/list")).npcs, []);
  await c.call("npc/create", { npc: "gorm", persona: GORM, model: "scripted" });
  assert.deepEqual(await c.error("npc/create", { npc: "gorm", persona: GORM, model: "scripted" }), {
    code: -32051,
    message: "An NPC with id 'gorm' already exists.",
    data: { code: "npc_exists", npc: "gorm" },
  });
  await c.close();
});

Deno.test("npc/create: the validation order: the first bad parameter is the one reported", async () => {
  const c = new NpcClient();
  await c.call("world/create", { world: "village" });
  await c.call("npc/create", { npc: "gorm", persona: GORM, model: "scripted" });
  // Every parameter starts bad; each step mends the one just reported, and the next one is reported.
  const params: JsonObject = {
    npc: 5,
    world: 5,
    persona: {},
    options: 5,
    memory: 5,
    tools: "x",
    model: "bogus",
  };
  const steps: Array<[JsonObject, string, number?]> = [
    [{}, "Parameter 'npc' must be a string; got 5."],
    [{ npc: "" }, "Parameter 'world' must be a string; got 5."],
    [{ world: "nowhere" }, "'npc' must be 1-128 printable characters; got ''."],
    [{ npc: "gorm" }, "Missing required parameter 'persona.name'."],
    [{ persona: { name: "Gorm", goals: 5 } }, "Parameter 'persona.goals' must be an array; got 5."],
    [{ persona: GORM }, "Parameter 'options' must be an object; got 5."],
    [{ options: { playerOptionCount: 9 } }, "'options.playerOptionCount' must be between 0 and 4."],
    [{ options: { toolChoice: { tool: "ask" } } }, "Parameter 'memory' must be an object; got 5."],
    [{ memory: { relationship: 101 } }, "Parameter 'memory.relationship' must be at most 100."],
    [{ memory: {} }, "'tools' must be an array of tool definitions."],
    [
      { tools: [{}] },
      "'tools[0].name' must be 1-64 ASCII letters, digits, '_', '-' or '.' (write other languages in its description); got 'null'.",
    ],
    [{ tools: [] }, "No world with id 'nowhere'.", -32052],
    [
      { world: "village" },
      `Unknown model type 'bogus'. Supported: "system", "scripted", "openai", "llama", and the types of this bridge's host.`, // NpcClient has a modelFactory
    ],
    [{ model: 5 }, `'model' must be "system" or an object with a 'type'.`],
    [{ model: "scripted" }, "'options.toolChoice' names unknown tool 'ask'."],
    [{ options: {} }, "An NPC with id 'gorm' already exists.", -32051],
  ];
  for (const [mend, message, code] of steps) {
    Object.assign(params, mend);
    const e = await c.error("npc/create", params);
    assert.deepEqual([e.code, e.message], [code ?? -32602, message], JSON.stringify(params));
  }
  params.npc = "gorm2";
  assert.equal((await c.call("npc/create", params)).npc, "gorm2");
  // Nothing but the two NPCs was made, and no failed create used up a generated id.
  const listed = (await c.call("npc/list")).npcs as JsonObject[];
  assert.deepEqual(listed.map((n) => n.npc), ["gorm", "gorm2"]);
  assert.equal((await c.call("npc/create", { persona: GORM, model: "scripted" })).npc, "npc1");
  await c.close();
});

Deno.test("npc/create: the limit of 128 NPCs", async () => {
  const c = new WireClient();
  for (let i = 0; i < 128; i++) c.request("npc/create", { persona: { name: `N${i}` }, model: "scripted" }, i);
  for (let i = 0; i < 128; i++) assert.ok("result" in await c.response(i));
  // An id in use is reported before the limit.
  const taken = c.request("npc/create", { npc: "npc5", persona: { name: "Taken" }, model: "scripted" });
  assert.equal(((await c.response(taken)).error as JsonObject).code, -32051);
  const id = c.request("npc/create", { persona: { name: "One too many" }, model: "scripted" });
  assert.deepEqual((await c.response(id)).error, {
    code: -32055,
    message: "The limit of 128 NPCs is reached; delete some first.",
    data: { code: "limit_reached", limit: 128 },
  });
  await c.call("npc/delete", { npc: "npc5" });
  assert.equal((await c.call("npc/create", { persona: { name: "Again" }, model: "scripted" })).npc, "npc129");
  await c.close();
});

Deno.test("npc/create: decisions can act as the NPC through its persona", async () => {
  const c = new NpcClient();
  await c.call("npc/create", {
    npc: "gorm",
    persona: { ...GORM, goals: ["Sell swords."] },
    model: "scripted",
  });
  assert.deepEqual(c.game.game.npcPersona("gorm"), {
    name: "Gorm",
    role: "the village blacksmith",
    personality: "",
    speakingStyle: "",
    backstory: "",
    goals: ["Sell swords."],
    knowledge: [],
    secrets: [],
    defaultEmotion: "neutral",
    maxSentences: 2,
  });
  assert.equal(c.game.game.npcPersona("nobody"), undefined);
  await c.close();
});

Deno.test("npc/create: world options without a world are a warning (they would give no tool and no context)", async () => {
  const c = new NpcClient();
  const created = await c.call("npc/create", {
    npc: "gorm",
    persona: GORM,
    options: { worldWritable: ["shop"], worldContextPaths: ["player"] },
    model: scripted(),
  });
  assert.deepEqual(created, {
    npc: "gorm",
    tools: [],
    warnings: [
      "'options.worldWritable' and 'options.worldContextPaths' have no effect without 'world'. Pass 'world' " +
      "(a world/create id) to give the NPC one.",
    ],
  });
  // One of them alone is named alone; with a world there is nothing to say.
  const alone = await c.call("npc/create", {
    persona: GORM,
    options: { worldWritable: ["shop"] },
    model: scripted(),
  });
  assert.deepEqual(alone.warnings, [
    "'options.worldWritable' has no effect without 'world'. Pass 'world' (a world/create id) to give the NPC one.",
  ]);
  await c.call("world/create", { world: "village", state: { shop: {} } });
  const withWorld = await c.call("npc/create", {
    persona: GORM,
    world: "village",
    options: { worldWritable: ["shop"] },
    model: scripted(),
  });
  assert.deepEqual(withWorld.warnings, []);
});

Deno.test("world path options that name no value in the NPC's world are a warning naming the entry and what is there; the NPC is made", async () => {
  const c = new NpcClient();
  await c.call("world/create", {
    world: "village",
    state: { quests: { dragon: { status: "open" } }, player: { gold: 5 }, party: ["Aria"] },
  });
  const created = await c.call("npc/create", {
    npc: "gorm",
    persona: GORM,
    world: "village",
    options: {
      worldReadable: ["quests", "Player.gold"],
      worldWritable: ["player.gold", "quests.ring.status"],
      worldContextPaths: ["/quests/dragn", "party.0", "party.3", "player.gold.coins", "weather"],
    },
    model: scripted(),
  });
  assert.deepEqual(created.warnings, [
    "'options.worldReadable[1]' names 'Player.gold', which does not exist in world 'village' (yet): " +
    "read_world_state can read it once it is created. The world has keys: quests, player, party.",
    "'options.worldWritable[1]' names 'quests.ring.status', which does not exist in world 'village' (yet): " +
    "update_world_state may create it. 'quests' has keys: dragon.",
    "'options.worldContextPaths[0]' names 'quests.dragn', which does not exist in world 'village' (yet): " +
    "the prompt shows it once it is created. 'quests' has keys: dragon.",
    "'options.worldContextPaths[2]' names 'party.3', which does not exist in world 'village' (yet): " +
    "the prompt shows it once it is created. 'party' is a list of 1 item.",
    "'options.worldContextPaths[3]' names 'player.gold.coins', which does not exist in world 'village' (yet): " +
    "the prompt shows it once it is created. 'player.gold' holds a plain value, not an object.",
    "'options.worldContextPaths[4]' names 'weather', which does not exist in world 'village' (yet): " +
    "the prompt shows it once it is created. The world has keys: quests, player, party.",
  ]);
  assert.deepEqual(created.tools, ["read_world_state", "update_world_state"]);

  // npc/update warns about the path options it sets, not again about the others.
  const fixed = await c.call("npc/update", {
    npc: "gorm",
    options: { worldContextPaths: ["quests.dragon"] },
  });
  assert.deepEqual(fixed.warnings, []);
  const typo = await c.call("npc/update", {
    npc: "gorm",
    options: { worldWritable: ["quests.dragon.stauts"] },
  });
  assert.deepEqual(typo.warnings, [
    "'options.worldWritable[0]' names 'quests.dragon.stauts', which does not exist in world 'village' " +
    "(yet): update_world_state may create it. 'quests.dragon' has keys: status.",
  ]);
  assert.deepEqual((await c.call("npc/update", { npc: "gorm", options: { maxFacts: 3 } })).warnings, []);

  // npc/restore checks the saved paths against the world it attaches to, named where they come from.
  const state = (await c.call("npc/state", { npc: "gorm" })).state as JsonObject;
  const restored = await c.call("npc/restore", { state, npc: "gorm2", model: scripted() });
  assert.deepEqual(restored.warnings, [
    "'state.options.worldReadable[1]' names 'Player.gold', which does not exist in world 'village' (yet): " +
    "read_world_state can read it once it is created. The world has keys: quests, player, party.",
    "'state.options.worldWritable[0]' names 'quests.dragon.stauts', which does not exist in world 'village' " +
    "(yet): update_world_state may create it. 'quests.dragon' has keys: status.",
  ]);
  // Once the game creates the value, nothing is said.
  await c.call("world/set", { world: "village", path: "quests.dragon.stauts", value: "typo kept" });
  await c.call("world/set", { world: "village", path: "Player", value: { gold: 1 } });
  assert.deepEqual((await c.call("npc/restore", { state, npc: "gorm3", model: scripted() })).warnings, []);
});

Deno.test("npc/create: a script that calls a built-in tool the NPC does not have is warned about, with the option", async () => {
  const c = new NpcClient();
  await c.call("world/create", { world: "village", state: { gate: "shut" } });
  const call = (name: string) => ({ toolCalls: [{ name, arguments: {} }] });
  const created = await c.call("npc/create", {
    npc: "gorm",
    persona: GORM,
    world: "village",
    model: {
      type: "scripted",
      steps: [call("update_world_state"), { text: "Done." }, call("update_world_state"), call("check_stock")],
      fallback: call("remember_fact"),
    },
  });
  // Each off built-in once; a client tool the script names is the game's business (tools can change later).
  assert.deepEqual(created.warnings, [
    "The script calls 'update_world_state', which this NPC does not have. The built-in 'update_world_state' " +
    "is on when the NPC has a 'world' and 'options.worldWritable' names paths.",
    "The script calls 'remember_fact', which this NPC does not have. The built-in 'remember_fact' is on when " +
    `'options.memoryTools' names "rememberFact" (or is "all").`,
  ]);
  // With the tools on, nothing is said.
  const on = await c.call("npc/create", {
    persona: GORM,
    world: "village",
    options: { worldWritable: ["gate"], memoryTools: "all" },
    model: { type: "scripted", steps: [call("update_world_state"), call("remember_fact")] },
  });
  assert.deepEqual(on.warnings, []);
  await c.close();
});
