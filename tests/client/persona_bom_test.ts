/**
 * `loadPersona` reads a persona file and its script saved with a UTF-8 byte order mark and CRLF line endings
 * (as Windows Notepad and some Japanese editors save them).
 */
import assert from "node:assert/strict";
import { loadPersona } from "../../mod.ts";

Deno.test("loadPersona: a byte order mark and CRLF line endings are read like any other file", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(
      `${dir}/gen.jsonc`,
      '\ufeff// 鍛冶屋\r\n{\r\n  "persona": {"name": "ゲン", "role": "村の鍛冶屋"}\r\n}\r\n',
    );
    await Deno.writeTextFile(
      `${dir}/gen.steps.json`,
      '\ufeff[\r\n  {"text": "[happy] いらっしゃい！"}\r\n]\r\n',
    );
    assert.deepEqual(await loadPersona(`${dir}/gen.jsonc`), {
      persona: { name: "ゲン", role: "村の鍛冶屋" },
      steps: [{ text: "[happy] いらっしゃい！" }],
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
