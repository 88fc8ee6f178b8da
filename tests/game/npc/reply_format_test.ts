import assert from "node:assert/strict";
import type { JsonObject } from "../../../src/protocol/json.ts";
import { parseEmotion } from "../../../src/game/npc/emotions.ts";
import { LineTracker } from "../../../src/game/npc/line_tracker.ts";
import { mergePatch } from "../../../src/game/npc/merge_patch.ts";
import {
  cleanLine,
  cleanPlayerOptions,
  parseStructuredReply,
  parseTextReply,
  type ReplySettings,
  splitTag,
  visibleLine,
} from "../../../src/game/npc/reply_format.ts";

const SETTINGS: ReplySettings = {
  name: "Gorm",
  emotions: [],
  defaultEmotion: "neutral",
  maxSentences: 2,
  playerOptionCount: 3,
  canEndConversation: false,
};

Deno.test("parseEmotion: case, punctuation and synonyms; unknown words are null", () => {
  assert.equal(parseEmotion("Happy"), "happy");
  assert.equal(parseEmotion("**ANGRY!**"), "angry");
  assert.equal(parseEmotion("mad"), "angry");
  assert.equal(parseEmotion("scared"), "afraid");
  assert.equal(parseEmotion("gruff"), "annoyed");
  assert.equal(parseEmotion("nervous"), "worried");
  assert.equal(parseEmotion("banana"), null);
  assert.equal(parseEmotion("  "), null);
});

Deno.test("cleanLine: speaker labels and enclosing quotes", () => {
  assert.equal(cleanLine("  Gorm: Hello.  ", "Gorm"), "Hello.");
  assert.equal(cleanLine("gorm says: Hello.", "Gorm"), "Hello.");
  assert.equal(cleanLine("**Gorm**: Hello.", "Gorm"), "Hello.");
  assert.equal(cleanLine("**Gorm:** Hello.", "Gorm"), "Hello.");
  assert.equal(cleanLine("*Gorm*: Hello.", "Gorm"), "Hello.");
  assert.equal(cleanLine('"Hello there."', "Gorm"), "Hello there.");
  assert.equal(cleanLine("“Hello there.”", "Gorm"), "Hello there.");
  assert.equal(cleanLine('"Hello there.', "Gorm"), "Hello there.");
  assert.equal(cleanLine('"He said "no" twice."', "Gorm"), '"He said "no" twice."');
  assert.equal(cleanLine("Gormless fools.", "Gorm"), "Gormless fools.");
  assert.equal(cleanLine("'Tis true.", "Gorm"), "'Tis true.");
});

Deno.test("visibleLine: holds back a possible label, drops an opening quote, holds trailing quotes", () => {
  assert.equal(visibleLine("Go", "Gorm"), "");
  assert.equal(visibleLine("Gorm sa", "Gorm"), "");
  assert.equal(visibleLine("Gorm: ", "Gorm"), "");
  assert.equal(visibleLine('Gorm: "Hel', "Gorm"), "Hel");
  assert.equal(visibleLine("Gorm smiles", "Gorm"), "Gorm smiles");
  assert.equal(visibleLine('"Hello there." ', "Gorm"), "Hello there.");
  assert.equal(visibleLine("Hi", "Gorm"), "Hi");
});

Deno.test("splitTag and parseTextReply: tags, unclosed and long brackets", () => {
  assert.deepEqual(splitTag("[hap", false), { kind: "pending" });
  assert.deepEqual(splitTag("  ", false), { kind: "pending" });
  assert.deepEqual(splitTag(" [happy]  Hi", false), { kind: "split", tag: "happy", rest: "Hi" });
  const long = "[" + "x".repeat(30);
  assert.deepEqual(splitTag(long, false), { kind: "split", tag: null, rest: long });
  assert.deepEqual(parseTextReply("[Scared] Run!", SETTINGS), { emotion: "afraid", line: "Run!" });
  assert.deepEqual(parseTextReply("[what] Run!", SETTINGS), { emotion: "neutral", line: "Run!" });
  assert.deepEqual(parseTextReply("[unclosed Run!", SETTINGS), {
    emotion: "neutral",
    line: "[unclosed Run!",
  });
  assert.deepEqual(parseTextReply('[happy] Gorm: "Hi."', { ...SETTINGS, emotions: ["sad"] }), {
    emotion: "neutral",
    line: "Hi.",
  });
});

Deno.test("parseStructuredReply: defensive about types; options cleaned and capped; endsConversation only if allowed", () => {
  assert.deepEqual(
    parseStructuredReply({
      emotion: 7,
      line: ["x"],
      player_options: "nope",
      ends_conversation: true,
    } as unknown as JsonObject, SETTINGS),
    { emotion: "neutral", line: "", playerOptions: [], endsConversation: false },
  );
  assert.deepEqual(cleanPlayerOptions(["• One", "2) Two", "one", 5, "", "Player: 'Three'", "Four"], 3), [
    "One",
    "Two",
    "'Three'",
  ]);
  assert.deepEqual(
    parseStructuredReply({ emotion: "joyful", line: "Hi", ends_conversation: true }, {
      ...SETTINGS,
      canEndConversation: true,
    }),
    { emotion: "happy", line: "Hi", playerOptions: [], endsConversation: true },
  );
});

Deno.test("LineTracker: deltas and resets always add up to the final line", () => {
  const events: JsonObject[] = [];
  const t = new LineTracker(SETTINGS, (e) => events.push(e));
  t.partial({ emotion: "hap" });
  t.partial({ emotion: "happy", line: "" });
  t.partial({ emotion: "happy", line: "Gor" });
  t.partial({ emotion: "happy", line: "Gorm: Hi" });
  t.partial({ emotion: "happy", line: "Gorm: Hi there " });
  t.finish("sad", "Hi there!");
  assert.deepEqual(events, [
    { type: "emotion", emotion: "happy" },
    { type: "lineDelta", delta: "Hi" },
    { type: "lineDelta", delta: " there" },
    { type: "emotion", emotion: "sad" },
    { type: "lineDelta", delta: "!" },
  ]);
  const resets: JsonObject[] = [];
  const r = new LineTracker(SETTINGS, (e) => resets.push(e));
  r.text("[angry] No");
  r.finish("angry", "Yes.");
  assert.deepEqual(resets.slice(1), [{ type: "lineDelta", delta: "No" }, {
    type: "lineReset",
    line: "Yes.",
  }]);
});

Deno.test("mergePatch: RFC 7386 semantics and own keys only", () => {
  assert.deepEqual(mergePatch({ a: 1, b: { c: 2, d: 3 } }, { b: { c: null, e: 4 }, f: [1] }), {
    a: 1,
    b: { d: 3, e: 4 },
    f: [1],
  });
  assert.deepEqual(mergePatch({ a: 1 }, "x"), "x");
  assert.deepEqual(mergePatch("x", { a: { b: null } }), { a: {} });
  const patch = JSON.parse('{"__proto__":{"polluted":1},"constructor":{"prototype":{"polluted":1}}}');
  const merged = mergePatch({}, patch) as JsonObject;
  assert.deepEqual(Object.keys(merged), ["__proto__", "constructor"]);
  assert.equal(Object.getPrototypeOf(merged), Object.prototype);
  // deno-lint-ignore no-explicit-any
  assert.equal(({} as any).polluted, undefined);
});
