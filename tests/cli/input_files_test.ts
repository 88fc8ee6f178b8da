/**
 * Input files people get wrong: one saved in a legacy encoding (not UTF-8), and a relative path typed in
 * another folder than the one `deno task oam` runs in.
 */
import assert from "node:assert/strict";
import { Fixtures, oam } from "./cli_helper.ts";
import { Terminal } from "./turn_helper.ts";

const fx = await Fixtures.create();
Deno.test.afterAll(() => fx.remove());

Deno.test("npc: a persona file saved as Latin-1 is refused with where the first bad byte is", async () => {
  const path = fx.path("cafe.jsonc");
  // "Café" in Latin-1 (0xE9), as a Windows editor's "ANSI" encoding saves it.
  const head = new TextEncoder().encode('{\n  "persona": {"name": "Caf');
  const tail = new TextEncoder().encode('", "role": "a cook"}\n}\n');
  await Deno.writeFile(path, new Uint8Array([...head, 0xe9, ...tail]));
  const r = await oam(["npc", path, "--script", await fx.write("s.json", [{ text: "Hi." }])], { stdin: "" });
  assert.equal(r.code, 2, r.stderr);
  assert.equal(
    r.stderr,
    `Error: ${path}: not UTF-8 text (byte 0xE9 at line 2, column 27); save it as UTF-8. [invalid_input]\n`,
  );
});

Deno.test("tools validate: a tools file from stdin that is not UTF-8 is refused", async () => {
  const r = await oam(["tools", "validate", "-"], {
    stdinBytes: new Uint8Array([
      ...new TextEncoder().encode('[{"name": "x", "description": "caf'),
      0xe9,
      0x22,
    ]),
  });
  assert.equal(r.code, 2, r.stderr);
  assert.match(r.stderr, /^Error: <stdin>: not UTF-8 text \(byte 0xE9 at offset 34: line 1, column 35\)/);
});

Deno.test("npc under deno task: a relative path typed in another folder names the file found there", async () => {
  const elsewhere = await Deno.makeTempDir({ prefix: "oam-cli-elsewhere-" });
  try {
    await Deno.writeTextFile(`${elsewhere}/gorm.jsonc`, '{"persona": {"name": "Gorm", "role": "smith"}}');
    // deno task runs the command in the repository's folder and says where it was typed in INIT_CWD.
    const r = await oam(["npc", "gorm.jsonc"], { stdin: "", cwd: fx.dir, env: { INIT_CWD: elsewhere } });
    assert.equal(r.code, 2, r.stderr);
    assert.equal(
      r.stderr,
      `Error: No such file: 'gorm.jsonc' in ${fx.dir}, where the command runs (deno task runs it in its ` +
        `configuration's folder); you typed it in ${elsewhere}: give the full path, ` +
        `'${elsewhere}/gorm.jsonc'. [invalid_input]\n`,
    );
  } finally {
    await Deno.remove(elsewhere, { recursive: true });
  }
});

Deno.test("npc: a persona file whose 'persona' key is misspelt names the key it has", async () => {
  const path = await fx.write("typo.jsonc", '{"personna": {"name": "Gorm", "role": "smith"}}');
  const r = await oam(["npc", path], { stdin: "" });
  assert.equal(r.code, 2, r.stderr);
  assert.equal(
    r.stderr,
    `Error: ${path}: 'persona' must be an object with a 'name'; the file has 'personna' (did you mean ` +
      `'persona'?). [invalid_input]\n`,
  );
});

Deno.test({
  name: "tools validate - at a terminal: a hint on stderr says it reads stdin and how to end it",
  ignore: Deno.build.os !== "linux", // the pseudo-terminal comes from util-linux `script`
  fn: async () => {
    const file = fx.path("validate.out");
    const t = new Terminal(["tools", "validate", "-"], { stdout: { file } });
    try {
      await t.out.until((screen) => screen.includes("Ctrl-D"));
      await t.type('[{"name": "wave", "description": "Waves."}]\n\x04');
      const r = await t.exit();
      assert.equal(r.code, 0);
      assert.match(
        r.stdout,
        /^Reading stdin from the terminal: type or paste it, then press Ctrl-D at the start of a line\.\r\n/,
      );
      assert.match(await Deno.readTextFile(file), /wave/);
    } finally {
      await t.kill();
    }
  },
});

Deno.test("chat --resume with a persona file names the command that talks to it", async () => {
  const path = await fx.write("gorm.jsonc", '{"persona": {"name": "Gorm", "role": "smith"}}');
  const r = await oam(["chat", "--resume", path], { stdin: "" });
  assert.equal(r.code, 2, r.stderr);
  assert.match(
    r.stderr,
    new RegExp(
      `^Error: ${path} is an NPC persona file, not a conversation: talk to it with '.* npc ${path}' `,
    ),
  );
});

Deno.test("chat under deno task typed in another folder: /save says the full path it wrote", async () => {
  const elsewhere = await Deno.makeTempDir({ prefix: "oam-cli-elsewhere-" });
  try {
    const script = await fx.write("hello.json", [{ text: "Hello." }]);
    const r = await oam(["chat", "--script", script], {
      stdin: "hi\n/save talk.json\n",
      cwd: fx.dir,
      env: { INIT_CWD: elsewhere },
    });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, `Hello.\n(saved to ${fx.dir}/talk.json)\n`);
  } finally {
    await Deno.remove(elsewhere, { recursive: true });
  }
});

Deno.test("npc under deno task typed in another folder: /state says the full path it wrote", async () => {
  const elsewhere = await Deno.makeTempDir({ prefix: "oam-cli-elsewhere-" });
  try {
    const persona = await fx.write("smith.jsonc", '{"persona": {"name": "Gorm", "role": "smith"}}');
    const r = await oam(["npc", persona, "--script", await fx.write("e.json", [])], {
      stdin: "/state gorm-save.json\n",
      cwd: fx.dir,
      env: { INIT_CWD: elsewhere },
    });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, new RegExp(`\\(saved to ${fx.dir}/gorm-save\\.json\\)\\n`));
  } finally {
    await Deno.remove(elsewhere, { recursive: true });
  }
});
