/**
 * Every command's `--help` lists its options with their descriptions in one column: the model flags that
 * several commands share were written for one column and showed out of line in the others.
 */
import assert from "node:assert/strict";
import { AVAILABLE_HELP } from "../../src/cli/available.ts";
import { CHAT_HELP } from "../../src/cli/chat.ts";
import { DEMO_HELP } from "../../src/cli/demo.ts";
import { MODELS_HELP } from "../../src/cli/models.ts";
import { NPC_HELP } from "../../src/cli/npc.ts";
import { PLAYGROUND_HELP } from "../../src/cli/playground.ts";
import { RESPOND_HELP } from "../../src/cli/respond.ts";
import { SCHEMA_HELP } from "../../src/cli/schema_convert.ts";
import { SERVE_HELP } from "../../src/cli/serve.ts";
import { STDIO_HELP } from "../../src/cli/stdio.ts";
import { TOOLS_HELP } from "../../src/cli/tools_validate.ts";
import { MAIN_HELP } from "../../src/cli/main.ts";

const HELPS = {
  available: AVAILABLE_HELP,
  chat: CHAT_HELP,
  demo: DEMO_HELP,
  models: MODELS_HELP,
  npc: NPC_HELP,
  playground: PLAYGROUND_HELP,
  respond: RESPOND_HELP,
  "schema convert": SCHEMA_HELP,
  serve: SERVE_HELP,
  stdio: STDIO_HELP,
  "tools validate": TOOLS_HELP,
};

Deno.test("every command's --help has its option descriptions in one column", () => {
  for (const [command, help] of Object.entries(HELPS)) {
    const columns = new Map<number, string[]>();
    for (const line of help.split("\n")) {
      // "  --flag <value>   description": the column is where the description starts
      const option = line.match(/^( {2}-\S.*?\S)( {2,})\S/);
      if (!option) continue;
      const column = option[1].length + option[2].length;
      columns.set(column, [...(columns.get(column) ?? []), option[1].trim()]);
    }
    assert.ok(columns.size > 0, `oam ${command} --help lists no option`);
    assert.equal(
      columns.size,
      1,
      `oam ${command} --help: descriptions start in columns ${
        [...columns].map(([column, flags]) => `${column} (${flags.join(", ")})`).join(" and ")
      }`,
    );
  }
});

Deno.test("no --help line is wider than 110 characters (a terminal wraps it mid-word)", () => {
  const wide: string[] = [];
  for (const [command, help] of Object.entries({ ...HELPS, "": MAIN_HELP })) {
    for (const line of help.split("\n")) {
      if ([...line].length > 110) wide.push(`oam ${command} --help (${[...line].length}): ${line}`);
    }
  }
  assert.deepEqual(wide, []);
});

Deno.test("every command's --help says its exit codes (a script that runs it reads them there)", () => {
  // models, serve, playground, demo and stdio had none: a CI job could not tell a failed pull (1) from a
  // mistyped URL (2) or a port in use (1) from a bad flag (2) without reading the source.
  const without = Object.entries(HELPS).filter(([, help]) => !/^Exit codes:/m.test(help)).map(([c]) => c);
  assert.deepEqual(without, []);
});
