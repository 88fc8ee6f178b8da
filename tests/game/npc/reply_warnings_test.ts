/**
 * A scripted reply the NPC cannot use fully gets a warning in the `npc/talk` result instead of losing the
 * value silently: camelCase (or otherwise misspelt) reply keys, an emotion that is not one of the protocol's
 * or not one the NPC may show, a text reply's unknown `[tag]`, a reply without a line. Correct replies (and
 * lenient synonyms like "mad") get none.
 */
import assert from "node:assert/strict";
import { WireClient } from "../../helpers/wire.ts";
import type { JsonObject, JsonValue } from "../../../src/protocol/json.ts";

const ALL =
  "neutral, happy, sad, angry, afraid, surprised, suspicious, amused, disgusted, excited, curious, " +
  "confused, worried, grateful, annoyed, proud";

async function talkResults(options: JsonObject, ...steps: JsonValue[]): Promise<JsonObject[]> {
  const c = new WireClient();
  await c.call("npc/create", {
    npc: "gorm",
    persona: { name: "Gorm" },
    options: { compactAfterTurns: 0, ...options },
    model: { type: "scripted", steps },
  });
  const out: JsonObject[] = [];
  for (let i = 0; i < steps.length; i++) out.push(await c.call("npc/talk", { npc: "gorm", line: "Hi." }));
  return out;
}

Deno.test("npc/talk warns about camelCase reply keys and unknown emotions in a structured reply", async () => {
  const [result] = await talkResults({}, {
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
        "The reply's key 'playerOptions' was ignored (did you mean 'player_options'?): the reply's keys are " +
        "emotion, line, player_options, ends_conversation.",
        "The reply's key 'endsConversation' was ignored (did you mean 'ends_conversation'?): the reply's keys " +
        "are emotion, line, player_options, ends_conversation.",
        "The reply's key 'mood' was ignored: the reply's keys are emotion, line, player_options, ends_conversation.",
        `The reply's emotion 'grumpyish' is not an emotion (${ALL}); 'neutral' was shown instead.`,
      ],
    },
  );
});

Deno.test("npc/talk warns about an emotion the NPC may not show, a missing line and an unknown [tag]", async () => {
  const [restricted, empty] = await talkResults(
    { emotions: ["happy", "sad"] },
    { json: { emotion: "angry", line: "Grr.", player_options: [], ends_conversation: false } },
    { json: { emotion: "happy", text: "Oops." } },
  );
  assert.deepEqual(restricted.warnings, [
    "The reply's emotion 'angry' is not one of this NPC's emotions (happy, sad); 'neutral' was shown instead.",
  ]);
  assert.equal(restricted.emotion, "neutral");
  assert.deepEqual(empty.warnings, [
    "The reply's key 'text' was ignored: the reply's keys are emotion, line, player_options, ends_conversation.",
    "The reply has no 'line'; a fallback line was used.",
  ]);
  assert.equal(empty.isFallback, true);

  const [tagged] = await talkResults({ replyFormat: "text" }, { text: "[sarcastic] Oh, wonderful." });
  assert.equal(tagged.line, "Oh, wonderful.");
  assert.deepEqual(tagged.warnings, [
    `The reply's emotion 'sarcastic' is not an emotion (${ALL}); 'neutral' was shown instead.`,
  ]);
});

Deno.test("npc/talk has no warnings for a correct reply or a synonym the parser maps", async () => {
  const results = await talkResults(
    {},
    { json: { emotion: "happy", line: "Welcome!", player_options: ["Hi."], ends_conversation: false } },
    { json: { emotion: "Mad!", line: "Out!", player_options: [], ends_conversation: true } },
  );
  assert.deepEqual(results.map((r) => [r.emotion, r.endsConversation, "warnings" in r]), [
    ["happy", false, false],
    ["angry", true, false],
  ]);
  const [text] = await talkResults({ replyFormat: "text" }, { text: "[scared] Who's there?" });
  assert.deepEqual([text.emotion, "warnings" in text], ["afraid", false]);
});
