/**
 * A reply the NPC cannot use fully is never dropped silently. The scripted model holds a structured reply to
 * the reply schema (camelCase keys, an emotion outside the enum: `-32012` naming the problem); a backend that
 * does not constrain decoding (stood for by an unchecked capture model) gets its reply parsed leniently, and
 * the `npc/talk` result then carries `warnings`: misspelt reply keys, an emotion that is not one (or not one
 * the NPC may show), a reply without a line. A text reply's unknown `[tag]` is warned about on any model.
 * Correct replies, and synonyms the parser maps, get none.
 */
import assert from "node:assert/strict";
import { WireClient } from "../../helpers/wire.ts";
import type { JsonObject, JsonValue } from "../../../src/protocol/json.ts";
import { NpcClient, uncheckedCapture } from "./npc_helpers.ts";

const ALL =
  "neutral, happy, sad, angry, afraid, surprised, suspicious, amused, disgusted, excited, curious, " +
  "confused, worried, grateful, annoyed, proud";
const KEYS = "the reply's keys are emotion, line, player_options, ends_conversation.";

/** One talk per step on an NPC whose structured replies are not checked against the schema. */
async function uncheckedTalks(options: JsonObject, ...steps: JsonValue[]): Promise<JsonObject[]> {
  const c = new NpcClient();
  await c.call("npc/create", {
    npc: "gorm",
    persona: { name: "Gorm" },
    options: { compactAfterTurns: 0, ...options },
    model: uncheckedCapture(...steps),
  });
  const out: JsonObject[] = [];
  for (let i = 0; i < steps.length; i++) out.push(await c.call("npc/talk", { npc: "gorm", line: "Hi." }));
  return out;
}

Deno.test("npc/talk on the scripted model: a camelCase reply fails with -32012 naming the reply's key", async () => {
  const c = new WireClient();
  await c.call("npc/create", {
    npc: "gorm",
    persona: { name: "Gorm" },
    model: {
      type: "scripted",
      steps: [{
        json: { emotion: "happy", line: "Hm.", playerOptions: ["a", "b", "c"], endsConversation: false },
      }],
    },
  });
  const id = c.request("npc/talk", { npc: "gorm", line: "Hi." });
  const error = (await c.response(id)).error as JsonObject;
  assert.equal(error.code, -32012);
  assert.equal(
    (error.data as JsonObject).problem,
    "the answer does not match the response schema: #: must have required property 'player_options'",
  );
  assert.match(String(error.message), /invalid answer: .*must have required property 'player_options'/);
});

Deno.test("npc/talk warns about misspelt reply keys and unknown emotions in a reply it parses leniently", async () => {
  const [result] = await uncheckedTalks({}, {
    json: { emotion: "grumpyish", line: "Hm.", playerOptions: ["Bye."], endsConversation: true, mood: 1 },
  });
  assert.deepEqual(
    { ...result, usage: null },
    {
      npc: "gorm",
      line: "Hm.",
      emotion: "neutral",
      playerOptions: [],
      endsConversation: false,
      toolCalls: [],
      relationship: 0,
      isFallback: false,
      usage: null,
      warnings: [
        `The reply's key 'playerOptions' was ignored (did you mean 'player_options'?): ${KEYS}`,
        `The reply's key 'endsConversation' was ignored (did you mean 'ends_conversation'?): ${KEYS}`,
        `The reply's key 'mood' was ignored: ${KEYS}`,
        `The reply's emotion 'grumpyish' is not an emotion (${ALL}); 'neutral' was shown instead.`,
      ],
    },
  );
});

Deno.test("npc/talk: a reply key misspelt, not only written in another case, gets the key it meant", async () => {
  const [result] = await uncheckedTalks({}, {
    json: { emotion: "happy", line: "Hm.", player_option: ["Bye."], end_conversation: true },
  });
  assert.deepEqual(result.warnings, [
    `The reply's key 'player_option' was ignored (did you mean 'player_options'?): ${KEYS}`,
    `The reply's key 'end_conversation' was ignored (did you mean 'ends_conversation'?): ${KEYS}`,
  ]);
});

Deno.test("npc/talk warns about an emotion the NPC may not show and a reply without a line", async () => {
  const [restricted, empty] = await uncheckedTalks(
    { emotions: ["happy", "sad"], playerOptionCount: 0 },
    { json: { emotion: "angry", line: "Grr.", ends_conversation: false } },
    { json: { emotion: "happy", text: "Oops." } },
  );
  assert.deepEqual(restricted.warnings, [
    "The reply's emotion 'angry' is not one of this NPC's emotions (happy, sad); 'neutral' was shown instead.",
  ]);
  assert.equal(restricted.emotion, "neutral");
  assert.deepEqual(empty.warnings, [
    `The reply's key 'text' was ignored: ${KEYS}`,
    "The reply has no 'line'; a fallback line was used.",
  ]);
  assert.equal(empty.isFallback, true);
});

Deno.test("npc/talk warns about a text reply's unknown [tag], on the scripted model too", async () => {
  const c = new WireClient();
  await c.call("npc/create", {
    npc: "gorm",
    persona: { name: "Gorm" },
    options: { replyFormat: "text" },
    model: {
      type: "scripted",
      steps: [{ text: "[sarcastic] Oh, wonderful." }, { text: "[scared] Who's there?" }],
    },
  });
  const tagged = await c.call("npc/talk", { npc: "gorm", line: "Hi." });
  assert.equal(tagged.line, "Oh, wonderful.");
  assert.deepEqual(tagged.warnings, [
    `The reply's emotion 'sarcastic' is not an emotion (${ALL}); 'neutral' was shown instead.`,
  ]);
  const synonym = await c.call("npc/talk", { npc: "gorm", line: "Boo." });
  assert.deepEqual([synonym.emotion, "warnings" in synonym], ["afraid", false]);
});

Deno.test("npc/talk has no warnings for a correct reply or a synonym the lenient parser maps", async () => {
  const results = await uncheckedTalks(
    {},
    {
      json: {
        emotion: "happy",
        line: "Welcome!",
        player_options: ["Hi.", "Bye.", "Ale?"],
        ends_conversation: false,
      },
    },
    { json: { emotion: "Mad!", line: "Out!", player_options: [], ends_conversation: true } },
  );
  assert.deepEqual(results.map((r) => [r.emotion, r.endsConversation, "warnings" in r]), [
    ["happy", false, false],
    ["angry", true, false],
  ]);
});
