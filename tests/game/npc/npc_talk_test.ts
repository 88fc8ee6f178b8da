import assert from "node:assert/strict";
import type { JsonObject } from "../../../src/protocol/json.ts";
import { capture, NpcClient, reply, stableToolCalls, tool, uncheckedCapture } from "./npc_helpers.ts";

const GORM = { name: "Gorm", role: "the village blacksmith", defaultEmotion: "annoyed" };
const RESULT_KEYS = [
  "npc",
  "line",
  "emotion",
  "playerOptions",
  "endsConversation",
  "toolCalls",
  "relationship",
  "isFallback",
  "usage",
];
const ZERO_USAGE = { inputTokens: 0, cachedInputTokens: 0, outputTokens: 0, totalTokens: 0 };

function withoutUsage(result: JsonObject): JsonObject {
  const usage = result.usage as JsonObject;
  assert.deepEqual(Object.keys(usage), ["inputTokens", "cachedInputTokens", "outputTokens", "totalTokens"]);
  assert.equal(usage.totalTokens, (usage.inputTokens as number) + (usage.outputTokens as number));
  const { usage: _u, ...rest } = result;
  return rest;
}

async function talk(c: NpcClient, params: JsonObject): Promise<JsonObject> {
  return await c.result(c.request("npc/talk", { npc: "gorm", ...params }));
}

Deno.test("npc/talk structured: exact result, cleaned line and options, schema and framing", async () => {
  const c = new NpcClient();
  await c.call("npc/create", {
    npc: "gorm",
    persona: GORM,
    options: { replyFormat: "structured", playerOptionCount: 2, emotions: ["proud", "annoyed"] },
    // A backend that does not constrain decoding: the reply parser cleans up what the schema would rule out.
    model: uncheckedCapture({
      json: {
        emotion: "Proud!",
        line: '**Gorm:** "Aye, three swords."',
        player_options: ["1. Buy one", "- buy one", 'Player: "Goodbye"'],
        ends_conversation: true,
      },
    }),
  });
  const result = await talk(c, { line: "Got swords?", context: "The forge is hot." });
  assert.deepEqual(Object.keys(result), RESULT_KEYS);
  assert.deepEqual(withoutUsage(result), {
    npc: "gorm",
    line: "Aye, three swords.",
    emotion: "proud",
    playerOptions: ["Buy one", "Goodbye"],
    endsConversation: true,
    toolCalls: [],
    relationship: 0,
    isFallback: false,
  });
  const [req] = c.model.requests;
  assert.equal(req.prompt, "Situation: The forge is hot.\nPlayer: Got swords?");
  assert.equal(req.responseSchema?.name, "NPCReply");
  const schema = req.responseSchema!.jsonSchema;
  assert.deepEqual(Object.keys(schema.properties as JsonObject), [
    "emotion",
    "line",
    "player_options",
    "ends_conversation",
  ]);
  assert.deepEqual((schema.properties as Record<string, JsonObject>).emotion.enum, ["proud", "annoyed"]);
  assert.deepEqual(schema.required, ["emotion", "line", "player_options", "ends_conversation"]);
  assert.equal(req.toolCallingMode, "disallowed");
  assert.deepEqual(req.tools, []);
  assert.match(
    req.instructions!,
    /^You are Gorm, the village blacksmith, a character in a video game\.\nRules:/,
  );
  assert.doesNotMatch(req.instructions!, /square brackets/);
  await c.close();
});

Deno.test("npc/talk text: '[emotion] line' parsed; no options; tag rule in the instructions", async () => {
  const c = new NpcClient();
  await c.call("npc/create", {
    npc: "gorm",
    persona: GORM,
    options: { replyFormat: "text", canEndConversation: true },
    model: capture({ text: "  [Mad] Gorm says: Off with you." }, { text: "No tag here." }, {
      text: "[banana] Odd.",
    }),
  });
  assert.deepEqual(withoutUsage(await talk(c, { line: "" })), {
    npc: "gorm",
    line: "Off with you.",
    emotion: "angry",
    playerOptions: [],
    endsConversation: false,
    toolCalls: [],
    relationship: 0,
    isFallback: false,
  });
  const second = await talk(c, { line: "Hello" });
  assert.deepEqual([second.emotion, second.line], ["annoyed", "No tag here."]);
  const third = await talk(c, { line: "Hello" });
  assert.deepEqual([third.emotion, third.line], ["annoyed", "Odd."]);
  const [req] = c.model.requests;
  assert.equal(req.prompt, "Player: (The player says nothing.)");
  assert.equal(req.responseSchema, null);
  assert.match(req.instructions!, /square brackets/);
  await c.close();
});

Deno.test("npc/talk automatic: a blocked structured reply is retried once as text with the looked-up facts", async () => {
  const c = new NpcClient();
  await c.call("npc/create", {
    npc: "gorm",
    persona: GORM,
    tools: [
      tool("check_inventory", { parameters: { type: "object", properties: { item: { type: "string" } } } }),
    ],
    options: { groundingTool: "check_inventory" },
    model: capture(
      { toolCalls: [{ name: "check_inventory", arguments: { item: "sword" } }] },
      { error: "guardrail_violation", message: "Blocked." },
      { text: "[proud] Three swords, 45 gold." },
    ),
  });
  const id = c.request("npc/talk", { npc: "gorm", line: "Swords?" });
  const call = await c.toolCall(1);
  assert.deepEqual((call.params as JsonObject).npc, "gorm");
  assert.deepEqual((call.params as JsonObject).requestId, id);
  c.reply(call.id as string, { output: { stock: 3, price: 45 } });
  const result = await c.result(id);
  assert.deepEqual(withoutUsage({ ...result, toolCalls: stableToolCalls(result) }), {
    npc: "gorm",
    line: "Three swords, 45 gold.",
    emotion: "proud",
    playerOptions: [],
    endsConversation: false,
    toolCalls: [{
      name: "check_inventory",
      arguments: { item: "sword" },
      output: { stock: 3, price: 45 },
      isError: false,
    }],
    relationship: 0,
    isFallback: false,
  });
  const reqs = c.model.requests;
  assert.equal(reqs.length, 3);
  assert.deepEqual([reqs[0].toolCallingMode, reqs[0].tools.map((t) => t.name)], ["required", [
    "check_inventory",
  ]]);
  assert.equal(
    reqs[2].prompt,
    [
      "Player: Swords?",
      "Facts you just looked up:",
      '- check_inventory {"item":"sword"} → {"stock":3,"price":45}',
      "Reply in character with a short spoken line. Start with your emotion in square brackets, like [happy] or [angry].",
    ].join("\n"),
  );
  assert.equal(reqs[2].toolCallingMode, "disallowed");
  assert.equal(reqs[2].responseSchema, null);
  assert.equal(reqs[2].history.length, 0, "the blocked attempt left no trace");
  const list = (await c.call("npc/list")).npcs as JsonObject[];
  assert.equal(list[0].turnCount, 1);
  await c.close();
});

Deno.test("npc/talk fallback lines: rotated, default emotion, no history, zero usage; automatic tries twice", async () => {
  const c = new NpcClient();
  await c.call("npc/create", {
    npc: "gorm",
    persona: GORM,
    memory: { relationship: 15 },
    options: { fallbackLines: ["Not now.", "  ", "Later."] },
    model: capture(
      { error: "guardrail_violation" },
      { error: "refusal" },
      { error: "guardrail_violation" },
      { error: "guardrail_violation" },
      { error: "refusal" },
      { error: "refusal" },
    ),
  });
  const lines: string[] = [];
  for (let i = 0; i < 3; i++) {
    const r = await talk(c, { line: "Tell me about the war." });
    assert.deepEqual(r, {
      npc: "gorm",
      line: r.line,
      emotion: "annoyed",
      playerOptions: [],
      endsConversation: false,
      toolCalls: [],
      relationship: 15,
      isFallback: true,
      usage: ZERO_USAGE,
    });
    lines.push(r.line as string);
  }
  assert.deepEqual(lines, ["Not now.", "Later.", "Not now."]);
  assert.equal(c.model.requests.length, 6, "each automatic turn made one structured and one text attempt");
  assert.equal(((await c.call("npc/list")).npcs as JsonObject[])[0].turnCount, 0);
  await c.close();
});

Deno.test("npc/talk: structured-only skips the retry; default fallback lines; fallbackOnGuardrail false errors", async () => {
  const c = new NpcClient();
  await c.call("npc/create", {
    npc: "gorm",
    persona: GORM,
    options: { replyFormat: "structured" },
    model: capture({ error: "guardrail_violation" }, { error: "refusal" }),
  });
  assert.equal((await talk(c, { line: "a" })).line, "Let's talk about something else.");
  assert.equal((await talk(c, { line: "b" })).line, "I'd rather not speak of that.");
  assert.equal(c.model.requests.length, 2);
  await c.call("npc/create", {
    npc: "strict",
    persona: GORM,
    options: { fallbackOnGuardrail: false, replyFormat: "text" },
    model: capture({ error: "guardrail_violation", message: "Unsafe." }),
  });
  assert.deepEqual(await c.error("npc/talk", { npc: "strict", line: "a" }), {
    code: -32002,
    message: "Unsafe.",
    data: { code: "guardrail_violation" },
  });
  await c.call("npc/create", {
    npc: "offline",
    persona: GORM,
    model: capture({ error: "model_unavailable", message: "Not ready." }),
  });
  assert.equal((await c.error("npc/talk", { npc: "offline", line: "a" })).code, -32001);
  await c.close();
});

Deno.test("npc/talk: an empty line after cleanup becomes a fallback line but the turn commits", async () => {
  const c = new NpcClient();
  await c.call("npc/create", {
    npc: "gorm",
    persona: GORM,
    model: capture(reply("  Gorm:  ", { emotion: "sad" })),
  });
  const r = await talk(c, { line: "Hm?" });
  assert.deepEqual([r.line, r.emotion, r.isFallback], ["Let's talk about something else.", "sad", true]);
  assert.equal(((await c.call("npc/list")).npcs as JsonObject[])[0].turnCount, 1);
  await c.close();
});

Deno.test("npc/talk tool policy: explicit by default, grounding tool first, per-turn override, none without tools", async () => {
  const c = new NpcClient();
  const tools = [tool("check_inventory"), tool("ask_price")];
  await c.call("npc/create", {
    npc: "gorm",
    persona: GORM,
    tools,
    model: capture(reply("Hm."), reply("Hm.")),
  });
  await talk(c, { line: "hi" });
  let req = c.model.requests[0];
  assert.equal(req.toolCallingMode, "required");
  assert.deepEqual(req.tools.map((t) => t.name), ["check_inventory", "ask_price", "respond_directly"]);
  assert.match(req.instructions!, /Never make them up\./);
  await talk(c, { line: "hi", toolChoice: { tool: "ask_price" } });
  req = c.model.requests[1];
  assert.deepEqual([req.toolCallingMode, req.tools.map((t) => t.name)], ["required", ["ask_price"]]);
  assert.deepEqual(await c.error("npc/talk", { npc: "gorm", line: "hi", toolChoice: { tool: "dance" } }), {
    code: -32011,
    message: "Tool 'dance' is not available to Gorm.",
    data: { code: "invalid_request" },
  });
  assert.equal((await c.error("npc/talk", { npc: "gorm", line: "hi", toolChoice: "dance" })).code, -32602);
  assert.equal((await c.error("npc/talk", { npc: "gorm" })).message, "Missing required parameter 'line'.");
  // A required key given under another name: the error names what was ignored (its warning never arrives).
  assert.equal(
    (await c.error("npc/talk", { npc: "gorm", message: "hi" })).message,
    "Missing required parameter 'line' (the unknown parameter 'message' was ignored).",
  );
  assert.equal(
    (await c.error("npc/talk", { npc: "gorm", lines: "hi", mood: 1 })).message,
    "Missing required parameter 'line' (the unknown parameters 'lines' (did you mean 'line'?) and 'mood' were " +
      "ignored).",
  );

  await c.call("npc/create", {
    npc: "plain",
    persona: GORM,
    model: capture(reply("Hm.", { emotion: "annoyed" })),
  });
  const plain = await c.result(c.request("npc/talk", { npc: "plain", line: "hi", toolChoice: "required" }));
  assert.deepEqual([plain.line, plain.emotion], ["Hm.", "annoyed"]);
  req = c.model.requests[0];
  assert.deepEqual([req.toolCallingMode, req.tools], ["disallowed", []]);
  assert.match(req.instructions!, /say so in character/);
  await c.close();
});

Deno.test("npc/talk prompt: world context summary, JSON context, unknown keys warned", async () => {
  const c = new NpcClient();
  await c.call("world/create", {
    world: "village",
    state: { shop: { swords: 3, owner: "Gorm" }, weather: "rain" },
  });
  await c.call("npc/create", {
    npc: "gorm",
    persona: GORM,
    world: "village",
    options: { worldContextPaths: ["shop", "missing", "weather"], worldReadable: [] },
    model: capture(reply("Rain.")),
  });
  const r = await talk(c, { line: "Weather?", context: { paid: 45 }, mood: "x" });
  assert.deepEqual(r.warnings, ["Unknown parameter 'mood' was ignored."]);
  assert.deepEqual(Object.keys(r), [...RESULT_KEYS, "warnings"]);
  assert.equal(
    c.model.requests[0].prompt,
    'Game state:\nshop.swords: 3\nshop.owner: Gorm\nweather: rain\nSituation: {"paid":45}\nPlayer: Weather?',
  );
  assert.deepEqual(c.model.requests[0].tools, [], "worldReadable [] offers no read tool");
  await c.close();
});

Deno.test("npc/talk instructions: persona fields, secrets by relationship; memory in the prompt", async () => {
  const c = new NpcClient();
  const persona = {
    name: "Gorm",
    role: "the village blacksmith",
    personality: "Gruff but fair",
    speakingStyle: "Short sentences!",
    backstory: "Served in the war.",
    goals: ["Sell swords.", " Find his brother "],
    knowledge: ["Iron comes from the north"],
    secrets: ["He deserted"],
    maxSentences: 1,
  };
  const model = () => capture(reply("Hm."));
  await c.call("npc/create", { npc: "hidden", persona, model: model() });
  await c.call("npc/create", {
    npc: "shared",
    persona,
    memory: { relationship: 50, facts: ["Aria likes axes."], summary: "They met at the forge." },
    model: model(),
  });
  await c.call("npc/create", {
    npc: "guarded",
    persona,
    options: { secretsUnlockAtRelationship: null, extraInstructions: "  Never mention dragons.  " },
    model: model(),
  });
  for (const npc of ["hidden", "shared", "guarded"]) {
    await c.result(c.request("npc/talk", { npc, line: "hi" }));
  }
  const base = [
    "You are Gorm, the village blacksmith, a character in a video game.",
    "Personality: Gruff but fair.",
    "Speaking style: Short sentences!",
    "Background: Served in the war.",
    "Goals: Sell swords; Find his brother.",
    "You know: Iron comes from the north.",
  ];
  const rules = [
    "Rules:",
    "- Stay in character as Gorm. Never call yourself an AI, a model or an assistant.",
    "- Answer in one short sentence.",
    "- When you do not know a fact about the world, say so in character. Never make it up.",
  ];
  const [hidden, shared, guarded] = c.models.map((m) => m.requests[0].instructions);
  assert.equal(hidden, [...base, ...rules].join("\n"));
  // Memory and an unlocked secret never enter the instructions (they stay the same for the NPC's life):
  // the turn's prompt carries them.
  assert.equal(shared, hidden);
  assert.equal(c.models[0].requests[0].prompt, "Player: hi");
  assert.equal(
    c.models[1].requests[0].prompt,
    [
      "Memory:",
      "- Your attitude toward the player is friendly (50 on a scale from -100 to 100).",
      "- Things you remember: Aria likes axes.",
      "- Your earlier conversations with the player: They met at the forge.",
      "- The player has earned your trust; you may reveal your secret if they ask. Your secret: He deserted.",
      "Player: hi",
    ].join("\n"),
  );
  assert.equal(
    guarded,
    [
      ...base,
      "Your secret: He deserted.",
      ...rules,
      "- Keep your secret to yourself unless the player has truly earned your trust.",
      "Never mention dragons.",
    ].join("\n"),
  );
  await c.close();
});

Deno.test("npc/talk: a scripted NPC's text step where it replies in JSON says what to change; the bridge keeps serving", async () => {
  const c = new NpcClient();
  // A designer's first steps file: plain lines, and the default reply format, which starts structured.
  await c.call("npc/create", {
    npc: "gorm",
    persona: GORM,
    model: { type: "scripted", steps: [{ text: "Halt." }, { text: "Move along." }] },
  });
  const error = await c.error("npc/talk", { npc: "gorm", line: "Hello." });
  assert.equal(error.code, -32012);
  assert.equal(
    error.message,
    // Both steps are text: the message names the first, the one to change first.
    "The model gave an invalid answer: the answer is not valid JSON: Halt. It was step 1 of 2, and its retry, " +
      "step 2, was invalid too: the answer is not valid JSON: Move along. Fix step 1 first. " +
      "A text step played where the NPC replies in JSON (reply format 'automatic'): make the step a json reply step, or give the NPC " +
      `options.replyFormat "text" (docs/scripting.md, "The reply step").`,
  );
  // The same steps with the text reply format play as written.
  await c.call("npc/create", {
    npc: "bram",
    persona: { name: "Bram" },
    options: { replyFormat: "text" },
    model: { type: "scripted", steps: [{ text: "Halt." }] },
  });
  assert.equal((await c.call("npc/talk", { npc: "bram", line: "Hello." })).line, "Halt.");
});

Deno.test("npc/talk: a scripted reply step with the wrong number of player_options names the option that sets it", async () => {
  const c = new NpcClient();
  const step = (options: string[] | undefined) => ({
    json: {
      emotion: "neutral",
      line: "What do you want?",
      ...(options === undefined ? {} : { player_options: options }),
      ends_conversation: false,
    },
  });
  const cases: Array<[JsonObject, string[] | undefined, string, string]> = [
    // A designer's first step, two replies for the default three.
    [{}, ["A sword.", "Nothing."], "must NOT have fewer than 3 items", "is 3 (the default)"],
    [{ playerOptionCount: 2 }, ["A.", "B.", "C."], "must NOT have more than 2 items", "is 2"],
    [{}, undefined, "must have required property 'player_options'", "is 3 (the default)"],
  ];
  for (const [i, [options, given, problem, count]] of cases.entries()) {
    await c.call("npc/create", {
      npc: `n${i}`,
      persona: GORM,
      options,
      model: { type: "scripted", steps: [step(given)] },
    });
    const error = await c.error("npc/talk", { npc: `n${i}`, line: "Hello." });
    const message = String(error.message);
    assert.equal(error.code, -32012);
    assert.ok(message.includes(problem), message);
    assert.ok(
      message.endsWith(
        ` The NPC's options.playerOptionCount ${count}: a reply step gives exactly that many player_options ` +
          `(change the step, or the option; 0 leaves player_options out).`,
      ),
      message,
    );
  }
  // None wanted, and the step has some.
  await c.call("npc/create", {
    npc: "none",
    persona: GORM,
    options: { playerOptionCount: 0 },
    model: { type: "scripted", steps: [step(["A.", "B.", "C."])] },
  });
  const error = await c.error("npc/talk", { npc: "none", line: "Hello." });
  const message = String(error.message);
  assert.ok(
    message.endsWith(
      " The NPC's options.playerOptionCount is 0: a reply step gives no player_options (change the step, or the option).",
    ),
    message,
  );
  await c.close();
});
