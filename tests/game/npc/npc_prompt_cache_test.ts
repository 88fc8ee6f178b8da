/**
 * The invariants that let a model reuse its prompt cache across an NPC's turns: the instructions and the tool
 * list stay the same through memory, relationship, secret, compaction and world changes; every step of a turn
 * (and the plain-text retry, and the summary request) shows the same tools; what changed reaches the model in
 * the newest prompt, once; two consecutive requests of a turn are never the same.
 */
import assert from "node:assert/strict";
import type { JsonObject } from "../../../src/protocol/json.ts";
import { capture, type Captured, captureWithContext, NpcClient, reply, tool } from "./npc_helpers.ts";

const PERSONA = { name: "Gorm", role: "the village blacksmith", secrets: ["He deserted."] };

/** The names a request shows (offered) and lets the model call. */
function toolNames(req: Captured): { offered: string[]; callable: string[] } {
  return {
    offered: (req.offeredTools ?? req.tools).map((t) => t.name),
    callable: req.tools.map((t) => t.name),
  };
}

Deno.test("prompt cache: instructions and tools stay the same through memory, relationship, secret, world and compaction changes", async () => {
  const c = new NpcClient();
  await c.call("world/create", { world: "town", state: { player: { gold: 100 }, time: { hour: 8 } } });
  const talk = (line: string) => c.result(c.request("npc/talk", { npc: "gorm", line }));
  const long = "x".repeat(150);
  await c.call("npc/create", {
    npc: "gorm",
    persona: PERSONA,
    world: "town",
    tools: [tool("check_stock")],
    options: {
      replyFormat: "text",
      memoryTools: "all",
      worldContextPaths: ["player", "time"],
      compactAfterTurns: 3,
      keepRecentTurns: 1,
    },
    model: captureWithContext(
      2200,
      { toolCalls: [{ name: "respond_directly", arguments: {} }] },
      { text: `[neutral] One ${long}` },
      { toolCalls: [{ name: "change_relationship", arguments: { reason: "help", delta: 10 } }] },
      { text: `[happy] Two ${long}` },
      { toolCalls: [{ name: "check_stock", arguments: {} }] },
      { text: `[happy] Three ${long}` },
      { text: "Summary of three turns." },
      { toolCalls: [{ name: "respond_directly", arguments: {} }] },
      { text: "[happy] Four." },
      { toolCalls: [{ name: "respond_directly", arguments: {} }] },
      { text: "[happy] Five." },
      { text: "Summary of five turns." },
    ),
  });
  await talk("Hello.");
  // A new top-level key: the read tool's description (which names them) stays as it was.
  await c.call("world/set", { world: "town", path: "quests", value: { ring: "open" } });
  await c.call("npc/update", { npc: "gorm", memory: { facts: ["Aria fixed the forge."] } });
  await c.call("world/set", { world: "town", path: "player.gold", value: 90 });
  const checkStock = c.request("npc/talk", { npc: "gorm", line: "Thanks." });
  await c.result(checkStock);
  await c.call("npc/update", { npc: "gorm", memory: { relationship: 55 } });
  const third = c.request("npc/talk", { npc: "gorm", line: "Swords?" });
  c.reply((await c.toolCall(1)).id, { output: "3 swords." });
  await c.result(third);
  await c.call("world/set", { world: "town", path: "time.hour", value: 9 });
  await talk("Secrets?");
  await c.call("world/set", { world: "town", path: "time", value: "evening" });
  await talk("Bye.");

  const reqs = c.model.requests;
  assert.equal(reqs.length, 12);
  for (const r of reqs) {
    assert.equal(r.instructions, reqs[0].instructions, "the instructions never change");
    assert.deepEqual(toolNames(r).offered, toolNames(reqs[0]).offered, "the tool list never changes");
    assert.deepEqual(r.offeredTools, reqs[0].offeredTools);
  }
  assert.deepEqual(toolNames(reqs[0]).offered, [
    "check_stock",
    "read_world_state",
    "remember_fact",
    "change_relationship",
    "respond_directly",
  ]);
  assert.doesNotMatch(reqs[0].instructions!, /deserted|Aria|gold|attitude/);
  const read = reqs[11].offeredTools!.find((t) => t.name === "read_world_state")!;
  assert.match(read.description, /Top-level keys: player, time\.$/);
  const prompts = reqs.filter((r) => r.prompt !== "").map((r) => r.prompt);
  assert.deepEqual(prompts, [
    // Turn 1: the full state.
    "Memory:\n- Your attitude toward the player is neutral (0 on a scale from -100 to 100).\n" +
    "Game state:\nplayer.gold: 100\ntime.hour: 8\nPlayer: Hello.",
    // Turn 2: the new fact, the world value that changed.
    "Memory:\n- Things you remember: Aria fixed the forge.\nGame state:\nplayer.gold: 90\nPlayer: Thanks.",
    // Turn 3: the attitude (the tool's +10 and the update) and the unlocked secret; the world did not change.
    "Memory:\n- Your attitude toward the player is friendly (55 on a scale from -100 to 100).\n" +
    "- The player has earned your trust; you may reveal your secret if they ask. Your secret: He deserted.\n" +
    "Player: Swords?",
    // After turn 3 (room short): the summary, as the next message of the conversation.
    reqs[6].prompt,
    // Turn 4: the summarized turns left; the full state again, with the summary.
    "Memory:\n- Your attitude toward the player is friendly (55 on a scale from -100 to 100).\n" +
    "- Things you remember: Aria fixed the forge.\n" +
    "- Your earlier conversations with the player: Summary of three turns.\n" +
    "- The player has earned your trust; you may reveal your secret if they ask. Your secret: He deserted.\n" +
    "Game state:\nplayer.gold: 90\ntime.hour: 9\nPlayer: Secrets?",
    // Turn 5: a removed value.
    "Game state:\ntime: evening\ntime.hour: (no longer set)\nPlayer: Bye.",
    // Turns 3-5 are due again, the room still short: another summary.
    reqs[11].prompt,
  ]);
  assert.match(reqs[6].prompt, /^\(Out of character/);
  assert.equal(reqs[11].prompt, reqs[6].prompt);
  assert.equal(reqs[7].history.length, 4, "turn 4 sees only the kept turn");
  await c.close();
});

Deno.test("prompt cache: every step of a turn shows the same tools; the choice restricts what is callable", async () => {
  const c = new NpcClient();
  await c.call("npc/create", {
    npc: "gorm",
    persona: PERSONA,
    tools: [tool("check_stock"), tool("ask_price")],
    options: { groundingTool: "check_stock", maxToolRounds: 2 },
    model: capture(
      { toolCalls: [{ name: "check_stock", arguments: {} }] },
      { toolCalls: [{ name: "ask_price", arguments: {} }] },
      reply("Three swords, 45 gold."),
      { toolCalls: [{ name: "check_stock", arguments: {} }] },
      { error: "guardrail_violation" },
      { text: "[neutral] Ask me later." },
    ),
  });
  let answered = 0;
  for (const [line, calls] of [["Swords?", 2], ["Axes?", 1]] as const) {
    const id = c.request("npc/talk", { npc: "gorm", line });
    for (let i = 0; i < calls; i++) c.reply((await c.toolCall(++answered)).id, { output: "ok" });
    await c.result(id);
  }
  const reqs = c.model.requests;
  assert.deepEqual(reqs.map((r) => [r.toolCallingMode, toolNames(r).callable]), [
    ["required", ["check_stock"]],
    ["allowed", ["check_stock", "ask_price"]],
    ["disallowed", []],
    ["required", ["check_stock"]],
    ["allowed", ["check_stock", "ask_price"]],
    // The plain-text retry after the block: tools off, the same list shown.
    ["disallowed", []],
  ]);
  for (const r of reqs) assert.deepEqual(r.offeredTools, reqs[0].offeredTools);
  assert.deepEqual(toolNames(reqs[0]).offered, ["check_stock", "ask_price"]);
  await c.close();
});

Deno.test("prompt cache: an explicit NPC shows respond_directly on every request, callable only first", async () => {
  const c = new NpcClient();
  await c.call("npc/create", {
    npc: "gorm",
    persona: PERSONA,
    tools: [tool("check_stock")],
    options: { compactAfterTurns: 1, keepRecentTurns: 0 },
    model: capture(
      { toolCalls: [{ name: "check_stock", arguments: {} }] },
      reply("Three."),
      { text: "They talked about swords." },
    ),
  });
  const id = c.request("npc/talk", { npc: "gorm", line: "Swords?" });
  c.reply((await c.toolCall(1)).id, { output: "3" });
  await c.result(id);
  await c.call("npc/state", { npc: "gorm" });
  const reqs = c.model.requests;
  assert.deepEqual(reqs.map((r) => toolNames(r)), [
    { offered: ["check_stock", "respond_directly"], callable: ["check_stock", "respond_directly"] },
    { offered: ["check_stock", "respond_directly"], callable: ["check_stock"] },
    // The summary request (at the save) shows the same list and calls nothing.
    { offered: ["check_stock", "respond_directly"], callable: [] },
  ]);
  await c.close();
});

Deno.test("prompt cache: after an invalid answer the next request of the turn differs (sampling changed)", async () => {
  const c = new NpcClient();
  await c.call("npc/create", {
    npc: "gorm",
    persona: PERSONA,
    options: { temperature: 0 },
    model: capture({ json: { emotion: "neutral", line: 5 } }, reply("Fine.")),
  });
  const r = await c.result(c.request("npc/talk", { npc: "gorm", line: "Hi." }));
  assert.equal(r.line, "Fine.");
  const [first, second] = c.model.requests;
  assert.notDeepEqual(second, first);
  assert.deepEqual(first.options, { temperature: 0 });
  assert.equal(second.options.temperature, 0.7);
  assert.equal(second.options.sampling?.mode, "topP");
  await c.close();
});

Deno.test("prompt cache: world values the model saw are not sent again; nothing changed, no block", async () => {
  const c = new NpcClient();
  await c.call("world/create", {
    world: "town",
    state: { weather: "rain", shop: { swords: 3, owner: "Gorm" } },
  });
  await c.call("npc/create", {
    npc: "gorm",
    persona: { name: "Gorm" },
    world: "town",
    options: { replyFormat: "text", worldContextPaths: ["weather", "shop"], worldReadable: [] },
    model: capture({ text: "[neutral] One." }, { text: "[neutral] Two." }, { text: "[neutral] Three." }),
  });
  const talk = (line: string, context?: JsonObject) =>
    c.result(c.request("npc/talk", { npc: "gorm", line, ...(context ? { context } : {}) }));
  await talk("1");
  await talk("2", { paid: 5 });
  await c.call("world/set", { world: "town", path: "shop.swords", value: 2 });
  await talk("3");
  assert.deepEqual(c.model.requests.map((r) => r.prompt), [
    "Game state:\nweather: rain\nshop.swords: 3\nshop.owner: Gorm\nPlayer: 1",
    'Situation: {"paid":5}\nPlayer: 2',
    "Game state:\nshop.swords: 2\nPlayer: 3",
  ]);
  await c.close();
});
