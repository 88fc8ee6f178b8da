/**
 * Command tools (`x-oam`) of a tools file, a persona file or a saved conversation need run permission: a
 * command that cannot run one is refused before any turn (exit 2), instead of the tool failing inside the
 * answer while the command exits 0.
 */
import assert from "node:assert/strict";
import { refuseCommandsWithoutRun, runCommandTool } from "../../src/cli/command_tools.ts";
import { Fixtures, oam } from "./cli_helper.ts";

const fx = await Fixtures.create();
Deno.test.afterAll(() => fx.remove());

/** Permissions of a user's own `deno run` without `--allow-run`. */
const NO_RUN = ["--allow-read", "--allow-env", "--allow-write"];
const roll = { name: "roll", description: "Roll a die.", "x-oam": { command: ["echo", "4"] } };
const tools = await fx.write("tools.json", [roll]);
const steps = await fx.write("steps.json", [
  { toolCalls: [{ name: "roll", arguments: {} }] },
  { template: "You rolled {toolOutput}." },
]);
const refusal = /Command tool 'roll' runs 'echo', which needs --allow-run \(or --allow-run=echo\)/;

Deno.test("respond: a command tool without --allow-run is refused before the turn, exit 2", async () => {
  const r = await oam(["respond", "--tools", tools, "--script", steps, "roll"], { permissions: NO_RUN });
  assert.equal(r.code, 2, r.stderr);
  assert.equal(r.stdout, "");
  assert.match(r.stderr, refusal);
  assert.match(r.stderr, /\[usage\]\n$/);
});

Deno.test("respond --json: the refusal is the JSON error, exit 2", async () => {
  const r = await oam(["respond", "--json", "--tools", tools, "--script", steps, "roll"], {
    permissions: NO_RUN,
  });
  assert.equal(r.code, 2, r.stderr);
  assert.equal(r.stdout, "");
  assert.equal(JSON.parse(r.stderr).error.code, "usage");
});

Deno.test("chat: piped input with a command tool and no --allow-run is refused, exit 2", async () => {
  const r = await oam(["chat", "--tools", tools, "--script", steps], {
    stdin: "roll\n",
    permissions: NO_RUN,
  });
  assert.equal(r.code, 2, r.stderr);
  assert.equal(r.stdout, "");
  assert.match(r.stderr, refusal);
});

Deno.test("npc: a persona file's command tool without --allow-run is refused, exit 2", async () => {
  const persona = await fx.write("gorm.jsonc", {
    persona: { name: "Gorm", role: "the blacksmith" },
    options: { replyFormat: "text" },
    tools: [roll],
  });
  const npcSteps = await fx.write("npc_steps.json", [{ text: "[happy] Hello." }]);
  const r = await oam(["npc", persona, "--script", npcSteps], { stdin: "hi\n", permissions: NO_RUN });
  assert.equal(r.code, 2, r.stderr);
  assert.equal(r.stdout, "");
  assert.match(r.stderr, refusal);
});

Deno.test("respond: --allow-run=<program> is enough for that program, and names the one it lacks", async () => {
  const ok = await oam(["respond", "--tools", tools, "--script", steps, "roll"], {
    permissions: [...NO_RUN, "--allow-run=echo"],
  });
  assert.equal(ok.code, 0, ok.stderr);
  assert.equal(ok.stdout, "You rolled 4.\n");
  const shell = await fx.write("shell_tools.json", [{ ...roll, "x-oam": { command: "echo 4" } }]);
  const r = await oam(["respond", "--tools", shell, "--script", steps, "roll"], {
    permissions: [...NO_RUN, "--allow-run=echo"],
  });
  assert.equal(r.code, 2, r.stderr);
  assert.match(r.stderr, /Command tool 'roll' runs '\/bin\/sh', which needs --allow-run/);
});

Deno.test("serve: --tools without --allow-run is refused at start, exit 2", async () => {
  const r = await oam(["serve", "--port", "0", "--tools", tools, "--script", steps], {
    permissions: [...NO_RUN, "--allow-net=127.0.0.1"],
  });
  assert.equal(r.code, 2, r.stderr);
  assert.match(r.stderr, refusal);
});

Deno.test("serve: run as 'deno task serve' (no --allow-run), the refusal names the task that grants it", async () => {
  const repo = new URL("../../", import.meta.url).pathname;
  const r = await oam(["serve", "--tools", tools, "--script", steps], {
    // `deno task serve`'s grants, in the repository's folder.
    permissions: [
      "--no-prompt",
      "--allow-net=127.0.0.1:1976",
      "--allow-env=OAM_FM_LIBRARY,OAM_SCRIPT,OAM_API_KEY",
      "--allow-read",
      "--allow-ffi",
    ],
    cwd: repo,
  });
  assert.equal(r.code, 2, r.stderr);
  assert.equal(
    r.stderr,
    "Error: Command tool 'roll' runs 'echo', which needs --allow-run (or --allow-run=echo): add it to the deno " +
      "command that starts oam. In this repository 'deno task oam:local serve …' grants it ('deno task serve' " +
      "does not). [usage]\n",
  );
});

Deno.test("a compiled oam is not told to change a deno command it does not have", () => {
  const commands = new Map([["roll", {
    argv: ["echo", "4"],
    shell: null,
    timeoutSeconds: 30,
    cwd: null,
    env: {},
    maxOutputChars: 8000,
    baseDir: "/",
  }]]);
  const refused = (compiled: boolean) => () =>
    refuseCommandsWithoutRun(commands, { mayRun: () => false, compiled });
  assert.throws(refused(false), {
    message:
      "Command tool 'roll' runs 'echo', which needs --allow-run (or --allow-run=echo): add it to the " +
      "deno command that starts oam.",
  });
  assert.throws(refused(true), {
    message:
      "Command tool 'roll' runs 'echo', which needs --allow-run: this executable was compiled without " +
      "it; compile it with --allow-run (deno task compile:cli does).",
  });
  refuseCommandsWithoutRun(commands, { mayRun: (program) => program === "echo", compiled: true });
});

Deno.test("respond and chat: a command tool whose program does not exist is refused before the turn, exit 2", async () => {
  // It ran the turn: the model got "Cannot run './roll.sh': no such program." and the command exited 0.
  const missing = await fx.write("missing_tools.json", [{ ...roll, "x-oam": { command: ["./roll.sh"] } }]);
  const r = await oam(["respond", "--tools", missing, "--script", steps, "roll"]);
  assert.deepEqual([r.code, r.stdout, r.stderr], [
    2,
    "",
    `Error: Command tool 'roll' runs './roll.sh', which was not found (looked at ${fx.dir}/roll.sh). [invalid_input]\n`,
  ]);
  const onPath = await fx.write("path_tools.json", [{ ...roll, "x-oam": { command: ["oam-no-such-dice"] } }]);
  const chat = await oam(["chat", "--tools", onPath, "--script", steps], { stdin: "roll\n" });
  assert.deepEqual([chat.code, chat.stdout, chat.stderr], [
    2,
    "",
    "Error: Command tool 'roll' runs 'oam-no-such-dice', which was not found on PATH. [invalid_input]\n",
  ]);
  // A shell command is the shell's to find: it runs, and its failure is the tool's error output.
  const shell = await fx.write("shell_missing.json", [{ ...roll, "x-oam": { command: "oam-no-such-dice" } }]);
  const ran = await oam(["respond", "--tools", shell, "--script", steps, "roll"]);
  assert.equal(ran.code, 0, ran.stderr);
  assert.match(ran.stdout, /^You rolled Error: Command exited with status 127/);
});

Deno.test({
  name: "respond and chat: a command tool whose program is not executable is refused before the turn, exit 2",
  // Windows has no executable bit: there a program is what its name says (PATHEXT), and it is not checked.
  ignore: Deno.build.os === "windows",
  fn: async () => {
    // It ran the turn: the model got "Running command tools needs --allow-run" (under -A) or "no such
    // program" (on PATH), and the command exited 0.
    await Deno.mkdir(fx.path("noexec"), { recursive: true });
    const script = await fx.write("noexec/roll.sh", "#!/bin/sh\necho 4\n");
    await Deno.chmod(script, 0o644);
    const local = await fx.write("noexec_tools.json", [{
      ...roll,
      "x-oam": { command: ["./noexec/roll.sh"] },
    }]);
    const r = await oam(["respond", "--tools", local, "--script", steps, "roll"]);
    assert.deepEqual([r.code, r.stdout, r.stderr], [
      2,
      "",
      `Error: Command tool 'roll' runs './noexec/roll.sh', which is not executable (${script}): ` +
      `make it executable (chmod +x ${script}). [invalid_input]\n`,
    ]);
    // On PATH: found only as a file that cannot run.
    const onPath = await fx.write("noexec_path.json", [{ ...roll, "x-oam": { command: ["roll.sh"] } }]);
    const env = { PATH: `${fx.dir}/noexec:${Deno.env.get("PATH")}` };
    const chat = await oam(["chat", "--tools", onPath, "--script", steps], { stdin: "roll\n", env });
    assert.deepEqual([chat.code, chat.stdout, chat.stderr], [
      2,
      "",
      `Error: Command tool 'roll' runs 'roll.sh', which is not executable (${script}): ` +
      `make it executable (chmod +x ${script}). [invalid_input]\n`,
    ]);
    // Made executable, it runs.
    await Deno.chmod(script, 0o755);
    const ran = await oam(["respond", "--tools", local, "--script", steps, "roll"]);
    assert.deepEqual([ran.code, ran.stdout], [0, "You rolled 4.\n"]);
  },
});

Deno.test({
  name: "a program made not executable after the start is the tool's error output, not a missing --allow-run",
  ignore: Deno.build.os === "windows",
  fn: async () => {
    await Deno.mkdir(fx.path("later"), { recursive: true });
    const script = await fx.write("later/roll.sh", "#!/bin/sh\necho 4\n");
    await Deno.chmod(script, 0o644);
    const spec = {
      argv: [script],
      shell: null,
      timeoutSeconds: 5,
      cwd: null,
      env: {},
      maxOutputChars: 100,
      baseDir: fx.dir,
    };
    const answer = await runCommandTool(spec, { name: "roll", call: { id: "c1", arguments: {} } });
    assert.deepEqual(answer, {
      output: `Cannot run '${script}': permission denied (is it executable?).`,
      isError: true,
    });
  },
});
