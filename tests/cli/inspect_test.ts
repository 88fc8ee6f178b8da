import assert from "node:assert/strict";
import type { JsonObject } from "../../src/protocol/json.ts";
import { childEnv, CLI, Fixtures, oam } from "./cli_helper.ts";

const fx = await Fixtures.create();
Deno.test.afterAll(() => fx.remove());
const script = await fx.write("script.json", [{ text: "hi" }]);

Deno.test("available: JSON and human output; exit 3 when unavailable", async () => {
  const ok = await oam(["available", "--json", "--compact", "--script", script]);
  assert.equal(ok.code, 0, ok.stderr);
  assert.equal(
    ok.stdout,
    `${
      JSON.stringify({
        available: true,
        model: "scripted",
        contextSize: 8192,
        variant: `scripted (${script})`,
        supportedLanguages: [],
      })
    }\n`,
  );
  const human = await oam(["available"], { env: { OAM_SCRIPT: script } });
  assert.equal(human.code, 0);
  assert.ok(human.stdout.startsWith("✓ The model is available.\n"), human.stdout);
  const down = await oam(["available", "--json", "--model", "openai:http://127.0.0.1:9/v1#m"]);
  assert.equal(down.code, 3);
  const body = JSON.parse(down.stdout) as JsonObject;
  assert.deepEqual(Object.keys(body).slice(0, 3), ["available", "reason", "model"]);
  assert.equal(body.available, false);
  assert.equal(body.model, "openai");
  const downHuman = await oam(["available", "--model", "openai:http://127.0.0.1:9/v1#m"]);
  assert.equal(downHuman.code, 3);
  assert.match(downHuman.stdout, /^✗ The model .* is unavailable/);
});

Deno.test("schema convert: file, stdin, --name, --json, warnings and invalid schemas", async () => {
  const schema = await fx.write(
    "mood.jsonc",
    `{ // JSONC is fine
  "type": "object",
  "properties": {"mood": {"enum": ["calm", "angry"]}, "code": {"type": "string", "pattern": "^a"}},
  "required": ["mood"],
}`,
  );
  const r = await oam(["schema", "convert", schema, "--name", "Mood"]);
  assert.equal(r.code, 0, r.stderr);
  const gen = JSON.parse(r.stdout) as JsonObject;
  assert.equal(gen.title, "Mood");
  assert.deepEqual(gen["x-order"], ["mood", "code"]);
  // Warnings name the file and the place in it (the line and column where that part of the schema starts).
  assert.equal(
    r.stderr,
    `warning: ${schema}: #/properties/code (line 3, column 63): pattern '^a' is described to the model but not enforced\n`,
  );
  const j = await oam(["schema", "convert", "-", "--json"], { stdin: '{"type": "string"}' });
  assert.equal(j.code, 0, j.stderr);
  const body = JSON.parse(j.stdout) as JsonObject;
  assert.deepEqual(Object.keys(body), ["warnings", "generationSchema"]);
  const bad = await oam(["schema", "convert", "-", "--json"], {
    stdin: '{"type": "object", "properties": {"a": {"type": "bogus"}}}',
  });
  assert.equal(bad.code, 2);
  assert.equal(bad.stdout, "");
  assert.deepEqual(JSON.parse(bad.stderr), {
    error: {
      code: "invalid_schema",
      message:
        "<stdin>: #/properties/a (line 1, column 40): unsupported type 'bogus' (a type is one of object, array, string, integer, number, boolean, null)",
    },
  });
  const misspelt = await oam(["schema", "convert", "-"], {
    stdin: '{"type": "object", "properties": {"name": {"type": "strin"}}}',
  });
  assert.deepEqual([misspelt.code, misspelt.stdout, misspelt.stderr], [
    2,
    "",
    "Error: <stdin>: #/properties/name (line 1, column 43): unsupported type 'strin' (did you mean 'string'?) " +
    "[invalid_schema]\n",
  ]);
  // A file is named by its path; a place the schema does not have (a reference's target) is named by its path
  // in the schema only.
  const file = await fx.write("broken.json", {
    type: "object",
    properties: { when: { $ref: "#/$defs/missing" } },
  });
  const named = await oam(["schema", "convert", file]);
  assert.equal(named.code, 2, named.stderr);
  assert.match(named.stderr, new RegExp(`^Error: ${file.replaceAll("/", "\\/")}: #\\S* `));
  assert.ok(!named.stderr.includes("schema: "), named.stderr);
  const notJson = await oam(["schema", "convert", "-"], { stdin: "{nope" });
  assert.equal(notJson.code, 2);
  assert.equal(
    notJson.stderr,
    "Error: <stdin>: not valid JSON: unexpected character at line 1, column 2 (found 'nope'). [invalid_input]\n",
  );
  // A missing file is invalid input, like a malformed one (exit 2).
  const missing = await oam(["schema", "convert", fx.path("missing.json")]);
  assert.equal(missing.code, 2);
  assert.equal(missing.stderr, `Error: No such file: '${fx.path("missing.json")}'. [invalid_input]\n`);
  assert.equal((await oam(["schema", "convert"])).code, 2);
  assert.equal((await oam(["schema", "explode", "x"])).code, 2);
  assert.equal((await oam(["schema"])).code, 2);
});

Deno.test("tools validate: command and client tools, JSON, and what makes a file invalid", async () => {
  const tools = await fx.write("tools.json", {
    tools: [
      { type: "function", function: { name: "get_weather", parameters: { type: "object", properties: {} } } },
      { name: "now", description: "The time", "x-oam": { command: ["echo", "noon"], timeout: 5 } },
    ],
  });
  const r = await oam(["tools", "validate", tools]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(
    r.stdout,
    "✓ get_weather client (answered by you or your engine)\n" +
      "    warning: no description; the model may not know when to call it.\n" +
      "✓ now command echo noon, timeout 5s\n" +
      "2 tools OK.\n",
  );
  const j = await oam(["tools", "validate", tools, "--json"]);
  const body = JSON.parse(j.stdout) as JsonObject;
  const list = body.tools as JsonObject[];
  assert.deepEqual(list.map((t) => [t.name, t.kind]), [["get_weather", "client"], ["now", "command"]]);
  assert.deepEqual(list[1].argv, ["echo", "noon"]);
  assert.deepEqual(body.warnings, ["get_weather: no description; the model may not know when to call it."]);

  const dup = await oam(["tools", "validate", "-"], { stdin: '[{"name": "a"}, {"name": "a"}]' });
  assert.equal(dup.code, 2);
  assert.equal(
    dup.stderr,
    // The file and the definition's place in it (tools_file_errors_test.ts).
    "Error: <stdin>: #/1 (line 1, column 17): 'tools[1].name' must be unique: 'a' is also the name of 'tools[0]'. " +
      "[invalid_params]\n",
  );
  const missing = await oam(["tools", "validate", "-"], {
    stdin: '[{"name": "a", "x-oam": {"command": ["./nope.sh"]}}]',
  });
  assert.equal(missing.code, 2);
  assert.match(missing.stderr, /command '\.\/nope\.sh' was not found \(looked at .*\/nope\.sh\)/);
  if (Deno.build.os !== "windows") {
    // A program file that cannot run is refused as chat, respond, npc and serve refuse it (no executable bit
    // on Windows: not checked there).
    const script = await fx.write("noexec.sh", "#!/bin/sh\necho 4\n");
    await Deno.chmod(script, 0o644);
    const file = await fx.write("noexec_tools.json", [{ name: "a", "x-oam": { command: ["./noexec.sh"] } }]);
    const noExec = await oam(["tools", "validate", file]);
    assert.deepEqual([noExec.code, noExec.stderr], [
      2,
      `Error: ${file}: tools[0] 'a': command './noexec.sh' is not executable (${script}): make it executable ` +
      `(chmod +x ${script}). [invalid_input]\n`,
    ]);
  }
  const badSchema = await oam(["tools", "validate", "-", "--json"], {
    stdin: '[{"name": "a", "parameters": {"type": "object", "properties": {"x": {"type": "bogus"}}}}]',
  });
  assert.equal(badSchema.code, 2);
  assert.equal(JSON.parse(badSchema.stderr).error.code, "invalid_schema");
  const badBlock = await oam(["tools", "validate", "-"], {
    stdin: '[{"name": "a", "x-oam": {"command": []}}]',
  });
  assert.equal(badBlock.code, 2);
  assert.match(badBlock.stderr, /tools\[0\]\.x-oam\.command' must be a non-empty argv array/);
  const notList = await oam(["tools", "validate", "-"], { stdin: '{"name": "a"}' });
  assert.equal(notList.code, 2);
  // A missing file is named as schema convert names it: the file was an argument, no --tools was given.
  const missingFile = await oam(["tools", "validate", fx.path("missing.json")]);
  assert.equal(missingFile.code, 2);
  assert.equal(missingFile.stderr, `Error: No such file: '${fx.path("missing.json")}'. [invalid_input]\n`);
});

Deno.test("main: help lists every command; unknown commands exit 2", async () => {
  const help = await oam(["--help"]);
  assert.equal(help.code, 0);
  for (
    const c of ["demo", "chat", "respond", "npc", "available", "schema convert", "tools validate", "stdio"]
  ) {
    assert.ok(help.stdout.includes(`  ${c}`), c);
  }
  const unknown = await oam(["frobnicate"]);
  assert.deepEqual(
    [unknown.code, unknown.stdout, unknown.stderr],
    [2, "", "Error: Unknown command 'frobnicate'. Run 'deno run -A cli.ts --help'. [usage]\n"],
  );
  const option = await oam(["-x"]);
  assert.deepEqual(
    [option.code, option.stdout, option.stderr],
    [2, "", "Error: Unknown option '-x'. Run 'deno run -A cli.ts --help'. [usage]\n"],
  );
  // `oam version` answers as `oam --version` does, as `oam help` answers as `oam --help`.
  const version = await oam(["version"]);
  const flag = await oam(["--version"]);
  assert.deepEqual([version.code, version.stdout, version.stderr], [0, flag.stdout, ""]);
  assert.match(flag.stdout, /^oam \d+\.\d+\.\d+\n$/);
});

Deno.test("main: a missing command or subcommand is a usage error: the help on stderr, nothing on stdout, exit 2", async () => {
  for (
    const [args, title] of [[[], "oam "], [["models"], "oam models"], [["schema"], "oam schema"], [
      ["tools"],
      "oam tools",
    ]] as const
  ) {
    const r = await oam([...args]);
    assert.deepEqual([r.code, r.stdout], [2, ""], args.join(" "));
    assert.ok(r.stderr.startsWith(title) && r.stderr.includes("Usage: oam"), r.stderr);
    // Asked for, the same help is on stdout with exit 0.
    const help = await oam([...args, "--help"]);
    assert.deepEqual([help.code, help.stdout, help.stderr], [0, r.stderr, ""], args.join(" "));
  }
});

Deno.test({
  name: "main: a help that cannot be written (a full disk) is an error on stderr with exit 1, not a crash",
  ignore: Deno.build.os !== "linux", // /dev/full
  fn: async () => {
    for (const args of [["--help"], ["chat", "--help"], ["--version"]]) {
      const argv = [Deno.execPath(), "run", "--quiet", "-A", CLI, ...args].map((w) => `'${w}'`).join(" ");
      const out = await new Deno.Command("sh", {
        args: ["-c", `exec ${argv} >/dev/full`],
        stdout: "null",
        stderr: "piped",
        env: childEnv({ NO_COLOR: "1" }),
        clearEnv: true,
      }).output();
      const stderr = new TextDecoder().decode(out.stderr);
      assert.deepEqual(
        [out.code, stderr],
        [1, "Error: No space left on device (os error 28) [failure]\n"],
        args[0],
      );
    }
  },
});

Deno.test("main: 'oam help <command>' prints that command's help, as 'oam <command> --help' does", async () => {
  for (const command of ["chat", "npc", "models"]) {
    const help = await oam(["help", command]);
    const asked = await oam([command, "--help"]);
    assert.deepEqual([help.code, help.stdout, help.stderr], [0, asked.stdout, ""], command);
    assert.ok(help.stdout.startsWith(`oam ${command}`), help.stdout);
  }
  const unknown = await oam(["help", "chta"]);
  assert.deepEqual(
    [unknown.code, unknown.stdout, unknown.stderr],
    [2, "", "Error: Unknown command 'chta'; did you mean 'chat'? Run 'deno run -A cli.ts --help'. [usage]\n"],
  );
});
