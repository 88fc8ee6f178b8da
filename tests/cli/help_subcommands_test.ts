/**
 * Help of the commands that have subcommands (`models pull|list`, `schema convert`, `tools validate`): asked
 * after the subcommand (`oam models list --help`), as `oam <command> help`, or as `oam help <command> <sub>`,
 * it is printed on stdout with exit 0; a subcommand that does not exist is a usage error, asked with --help or
 * not. `oam models help` used to be an unknown command, and `oam models rm --help` printed the help as if
 * `rm` existed.
 */
import assert from "node:assert/strict";
import { MODELS_HELP } from "../../src/cli/models.ts";
import { SCHEMA_HELP } from "../../src/cli/schema_convert.ts";
import { TOOLS_HELP } from "../../src/cli/tools_validate.ts";
import { COMMANDS } from "../../src/cli/main.ts";
import { oam } from "./cli_helper.ts";

const GROUPS: [string, string[], string][] = [
  ["models", ["pull", "list"], MODELS_HELP],
  ["schema", ["convert"], SCHEMA_HELP],
  ["tools", ["validate"], TOOLS_HELP],
];

Deno.test("a subcommand's --help, '<command> help' and 'help <command> <sub>' print the help, exit 0", async () => {
  for (const [group, subs, help] of GROUPS) {
    const asked = [
      ...subs.flatMap((sub) => [[group, sub, "--help"], ["help", group, sub]]),
      [group, subs[0], "-h"],
      [group, "help"],
    ];
    for (const args of asked) {
      const r = await oam(args);
      assert.deepEqual([r.code, r.stdout, r.stderr], [0, help, ""], `oam ${args.join(" ")}`);
    }
  }
});

Deno.test("a subcommand that does not exist is a usage error, with --help too", async () => {
  for (const [group, subs] of GROUPS) {
    for (const args of [[group, "rm"], [group, "rm", "--help"]]) {
      const r = await oam(args);
      assert.equal(r.code, 2, `oam ${args.join(" ")}: ${r.stdout}${r.stderr}`);
      assert.equal(r.stdout, "", `oam ${args.join(" ")}`);
      assert.match(r.stderr, /^Error: Unknown .*\brm'.* \[usage\]\n$/, `oam ${args.join(" ")}`);
      assert.ok(subs.every((sub) => r.stderr.includes(sub)), r.stderr);
    }
  }
});

Deno.test("every command's --help prints its help on stdout and exits 0", async () => {
  for (const command of Object.keys(COMMANDS)) {
    const r = await oam([command, "--help"]);
    assert.equal(r.code, 0, `oam ${command} --help: ${r.stderr}`);
    assert.match(r.stdout, new RegExp(`^oam ${command}\\b`), `oam ${command} --help`);
    assert.equal(r.stderr, "", `oam ${command} --help`);
  }
});
