/**
 * The README's lines about running a GGUF model are true: the quickstart's flags for `--model gguf:` keep
 * node-llama-cpp out of `deno.lock` (`-A` alone pinned ≈ 700 lines of it into the repository's lock file), and
 * the examples said to pick a cached model by themselves are the ones that do.
 */
import assert from "node:assert/strict";

const root = new URL("../../", import.meta.url);
const README = await Deno.readTextFile(new URL("README.md", root));

Deno.test("README quickstart: running it on a GGUF model passes --no-lock", () => {
  const intro = README.slice(README.indexOf("## Quickstart"), README.indexOf("```ts"));
  const sentence = intro.slice(intro.indexOf("`--model gguf:"));
  assert.ok(sentence.length < intro.length, "the quickstart names --model gguf:");
  assert.match(sentence, /`-A --no-lock`/);
});

Deno.test("examples/quickstart.ts: its opening comment names a local GGUF model with the flags it needs", async () => {
  // The first lines a designer off a Mac reads (the README's quickstart block is this file verbatim).
  const source = await Deno.readTextFile(new URL("examples/quickstart.ts", root));
  const header = source.split("\n").filter((l) => l.startsWith("//")).join(" ");
  assert.match(header, /--model gguf:<file> \(-A --no-lock\)/);
});

Deno.test("README: the examples said to pick a cached GGUF model are those that do", async () => {
  const picking: string[] = [];
  for await (const entry of Deno.readDir(new URL("examples/", root))) {
    if (!entry.name.endsWith(".ts")) continue;
    const source = await Deno.readTextFile(new URL(`examples/${entry.name}`, root));
    if (source.includes("firstCachedModel()")) picking.push(`examples/${entry.name}`);
  }
  const line = README.split("\n\n").find((p) => p.includes("pick a cached model by themselves"));
  assert.ok(line, "the README says which commands pick a cached model");
  const named = [...line.matchAll(/`(examples\/[\w.]+)`/g)].map((m) => m[1]);
  assert.deepEqual(named.sort(), picking.sort());
});

Deno.test("README: relative paths in the two commands start in the repository's folder, as deno task runs there", async () => {
  const section = README.slice(README.indexOf("## A local model in two commands"));
  assert.match(section, /`deno task` runs in the repository's folder whatever folder you type it in/);
  // An NPC file in the folder the command is typed in is not found by that relative name.
  const elsewhere = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(`${elsewhere}/gorm.jsonc`, '{"persona": {"name": "Gorm", "role": "a smith"}}');
    const child = await new Deno.Command(Deno.execPath(), {
      args: ["task", "--quiet", "--config", new URL("deno.json", root).pathname, "oam", "npc", "gorm.jsonc"],
      cwd: elsewhere,
      env: { NO_COLOR: "1" },
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.equal(child.code, 2);
    assert.match(new TextDecoder().decode(child.stderr), /No such file: 'gorm\.jsonc'/);
  } finally {
    await Deno.remove(elsewhere, { recursive: true });
  }
});
