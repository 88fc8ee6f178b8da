/**
 * Streamed text arrives in pieces; a model server may end a piece between the two halves of an emoji (an
 * escaped `\ud83d` in JSON mode, or a chunk that ends after the first half). What the bridge streams on
 * (`text` deltas, `lineDelta`, partial values) must never carry half an emoji: a lone surrogate is not
 * Unicode, and Swift's, Rust's or .NET's JSON decoders reject the whole message.
 */
import assert from "node:assert/strict";
import type { JsonObject } from "../../src/protocol/json.ts";
import { parsePartialJson } from "../../src/models/openai_partial_json.ts";
import { TextTracker } from "../../src/agent/text_tracker.ts";
import { LineTracker } from "../../src/game/npc/line_tracker.ts";
import type { ReplySettings } from "../../src/game/npc/reply_format.ts";

const SETTINGS: ReplySettings = {
  name: "ゲン",
  emotions: [],
  defaultEmotion: "neutral",
  maxSentences: 2,
  playerOptionCount: 0,
  canEndConversation: false,
};

Deno.test("a partial JSON answer cut after the first half of an escaped emoji leaves that half out", () => {
  assert.deepEqual(parsePartialJson('{"line": "いらっしゃい\\ud83d'), { line: "いらっしゃい" });
  assert.deepEqual(parsePartialJson('{"line": "いらっしゃい\\uD83D'), { line: "いらっしゃい" });
  assert.deepEqual(parsePartialJson('{"line": "いらっしゃい\\ud83d\\ude00'), { line: "いらっしゃい😀" });
  assert.deepEqual(parsePartialJson('{"line": "いらっしゃい\ud83d'), { line: "いらっしゃい" });
  // An escaped backslash before "ud83d" is text, not an escape.
  assert.deepEqual(parsePartialJson('{"line": "a\\\\ud83d'), { line: "a\\ud83d" });
});

Deno.test("text deltas: a snapshot ending in half an emoji shows the text before it; the next gives the whole emoji", () => {
  const t = new TextTracker();
  const deltas = ["Grüße \ud83d", "Grüße 😀", "Grüße 😀!"].map((s) => t.update(s)?.delta ?? null);
  assert.deepEqual(deltas, ["Grüße ", "😀", "!"]);
  for (const d of deltas) assert.ok(d === null || d.isWellFormed(), JSON.stringify(d));
});

Deno.test("NPC lineDelta: a partial line ending in half an emoji streams the text before it, then the emoji", () => {
  const events: JsonObject[] = [];
  const t = new LineTracker(SETTINGS, (e) => events.push(e));
  t.partial({ emotion: "happy", line: "鉄\ud83d" });
  t.partial({ emotion: "happy", line: "鉄🔨" });
  t.text("[happy] 鉄🔨 \ud83d");
  t.finish("happy", "鉄🔨 👋");
  const deltas = events.filter((e) => e.type === "lineDelta").map((e) => e.delta as string);
  assert.deepEqual(deltas, ["鉄", "🔨", " ", "👋"]);
});
