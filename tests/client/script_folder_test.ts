/**
 * A `deno run` script in a folder of its own that imports this checkout's `mod.ts` by path (README's
 * Quickstart): what it is told when something is missing must be what its author can type there.
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";

const MOD = new URL("../../mod.ts", import.meta.url).href;
const CLI = fileURLToPath(new URL("../../cli.ts", import.meta.url));

/**
 * Runs `source` as `game.ts` in a fresh folder (with `files` in it) with `flags`, the model cache under that
 * folder (`cache/oam/models`); returns its output.
 */
async function runScript(
  source: string,
  flags: string[],
  args: string[] = [],
  files: Record<string, Uint8Array> = {},
) {
  const dir = await Deno.makeTempDir({ prefix: "oam-game-" });
  try {
    await Deno.writeTextFile(`${dir}/game.ts`, source);
    for (const [name, bytes] of Object.entries(files)) {
      await Deno.mkdir(`${dir}/${name.slice(0, name.lastIndexOf("/"))}`, { recursive: true });
      await Deno.writeFile(`${dir}/${name}`, bytes);
    }
    const output = await new Deno.Command(Deno.execPath(), {
      args: ["run", "--quiet", "--no-prompt", ...flags, "game.ts", ...args],
      cwd: dir,
      clearEnv: true,
      env: { PATH: Deno.env.get("PATH") ?? "", HOME: dir, XDG_CACHE_HOME: `${dir}/cache`, NO_COLOR: "1" },
      stdin: "null",
    }).output();
    return {
      code: output.code,
      stdout: new TextDecoder().decode(output.stdout),
      stderr: new TextDecoder().decode(output.stderr),
      dir,
    };
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("a script of its own that names a GGUF model nobody cached is told the checkout's command for the cache, not 'oam'", async () => {
  const r = await runScript(
    `import { Bridge, modelFromArgs } from "${MOD}";\n` +
      "await using bridge = await Bridge.open({ onWarning: () => {} });\n" +
      "const npc = await bridge.createNpc({ name: 'Gorm' }, { model: modelFromArgs(Deno.args, []) });\n" +
      "await npc.talk('Hello.').then(() => console.log('talked'), (e) => console.log(e.message));\n",
    ["-A", "--no-lock"],
    ["--model", "gguf:no-such-model"],
  );
  assert.equal(r.code, 0, r.stderr);
  const command = `deno run -A --no-lock ${CLI}`;
  assert.equal(
    r.stdout.trim(),
    `The model file 'no-such-model' does not exist, and no cached model is called that (in ${r.dir}/cache/oam/models: ` +
      `'${command} models list' shows them, '${command} models pull <url>' downloads one).`,
  );
});

/** A script that talks once to an NPC on `--model …` and prints the error's message. */
const TALK = `import { Bridge, modelFromArgs } from "${MOD}";\n` +
  "await using bridge = await Bridge.open({ onWarning: () => {} });\n" +
  "const npc = await bridge.createNpc({ name: 'Gorm' }, { model: modelFromArgs(Deno.args, []) });\n" +
  "await npc.talk('Hello.').then(() => console.log('talked'), (e) => console.log(e.message));\n";
/** The GGUF header: enough for the file check, which comes before node-llama-cpp's permissions. */
const GGUF_HEADER = new Uint8Array([...new TextEncoder().encode("GGUF"), 3, 0, 0, 0]);
const FLAGS = "--allow-read --allow-env --allow-sys --allow-ffi --allow-run";
const ADD =
  `add them to this script's command, deno run ${FLAGS} --no-lock game.ts (or deno run -A --no-lock game.ts).`;

Deno.test("a script of its own run on a GGUF model without its permissions is told all of them, with its own command", async (t) => {
  const model = `${await Deno.makeTempDir({ prefix: "oam-model-" })}/model.gguf`;
  try {
    await Deno.writeFile(model, GGUF_HEADER);
    await t.step("with --allow-read only", async () => {
      const r = await runScript(TALK, ["--allow-read"], ["--model", `gguf:${model}`]);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(
        r.stdout.trim(),
        `node-llama-cpp cannot run without --allow-env --allow-sys --allow-ffi --allow-run. It needs ${FLAGS}: ${ADD}`,
      );
    });
    await t.step("with no flag: reading the file is not the only one missing", async () => {
      const r = await runScript(TALK, [], ["--model", `gguf:${model}`]);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(
        r.stdout.trim(),
        `Reading the model file '${model}' needs --allow-read, and node-llama-cpp needs --allow-env --allow-sys ` +
          `--allow-ffi --allow-run: ${ADD}`,
      );
    });
  } finally {
    await Deno.remove(model.slice(0, model.lastIndexOf("/")), { recursive: true });
  }
});

Deno.test("a script of its own that names a cached GGUF model without --allow-env is told the cache needs it, not that there is no model", async () => {
  const r = await runScript(TALK, ["--allow-read"], ["--model", "gguf:tiny"], {
    "cache/oam/models/tiny.gguf": GGUF_HEADER,
  });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(
    r.stdout.trim(),
    "The model file 'tiny' does not exist, and without --allow-env no cached model can be looked up by that " +
      `name. It needs ${FLAGS}: ${ADD}`,
  );
});

Deno.test("a copied example that loads the package's persona beside it is told where the checkout's file is", async () => {
  // examples/quickstart.ts copied into a folder of its own, its import pointed at the checkout's mod.ts.
  const r = await runScript(
    `import { loadPersona } from "${MOD}";\n` +
      'await loadPersona(new URL("../personas/shopkeeper.jsonc", import.meta.url))\n' +
      "  .catch((e) => console.log(e.message));\n" +
      'await loadPersona(new URL("./mine.jsonc", import.meta.url)).catch((e) => console.log(e.message));\n',
    ["--allow-read"],
  );
  assert.equal(r.code, 0, r.stderr);
  const shop = fileURLToPath(new URL("../../personas/shopkeeper.jsonc", import.meta.url));
  const parent = new URL("..", `file://${r.dir}/`).href;
  assert.deepEqual(r.stdout.trim().split("\n"), [
    `loadPersona: there is no file '${parent}personas/shopkeeper.jsonc'. This package has a persona of that ` +
    `name, ${shop}: load it from there, or copy it (with shopkeeper.steps.json, its script) beside your script.`,
    `loadPersona: there is no file 'file://${r.dir}/mine.jsonc'.`,
  ]);
});
