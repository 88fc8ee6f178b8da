/**
 * A usage error's "Run '… --help'" names a command the user can type where they are: in the repository's
 * folder (`deno task stdio`, `deno task oam …`, `deno run -A cli.ts …`) the command that runs this cli.ts
 * there, since no `oam` is installed; elsewhere (a `jsr:` run or an installed `oam`, which a process cannot
 * tell apart) the `oam` of the help pages.
 */
import assert from "node:assert/strict";
import { oam, OAM_TASK_PERMISSIONS } from "./cli_helper.ts";

const REPOSITORY = new URL("../..", import.meta.url).pathname;

/** The permissions of `deno task stdio` (read from deno.json), as the task grants them. */
const STDIO_TASK_PERMISSIONS: string[] = JSON.parse(
  Deno.readTextFileSync(new URL("../../deno.json", import.meta.url)),
).tasks.stdio.split(" ").filter((flag: string) => flag.startsWith("--allow-"));

Deno.test("deno task stdio with a bad flag, in the repository: the hint is a command that runs there", async () => {
  const r = await oam(["stdio", "--bogus"], { cwd: REPOSITORY, permissions: STDIO_TASK_PERMISSIONS });
  assert.equal(r.code, 2);
  assert.equal(r.stderr, "Error: Unknown option '--bogus'. Run 'deno task oam stdio --help'. [usage]\n");
});

Deno.test("deno task oam with a bad flag or command, in the repository: the hint names deno task oam", async () => {
  const options = { cwd: REPOSITORY, permissions: OAM_TASK_PERMISSIONS };
  const flag = await oam(["respond", "--jsno", "hi"], options);
  assert.equal(
    flag.stderr,
    "Error: Unknown option '--jsno'; did you mean '--json'? Run 'deno task oam respond --help'. [usage]\n",
  );
  const command = await oam(["chta"], options);
  assert.equal(
    command.stderr,
    "Error: Unknown command 'chta'; did you mean 'chat'? Run 'deno task oam --help'. [usage]\n",
  );
});

Deno.test("deno run -A cli.ts in the repository: the hint is that command", async () => {
  const r = await oam(["stdio", "--bogus"], { cwd: REPOSITORY });
  assert.equal(r.stderr, "Error: Unknown option '--bogus'. Run 'deno run -A cli.ts stdio --help'. [usage]\n");
});

Deno.test("cli.ts run from another folder: the hint stays 'oam' (an installed oam looks the same)", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const r = await oam(["stdio", "--bogus"], { cwd: dir });
    assert.equal(r.stderr, "Error: Unknown option '--bogus'. Run 'oam stdio --help'. [usage]\n");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("an unknown subcommand of schema or tools, in the repository: the suggestion runs there", async () => {
  const options = { cwd: REPOSITORY, permissions: OAM_TASK_PERMISSIONS };
  const schema = await oam(["schema", "convrt"], options);
  assert.match(
    schema.stderr,
    /^Error: Unknown subcommand 'schema convrt'; try 'deno task oam schema convert'\./,
  );
  const tools = await oam(["tools", "check"], options);
  assert.match(
    tools.stderr,
    /^Error: Unknown subcommand 'tools check'; try 'deno task oam tools validate'\./,
  );
});
