/**
 * Files written by editors that add a UTF-8 byte order mark (Windows Notepad, some Japanese editors) and CRLF
 * line endings, with Japanese, German and Arabic text: `oam npc` reads them as any other file.
 */
import assert from "node:assert/strict";
import { Fixtures, oam } from "./cli_helper.ts";

const fx = await Fixtures.create();
Deno.test.afterAll(() => fx.remove());

const BOM = "\ufeff";

Deno.test("npc: a persona file and a script with a byte order mark and CRLF line endings", async () => {
  const persona = await fx.write(
    "gen.jsonc",
    BOM + [
      "// 鍛冶屋のゲン",
      "{",
      '  "npc": "ゲン",',
      '  "persona": {"name": "ゲン", "role": "村の鍛冶屋", "knowledge": ["Grüße aus Köln", "مرحبا"]},',
      '  "options": {"replyFormat": "text"},',
      '  "world": {"インベントリ": {"金貨": 5}}',
      "}",
      "",
    ].join("\r\n"),
  );
  const script = await fx.write(
    "gen.steps.json",
    `${BOM}[\r\n  {"text": "[happy] いらっしゃい！👨‍👩‍👧‍👦 Grüße! مرحبا"}\r\n]\r\n`,
  );
  const r = await oam(["npc", persona, "--script", script], { stdin: "こんにちは\n/world\n" });
  assert.equal(r.stderr, "");
  assert.equal(r.code, 0);
  assert.match(r.stdout, /ゲン \[happy\]: いらっしゃい！👨‍👩‍👧‍👦 Grüße! مرحبا\n/);
  assert.match(r.stdout, /"インベントリ": \{\n\s+"金貨": 5/);
});
