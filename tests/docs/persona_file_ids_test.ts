/**
 * A persona file names its NPC (`"npc": "mira"`), and `oam npc` gives the NPC that id. A script that creates
 * the NPC from the file's parts keeps it only by passing `npc: file.npc`, so every example that does so passes
 * an id: a designer who copies one gets `mira` (in saves, `ctx.npc`, `npc/list`) as at the terminal, not `npc1`.
 */
import assert from "node:assert/strict";

const ROOT = new URL("../../", import.meta.url);

function* texts(): Generator<[string, string]> {
  yield ["README.md", Deno.readTextFileSync(new URL("README.md", ROOT))];
  for (const folder of ["docs/", "examples/", "src/client/"]) {
    for (const entry of Deno.readDirSync(new URL(folder, ROOT))) {
      if (!/\.(md|ts)$/.test(entry.name)) continue;
      yield [`${folder}${entry.name}`, Deno.readTextFileSync(new URL(`${folder}${entry.name}`, ROOT))];
    }
  }
}

Deno.test("every createNpc(file.persona, …) in the docs, examples and client docs passes the file's npc id", () => {
  let found = 0;
  for (const [name, text] of texts()) {
    for (const match of text.matchAll(/createNpc\((\w+)\.persona, \{/g)) {
      found++;
      // The options object: up to its closing brace at the same depth.
      let depth = 0;
      let end = match.index + match[0].length - 1;
      for (; end < text.length; end++) {
        if (text[end] === "{") depth++;
        else if (text[end] === "}" && --depth === 0) break;
      }
      const options = text.slice(match.index, end + 1);
      assert.match(options, /\bnpc\b[,:]/, `${name}: ${options}`);
    }
  }
  assert.ok(found >= 5, `only ${found} found`);
});
