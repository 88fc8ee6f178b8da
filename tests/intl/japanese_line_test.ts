/**
 * A model speaking Japanese labels and quotes a line the Japanese way: "ゲン：「いらっしゃい！」" (a
 * full-width colon, corner brackets). The player should see "いらっしゃい！", as "Gorm: "Welcome!"" shows
 * "Welcome!", and the streamed deltas should add up to that line without a lineReset.
 */
import assert from "node:assert/strict";
import type { JsonObject } from "../../src/protocol/json.ts";
import { cleanLine, visibleLine } from "../../src/game/npc/reply_format.ts";
import { capture, NpcClient, reply } from "../game/npc/npc_helpers.ts";

Deno.test("cleanLine and visibleLine: a full-width colon label and 「」 or 『』 around the whole line", () => {
  assert.equal(cleanLine("ゲン：「いらっしゃい！剣かい？」", "ゲン"), "いらっしゃい！剣かい？");
  assert.equal(cleanLine("**ゲン**：『また来たのか。』", "ゲン"), "また来たのか。");
  assert.equal(cleanLine("「いらっしゃい」と言った。", "ゲン"), "「いらっしゃい」と言った。");
  assert.equal(cleanLine("ゲンは笑った。", "ゲン"), "ゲンは笑った。");
  assert.equal(visibleLine("ゲン", "ゲン"), "");
  assert.equal(visibleLine("ゲン：「いらっ", "ゲン"), "いらっ");
  assert.equal(visibleLine("ゲン：「いらっしゃい」", "ゲン"), "いらっしゃい");
});

for (const format of ["text", "structured"] as const) {
  Deno.test(`npc/talk (${format}): "ゲン：「…」" shows the line alone, streamed without a reset`, async () => {
    const c = new NpcClient();
    const said = "ゲン：「いらっしゃい！剣かい？」";
    await c.call("npc/create", {
      npc: "gen",
      persona: { name: "ゲン" },
      options: { replyFormat: format, playerOptionCount: format === "text" ? 0 : 3 },
      model: capture(
        format === "text" ? { text: `[happy] ${said}`, chunks: 6 } : { ...reply(said), chunks: 6 },
      ),
    });
    const id = c.request("npc/talk", { npc: "gen", line: "こんにちは", stream: true });
    const result = (await c.response(id)).result as JsonObject;
    assert.equal(result.line, "いらっしゃい！剣かい？");
    const events = c.related(id).filter((m) => m.method === "npc/event").map((m) =>
      (m.params as JsonObject).event as JsonObject
    );
    assert.deepEqual(events.filter((e) => e.type === "lineReset"), []);
    assert.equal(events.filter((e) => e.type === "lineDelta").map((e) => e.delta).join(""), result.line);
    await c.close();
  });
}
