/**
 * A help text is read by people with an installed `oam` too, in a folder of their own: a file of this
 * repository (`personas/shopkeeper.steps.json`) in an example is there only in a checkout, so the line that
 * names it says so ("in a checkout"). Every command's `--help` is read as the user reads it, from the CLI.
 */
import assert from "node:assert/strict";
import { COMMANDS } from "../../src/cli/main.ts";
import { Fixtures, oam } from "./cli_helper.ts";

const ROOT = new URL("../../", import.meta.url).pathname;

/** The help texts: every command's, and the subcommands' of the commands that have them. */
const HELP_ARGS = [
  ...Object.keys(COMMANDS).filter((c) => !["schema", "tools", "models"].includes(c)).map((c) => [c]),
  ["schema", "convert"],
  ["tools", "validate"],
  ["models", "pull"],
  ["models", "list"],
];

/** Relative paths with a folder in `line` (`personas/x.json`), not URLs, `hf:` names or routes (`/rpc`). */
function relativePaths(line: string): string[] {
  return [...line.matchAll(/(?<![\w:/.@-])(?:\.\/)?[\w-]+(?:\/[\w.-]+)+/g)].map((m) => m[0]);
}

async function existsInCheckout(path: string): Promise<boolean> {
  try {
    await Deno.stat(`${ROOT}${path}`);
    return true;
  } catch {
    return false;
  }
}

Deno.test("no --help names a file of the checkout without saying it is one", async () => {
  const fx = await Fixtures.create();
  try {
    const problems: string[] = [];
    for (const args of HELP_ARGS) {
      const r = await oam([...args, "--help"], { cwd: fx.dir });
      assert.equal(r.code, 0, `oam ${args.join(" ")} --help\n${r.stderr}`);
      for (const line of r.stdout.split("\n")) {
        for (const path of relativePaths(line)) {
          if (!await existsInCheckout(path) || /in a checkout/i.test(line)) continue;
          problems.push(`oam ${args.join(" ")} --help: '${path}' (only in a checkout): ${line.trim()}`);
        }
      }
    }
    assert.deepEqual(problems, []);
  } finally {
    await fx.remove();
  }
});
