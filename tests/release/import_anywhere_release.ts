/**
 * The library is importable from anywhere (issue 12, item 3): a script in a temporary folder outside the
 * repository, with no configuration of its own (`--no-config`, no import map, no permissions), imports
 * mod.ts by absolute path, type-checks, and runs a scripted NPC talk with a client tool.
 */
import assert from "node:assert/strict";

const MOD = new URL("../../mod.ts", import.meta.url);

const SCRIPT = `import { Bridge } from ${JSON.stringify(MOD.href)};

await using bridge = await Bridge.open();
const stock = bridge.tool({
  name: "check_stock",
  description: "How many of an item the shop has.",
  parameters: { type: "object", properties: { item: { type: "string" } }, required: ["item"] },
}, ({ item }) => ({ item, count: item.length }));
const mira = await bridge.createNpc({ name: "Mira", role: "the innkeeper" }, {
  tools: [stock],
  options: { groundingTool: "check_stock" },
  model: {
    type: "scripted",
    steps: [
      { toolCalls: [{ name: "check_stock", arguments: { item: "ale" } }] },
      {
        json: {
          emotion: "happy",
          line: "Three ales left!",
          player_options: ["One, please.", "Two!", "No, thanks."],
          ends_conversation: false,
        },
      },
    ],
  },
});
const deltas: string[] = [];
const reply = await mira.talk("Any ale?", { onLine: (delta) => deltas.push(delta) });
console.log(JSON.stringify({
  line: reply.line,
  streamed: deltas.join(""),
  emotion: reply.emotion,
  options: reply.playerOptions,
  output: reply.toolCalls[0].output,
}));
`;

async function deno(args: string[], cwd: string): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = await new Deno.Command(Deno.execPath(), {
    args,
    cwd,
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).output();
  const text = (b: Uint8Array) => new TextDecoder().decode(b);
  return { code: out.code, stdout: text(out.stdout), stderr: text(out.stderr) };
}

Deno.test("a script outside the repository imports mod.ts by path, type-checks and runs an NPC talk", async () => {
  const dir = await Deno.makeTempDir({ prefix: "oam-outside-" });
  try {
    const repo = new URL("../../", import.meta.url).pathname;
    assert.ok(!dir.startsWith(repo), `${dir} is outside ${repo}`);
    await Deno.writeTextFile(`${dir}/npc.ts`, SCRIPT);
    const check = await deno(["check", "--quiet", "--no-config", "npc.ts"], dir);
    assert.equal(check.code, 0, check.stderr);
    const run = await deno(["run", "--quiet", "--no-config", "--no-prompt", "npc.ts"], dir);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stderr, "");
    assert.deepEqual(JSON.parse(run.stdout), {
      line: "Three ales left!",
      streamed: "Three ales left!",
      emotion: "happy",
      options: ["One, please.", "Two!", "No, thanks."],
      output: { item: "ale", count: 3 },
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("no module under src/ (nor mod.ts, engine.ts) imports a bare specifier only the import map resolves", async () => {
  const root = new URL("../../", import.meta.url);
  const files = ["mod.ts", "engine.ts"];
  const walk = async (dir: URL, prefix: string) => {
    for await (const entry of Deno.readDir(dir)) {
      if (entry.isDirectory) await walk(new URL(`${entry.name}/`, dir), `${prefix}${entry.name}/`);
      else if (entry.name.endsWith(".ts")) files.push(`${prefix}${entry.name}`);
    }
  };
  await walk(new URL("src/", root), "src/");
  const bare: string[] = [];
  // Static imports and re-exports (`import … from "x"`, `export … from "x"`, `import "x"`) and `import("x")`.
  const specifier =
    /^(?:(?:import|export)\s[^;]*?\bfrom\s*|import\s+)["']([^"']+)["']|\bimport\(\s*["']([^"']+)["']/gm;
  for (const file of files) {
    // Comments (JSDoc examples import the package by name, as its users do) are not imports.
    const source = (await Deno.readTextFile(new URL(file, root))).replace(/^\s*\/\*[\s\S]*?\*\//gm, "");
    for (const [, fromStatement, fromCall] of source.matchAll(specifier)) {
      const spec = fromStatement ?? fromCall;
      if (!/^(\.{1,2}\/|\/|node:|npm:|jsr:|https?:|data:)/.test(spec)) bare.push(`${file}: ${spec}`);
    }
  }
  assert.ok(files.length > 100, `${files.length} files`);
  assert.deepEqual(bare, []);
});
