/**
 * The instructions an NPC (and a decision's actor) gets are built from the designer's persona text, ending
 * each field as a sentence. Text in Japanese, Chinese, Arabic or German ends its sentences with its own
 * marks (。！？ ؟ „…“); the bridge must not add an English period after them ("優しい。."), and a Japanese
 * sentence without a mark ends with 。, not with ".".
 */
import assert from "node:assert/strict";
import { listSentence, sentence } from "../../src/game/npc/prose.ts";
import { actorLines } from "../../src/game/decision/actor.ts";
import { capture, NpcClient } from "../game/npc/npc_helpers.ts";

Deno.test("a persona's sentences keep their own final marks; one without a mark gets the script's period", () => {
  assert.deepEqual(
    [
      "頑固だが優しい。",
      "頑固だが優しい",
      "你好吗？",
      "كريم جدا؟",
      "يحب الشاي",
      "Er sagt immer „Nein“",
      "Er sagt „Nein!“",
      "A stubborn smith",
      "Says 'aye'",
    ].map(sentence),
    [
      "頑固だが優しい。",
      "頑固だが優しい。",
      "你好吗？",
      "كريم جدا؟",
      "يحب الشاي.",
      "Er sagt immer „Nein“",
      "Er sagt „Nein!“",
      "A stubborn smith.",
      "Says 'aye'",
    ],
  );
  assert.equal(listSentence(["剣は金貨10枚。", "盾は金貨5枚"]), "剣は金貨10枚; 盾は金貨5枚。");
  assert.equal(listSentence(["Sell swords.", " Find the ring "]), "Sell swords; Find the ring.");
  assert.deepEqual(
    actorLines({
      name: "ゲン",
      role: "村の鍛冶屋",
      personality: "頑固だが優しい。",
      goals: ["店を守る。", "弟子を育てる"],
    }),
    ["You decide for ゲン, 村の鍛冶屋。", "Personality: 頑固だが優しい。", "Goals: 店を守る; 弟子を育てる。"],
  );
});

Deno.test("npc/talk: a Japanese persona's instructions have no English period after 。", async () => {
  const c = new NpcClient();
  await c.call("npc/create", {
    npc: "gen",
    persona: {
      name: "ゲン",
      role: "村の鍛冶屋",
      personality: "頑固だが優しい。",
      speakingStyle: "短く話す",
      knowledge: ["剣は金貨10枚。", "盾は金貨5枚"],
    },
    options: { replyFormat: "text" },
    model: capture({ text: "[happy] いらっしゃい。" }),
  });
  await c.call("npc/talk", { npc: "gen", line: "こんにちは" });
  const instructions = c.models[0].requests[0].instructions as string;
  assert.match(instructions, /^Personality: 頑固だが優しい。$/m);
  assert.match(instructions, /^Speaking style: 短く話す。$/m);
  assert.match(instructions, /^You know: 剣は金貨10枚; 盾は金貨5枚。$/m);
  assert.doesNotMatch(instructions, /。\./);
  await c.close();
});
