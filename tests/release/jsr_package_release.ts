/**
 * The package as a JSR user gets it: the files `deno publish --dry-run` lists, copied into a temporary folder
 * with nothing else of the repository beside it, used from a fresh project that maps the package's name to
 * that folder. Its scripts may read only the temporary folder, so a file the package needs at run time but does
 * not publish (or anything reached outside it, such as ../shared) fails here.
 */
import assert from "node:assert/strict";
import { copyFiles, dryRun } from "./published_files.ts";

const NAME = "@open-apple-models/bridge";

/** The shipped personas, each talked to once on its own script: the line its NPC answers. */
const PERSONAS_SCRIPT = `import { Bridge, loadPersona } from "${NAME}";
import { BridgeEngine } from "${NAME}/engine";

const personas = new URL("./personas/", import.meta.resolve("${NAME}"));
const lines: Record<string, string> = {};
await using bridge = await Bridge.open();
for (const name of ["guard", "sage", "shopkeeper"]) {
  const file = await loadPersona(new URL(\`\${name}.jsonc\`, personas), { onWarning: (w) => { throw new Error(w); } });
  const tools = (file.tools ?? []).map((definition) =>
    bridge.tool(definition, () => definition.name === "check_stock" ? "3 ale left, 4 gold each." : { opened: true })
  );
  const world = file.world ? await bridge.createWorld(file.world) : undefined;
  const npc = await bridge.createNpc(file.persona, {
    tools,
    world,
    memory: file.memory,
    options: file.options,
    model: { type: "scripted", steps: file.steps },
  });
  lines[file.persona.name] = (await npc.talk("Hello, I am Aria.")).line;
}
const wire: string[] = [];
const engine = new BridgeEngine({}, (line) => wire.push(line));
engine.receive('{"jsonrpc":"2.0","id":1,"method":"ping"}');
console.log(JSON.stringify({ lines, engine: wire }));
`;

/** Bridge.spawn() of the `oam` a JSR user installs from the package's `./cli` export. */
const SPAWN_SCRIPT = `import { Bridge } from "${NAME}";

await using bridge = await Bridge.spawn({ stderr: "null" });
const guard = await bridge.createSession({ model: { type: "scripted", steps: [{ text: "Halt!" }] } });
console.log(JSON.stringify({ server: bridge.server.server.name, text: (await guard.respond("Hi")).text }));
`;

/**
 * The flags of the README's `deno install -g -n oam … jsr:@open-apple-models/bridge/cli` line (mod.ts's
 * module doc gives the same line).
 */
function installFlags(): string[] {
  const line = (text: string) => {
    const m = /`(deno install -g -n oam [^`]*?) jsr:@open-apple-models\/bridge\/cli`/.exec(
      text.replace(/\s*\n\s*(\*\s*)?/g, " "),
    );
    assert.ok(m, "the install line");
    return m[1];
  };
  const readme = line(Deno.readTextFileSync(new URL("../../README.md", import.meta.url)));
  assert.equal(line(Deno.readTextFileSync(new URL("../../mod.ts", import.meta.url))), readme);
  return readme.split(" ").slice(2);
}

async function deno(
  args: string[],
  cwd: string,
  env: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = await new Deno.Command(Deno.execPath(), {
    args,
    cwd,
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1", ...env },
    signal: AbortSignal.timeout(120_000),
  }).output();
  const text = (b: Uint8Array) => new TextDecoder().decode(b);
  return { code: out.code, stdout: text(out.stdout), stderr: text(out.stderr) };
}

Deno.test("the published files alone: a fresh project type-checks them (with the ./cli export), loads the shipped personas, talks to them and drives the engine", async () => {
  const dir = await Deno.makeTempDir({ prefix: "oam-jsr-" });
  try {
    const published = await dryRun();
    assert.equal(published.code, 0, published.text);
    await copyFiles(published.files, `${dir}/package`);
    await Deno.mkdir(`${dir}/app`);
    await Deno.writeTextFile(
      `${dir}/app/deno.json`,
      JSON.stringify({
        imports: { [NAME]: "../package/mod.ts", [`${NAME}/engine`]: "../package/engine.ts" },
      }),
    );
    await Deno.writeTextFile(`${dir}/app/personas.ts`, PERSONAS_SCRIPT);
    // The script's graph (mod.ts, engine.ts) and the ./cli export's (every command, the playground's bundle).
    const check = await deno(["check", "--quiet", "personas.ts", "../package/cli.ts"], `${dir}/app`);
    assert.equal(check.code, 0, check.stderr);
    const run = await deno(
      ["run", "--quiet", "--no-prompt", `--allow-read=${dir}`, "personas.ts"],
      `${dir}/app`,
    );
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stderr, "");
    assert.deepEqual(JSON.parse(run.stdout), {
      lines: {
        Bram: "State your business at the north gate.",
        Wenna: "Aria, is it? Sit, mind the nettles.",
        Mira: "We have 3 ale left, 4 gold each. What'll it be?",
      },
      engine: ['{"jsonrpc":"2.0","id":1,"result":{}}'],
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the published ./cli export installs as `oam` (deno install), and Bridge.spawn() finds it through OAM_BRIDGE_PATH", async () => {
  const dir = await Deno.makeTempDir({ prefix: "oam-jsr-" });
  try {
    const published = await dryRun();
    assert.equal(published.code, 0, published.text);
    await copyFiles(published.files, `${dir}/package`);
    await Deno.mkdir(`${dir}/app`);
    await Deno.writeTextFile(
      `${dir}/app/deno.json`,
      JSON.stringify({ imports: { [NAME]: "../package/mod.ts" } }),
    );
    await Deno.writeTextFile(`${dir}/app/spawn.ts`, SPAWN_SCRIPT);
    // The README's install line, with the package folder where JSR users write jsr:…/cli.
    const install = await deno(
      ["install", "--root", `${dir}/tools`, ...installFlags(), `${dir}/package/cli.ts`],
      `${dir}/app`,
    );
    assert.equal(install.code, 0, install.stderr);
    const oam = `${dir}/tools/bin/oam`;
    const path = `${Deno.execPath().slice(0, Deno.execPath().lastIndexOf("/"))}:${
      Deno.env.get("PATH") ?? ""
    }`;
    const run = await deno(
      ["run", "--quiet", "--no-prompt", `--allow-run=${oam}`, "--allow-env=OAM_BRIDGE_PATH", "spawn.ts"],
      `${dir}/app`,
      { OAM_BRIDGE_PATH: oam, PATH: path },
    );
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stderr, "");
    assert.deepEqual(JSON.parse(run.stdout), { server: "open-apple-models", text: "Halt!" });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
