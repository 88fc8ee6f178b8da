/**
 * The earlier turns a restored NPC shows, read from a real `npc/state` transcript: the player's lines, the
 * tools called, and the replies of both reply formats (structured and "[emotion] line").
 */
import assert from "node:assert/strict";
import { Bridge } from "../../../mod.ts";
import { historyOf } from "../../../src/serve/playground/page/transcript.ts";

Deno.test("a saved conversation reads back as player lines, tool calls and replies with their emotions", async () => {
  await using bridge = await Bridge.open({ onWarning: () => {} });
  const stock = bridge.tool({ name: "check_stock", description: "Stock." }, () => "3 left");
  const npc = await bridge.createNpc({ name: "Mira" }, {
    tools: [stock],
    options: { playerOptionCount: 0 },
    model: {
      type: "scripted",
      steps: [
        { toolCalls: [{ name: "check_stock", arguments: { item: "ale" } }] },
        { json: { emotion: "happy", line: "Three ales left.", ends_conversation: false } },
      ],
    },
  });
  await npc.talk("Any ale?", { context: "It is raining." });
  const text = await bridge.createNpc({ name: "Gorm" }, {
    options: { replyFormat: "text" },
    model: { type: "scripted", steps: [{ text: "[annoyed] Go away." }] },
  });
  await text.talk("Hello");
  assert.deepEqual(historyOf((await npc.state()).transcript), [
    { who: "player", text: "Any ale?" },
    { who: "tool", text: 'check_stock({"item":"ale"})' },
    { who: "npc", text: "Three ales left.", emotion: "happy" },
  ]);
  assert.deepEqual(historyOf((await text.state()).transcript), [
    { who: "player", text: "Hello" },
    { who: "npc", text: "Go away.", emotion: "annoyed" },
  ]);
  assert.deepEqual(historyOf(null), []);
  assert.deepEqual(historyOf({ transcript: { entries: "no" } }), []);
});
