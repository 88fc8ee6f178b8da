/**
 * The command a paused `oam respond` prints to continue: `deno task oam` only where that task runs this very
 * cli.ts; elsewhere `deno run` with this process's permissions and module, so the hint works where it is
 * printed (a user's own folder, a `jsr:` run). The last test runs a printed hint from a fresh folder.
 */
import assert from "node:assert/strict";
import { dirname } from "node:path";
import { pathToFileURL } from "node:url";
import { oamCommand, oamCommandLineFor, type ProcessFacts, shellWord } from "../../src/cli/invocation.ts";
import { netAccessAdvice, stdioNetAccessAdvice } from "../../src/cli/local_bridge.ts";
import { CLI, Fixtures, oam } from "./cli_helper.ts";

/** Facts of a process run by `deno` with `grants` (name or name:scope), in `cwd`, with `tasks` there. */
function facts(
  init: { main: string; cwd: string; grants: string[]; tasks?: string[]; exec?: string },
): ProcessFacts {
  return {
    execPath: init.exec ?? "/usr/local/bin/deno",
    mainModule: init.main,
    cwd: init.cwd,
    granted: (name, scope) => init.grants.includes(scope === undefined ? name : `${name}:${scope}`),
    tasks: () => init.tasks ?? [],
  };
}
const ALL = ["read", "write", "net", "env", "sys", "ffi", "run"];
const TASK_GRANTS = ["read", "write", "env", "sys", "ffi", "run"];

Deno.test("a compiled oam prints its own name", () => {
  const f = facts({ main: "file:///x/cli.ts", cwd: "/x", grants: ALL, exec: "/opt/game/oam.exe" });
  assert.equal(oamCommand(f), "oam");
  assert.equal(oamCommand({ ...f, execPath: "/opt/game/bridge" }), "bridge");
});

Deno.test("the repository's cli.ts run from its folder: deno task oam, or oam:local with this machine's hosts", () => {
  const repo = { main: "file:///src/oam/cli.ts", cwd: "/src/oam", tasks: ["oam", "oam:local"] };
  assert.equal(oamCommand(facts({ ...repo, grants: TASK_GRANTS })), "deno task oam");
  assert.equal(
    oamCommand(facts({ ...repo, grants: [...TASK_GRANTS, "net:127.0.0.1", "net:localhost"] })),
    "deno task oam:local",
  );
});

Deno.test("no task that would work: deno run with the permissions and module of this process", () => {
  // Another folder than the one holding cli.ts.
  assert.equal(
    oamCommand(facts({ main: "file:///src/oam/cli.ts", cwd: "/home/me/game", grants: ["read", "env"] })),
    "deno run --allow-read --allow-env /src/oam/cli.ts",
  );
  // cli.ts below the working directory: a relative path.
  assert.equal(
    oamCommand(facts({ main: "file:///home/me/game/vendor/oam/cli.ts", cwd: "/home/me/game", grants: ALL })),
    "deno run -A vendor/oam/cli.ts",
  );
  // The repository's folder, but without the task (or with a network grant the task does not give).
  const repo = { main: "file:///src/oam/cli.ts", cwd: "/src/oam" };
  assert.equal(oamCommand(facts({ ...repo, grants: ["read"] })), "deno run --allow-read cli.ts");
  assert.equal(
    oamCommand(facts({ ...repo, tasks: ["oam"], grants: [...TASK_GRANTS, "net"] })),
    "deno run -A cli.ts",
  );
  // Scoped grants it can name: this machine's hosts, oam's environment variables; a path with a space.
  assert.equal(
    oamCommand(facts({
      main: "file:///my%20games/oam/cli.ts",
      cwd: "/home/me",
      grants: ["read", "net:127.0.0.1", "net:localhost", "env:OAM_MODEL", "env:OAM_SCRIPT"],
    })),
    "deno run --allow-read --allow-net=127.0.0.1,localhost --allow-env=OAM_MODEL,OAM_SCRIPT '/my games/oam/cli.ts'",
  );
});

Deno.test("run from JSR: the package's cli export at the version that runs", () => {
  const grants = ["read", "env", "ffi"];
  assert.equal(
    oamCommand(facts({ main: "https://jsr.io/@open-apple-models/bridge/0.1.0/cli.ts", cwd: "/g", grants })),
    "deno run --allow-read --allow-env --allow-ffi jsr:@open-apple-models/bridge@0.1.0/cli",
  );
  assert.equal(
    oamCommand(facts({ main: "jsr:@open-apple-models/bridge/cli", cwd: "/g", grants })),
    "deno run --allow-read --allow-env --allow-ffi jsr:@open-apple-models/bridge/cli",
  );
});

Deno.test("a command for a GGUF model: deno run gets --no-lock, as the tasks that run cli.ts pass it", () => {
  // Without it, the pasted command would pin node-llama-cpp in the lock file of the checkout (or of the
  // user's project) when it loads the model.
  const how = { noLock: true };
  assert.equal(
    oamCommand(facts({ main: "file:///src/oam/cli.ts", cwd: "/home/me/game", grants: ["read", "env"] }), how),
    "deno run --no-lock --allow-read --allow-env /src/oam/cli.ts",
  );
  // The repository's own cli.ts run with -A from its folder: no task fits, so deno run, with --no-lock.
  assert.equal(
    oamCommand(facts({ main: "file:///src/oam/cli.ts", cwd: "/src/oam", grants: ALL, tasks: ["oam"] }), how),
    "deno run --no-lock -A cli.ts",
  );
  // The oam task passes --no-lock itself; a compiled oam has no lock file.
  const repo = { main: "file:///src/oam/cli.ts", cwd: "/src/oam", tasks: ["oam", "oam:local"] };
  assert.equal(oamCommand(facts({ ...repo, grants: TASK_GRANTS }), how), "deno task oam");
  const compiled = facts({ main: "file:///x/cli.ts", cwd: "/x", grants: ALL, exec: "/opt/game/oam" });
  assert.equal(oamCommand(compiled, how), "oam");
  // Other models: the command as before.
  assert.equal(
    oamCommand(facts({ main: "file:///src/oam/cli.ts", cwd: "/home/me/game", grants: ["read"] })),
    "deno run --allow-read /src/oam/cli.ts",
  );
});

Deno.test("respond paused in a user's own folder: the printed command, run there as printed, finishes the turn", async () => {
  const fx = await Fixtures.create();
  try {
    const tools = await fx.write("tools.json", [{
      name: "get_weather",
      description: "Weather for a city.",
      parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
    }]);
    const script = await fx.write("weather.json", [
      { toolCalls: [{ name: "get_weather", arguments: { city: "Oslo" } }] },
      { template: "Weather: {toolOutput}" },
    ]);
    const permissions = ["--allow-read", "--allow-write", "--allow-env"];
    const first = await oam(["respond", "--script", script, "--tools", tools, "Weather?"], {
      cwd: fx.dir,
      permissions,
    });
    assert.equal(first.code, 10, first.stderr);
    const id = JSON.parse(first.stdout).calls[0].id as string;
    const command = first.stderr.split("\n")[1].trim();
    assert.match(
      command,
      /^deno run --allow-read --allow-write --allow-env \/\S+\/cli\.ts respond --resume /,
    );
    const words = command.replace(`${id}=<output>`, `${id}=sunny`).split(" ");
    const resumed = await new Deno.Command(Deno.execPath(), {
      args: words.slice(1),
      cwd: fx.dir,
      stdin: "null",
      env: { NO_COLOR: "1" },
    }).output();
    const stderr = new TextDecoder().decode(resumed.stderr);
    assert.equal(resumed.code, 0, stderr);
    assert.equal(new TextDecoder().decode(resumed.stdout), "Weather: sunny\n");
  } finally {
    await fx.remove();
  }
});

Deno.test("a hint to run `models pull` grants the network and writing, which it needs, where this process lacks them", () => {
  const grants = ["read", "env", "ffi"];
  // A bridge an engine started with only what it needs: the printed download command still works.
  assert.equal(
    oamCommandLineFor(
      "models pull <url>",
      facts({ main: "file:///src/oam/cli.ts", cwd: "/home/me/game", grants }),
    ),
    "deno run --allow-read --allow-write --allow-net --allow-env --allow-ffi /src/oam/cli.ts models pull <url>",
  );
  // Other commands keep this process's permissions.
  assert.equal(
    oamCommandLineFor("models list", facts({ main: "file:///src/oam/cli.ts", cwd: "/home/me/game", grants })),
    "deno run --allow-read --allow-env --allow-ffi /src/oam/cli.ts models list",
  );
  // The repository's folder: its `models` task grants them (the oam task does not grant the network).
  const repo = { main: "file:///src/oam/cli.ts", cwd: "/src/oam", tasks: ["oam", "oam:local", "models"] };
  assert.equal(
    oamCommandLineFor("models pull --force <url>", facts({ ...repo, grants: TASK_GRANTS })),
    "deno task models pull --force <url>",
  );
  assert.equal(
    oamCommandLineFor("models list", facts({ ...repo, grants: TASK_GRANTS })),
    "deno task oam models list",
  );
  // Granted already (or a compiled oam, which has every permission): the command as it is.
  assert.equal(
    oamCommandLineFor("models pull <url>", facts({ ...repo, grants: ALL })),
    "deno run -A cli.ts models pull <url>",
  );
  assert.equal(
    oamCommandLineFor("models pull <url>", facts({ ...repo, grants: [], exec: "/opt/game/oam" })),
    "oam models pull <url>",
  );
});

Deno.test("a bridge started with few permissions names a download command that has the ones it needs", async () => {
  const fx = await Fixtures.create();
  try {
    // A sign-in page a download saved in place of the model.
    await fx.write("npc.gguf", "<html><body>Sign in</body></html>");
    const run = await oam(["respond", "--model", "gguf:./npc.gguf", "Hello?"], {
      cwd: fx.dir,
      permissions: ["--allow-read", "--allow-env", "--allow-ffi"],
    });
    assert.equal(run.code, 3, run.stderr);
    assert.match(
      run.stderr,
      /\('deno run --allow-read --allow-write --allow-net --allow-env --allow-ffi \/\S+\/cli\.ts models pull <url>' checks what it saves\)/,
    );
  } finally {
    await fx.remove();
  }
});

Deno.test("no network access to a model server: the advice works where it is printed", async () => {
  const detail = 'Cannot reach the model server: Requires net access to "127.0.0.1:8089", run again with ' +
    "the --allow-net flag.";
  // This checkout's cli.ts, run from the checkout's folder: its tasks (unchanged).
  const main = pathToFileURL(CLI).href;
  const repo = facts({ main, cwd: dirname(CLI), grants: TASK_GRANTS, tasks: ["oam"] });
  assert.equal(
    netAccessAdvice(detail, repo),
    "This oam has no network access to 127.0.0.1:8089. For a model server on this machine use " +
      "'deno task oam:local <command> …'; for another host run 'deno run --allow-read --allow-env --allow-ffi " +
      "--allow-run --allow-write --allow-net=127.0.0.1:8089 cli.ts <command> …' (a compiled oam needs to be " +
      "compiled with that --allow-net).",
  );
  const fx = await Fixtures.create();
  try {
    // A folder of the user's own: no task there, and no cli.ts beside it. It said to use both.
    const own = facts({ main, cwd: fx.dir, grants: ["read", "env", "write"] });
    const advised = "deno run --allow-read --allow-write --allow-env --allow-net=127.0.0.1:8089 " +
      `${shellWord(CLI)} <command> …`;
    assert.equal(
      netAccessAdvice(detail, own),
      `This oam has no network access to 127.0.0.1:8089; run it again with that access: '${advised}'.`,
    );
    // Run there as printed (a command that needs no server for <command>), it finds cli.ts and runs.
    const words = advised.replace("<command> …", "--version").split(" ");
    const run = await new Deno.Command(Deno.execPath(), {
      args: ["run", "--quiet", ...words.slice(2)],
      cwd: fx.dir,
      stdin: "null",
      env: { NO_COLOR: "1" },
    }).output();
    assert.equal(run.code, 0, new TextDecoder().decode(run.stderr));
    assert.match(new TextDecoder().decode(run.stdout), /^oam \d/);
    // A compiled oam: its permissions were fixed when it was compiled.
    const compiled = facts({ main, cwd: fx.dir, grants: ["read"], exec: `${fx.dir}/oam` });
    assert.equal(
      netAccessAdvice(detail, compiled),
      "This oam has no network access to 127.0.0.1:8089; it needs to be compiled with --allow-net=127.0.0.1:8089.",
    );
  } finally {
    await fx.remove();
  }
});

Deno.test("oam stdio without network access: the advice names 'deno task stdio:local' in the repository, else the grant", () => {
  const main = pathToFileURL(CLI).href;
  const stdioTask = ["read", "ffi", "env:OAM_MODEL", "env:OAM_SCRIPT", "env:OAM_FM_LIBRARY"];
  const repo = facts({ main, cwd: dirname(CLI), grants: stdioTask, tasks: ["stdio", "stdio:local", "oam"] });
  assert.equal(
    stdioNetAccessAdvice("127.0.0.1:8089", repo),
    "This bridge has no network access to 127.0.0.1:8089: for a model server on this machine run it with " +
      "'deno task stdio:local'.",
  );
  assert.equal(
    stdioNetAccessAdvice("api.example.com:443", repo),
    "This bridge has no network access to api.example.com:443: run it with that grant, 'deno run --no-lock " +
      "--no-prompt --allow-read --allow-env=OAM_MODEL,OAM_SCRIPT,OAM_FM_LIBRARY --allow-ffi --allow-net=api.example.com:443 " +
      "cli.ts stdio' ('deno task stdio:local' grants this machine's hosts only).",
  );
  const own = facts({ main, cwd: "/home/me/game", grants: ["read", "ffi"] });
  assert.equal(
    stdioNetAccessAdvice("127.0.0.1:8089", own),
    "This bridge has no network access to 127.0.0.1:8089: run it with that grant, 'deno run --no-prompt --allow-read " +
      `--allow-ffi --allow-net=127.0.0.1:8089 ${shellWord(CLI)} stdio'.`,
  );
  const compiled = facts({ main, cwd: "/x", grants: ["read"], exec: "/opt/game/oam" });
  assert.equal(
    stdioNetAccessAdvice("127.0.0.1:8089", compiled),
    "This bridge has no network access to 127.0.0.1:8089; it needs to be compiled with --allow-net=127.0.0.1:8089.",
  );
});

Deno.test("deno task stdio with an openai model and no network: the warning and the turn's error say to use stdio:local", async () => {
  // A port nothing listens on: without the grant, Deno refuses before connecting.
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  const base = `http://127.0.0.1:${port}/v1`;
  const lines = [
    { jsonrpc: "2.0", id: 1, method: "session/create", params: {} },
    {
      jsonrpc: "2.0",
      id: 2,
      method: "session/create",
      params: { model: { type: "openai", baseURL: base, model: "m" } },
    },
    { jsonrpc: "2.0", id: 3, method: "session/respond", params: { session: "s2", prompt: "Hi" } },
  ].map((m) => JSON.stringify(m)).join("\n") + "\n";
  const child = new Deno.Command(Deno.execPath(), {
    args: ["task", "--quiet", "stdio"],
    cwd: dirname(CLI),
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1", OAM_MODEL: `openai:${base}#m` },
  }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(lines));
  await writer.close();
  const out = await child.output();
  const responses = new TextDecoder().decode(out.stdout).trim().split("\n").map((l) => JSON.parse(l));
  const advice =
    `This bridge has no network access to 127.0.0.1:${port}: for a model server on this machine ` +
    "run it with 'deno task stdio:local'.";
  const warning = responses.find((r) => r.id === 1).result.warnings[0] as string;
  assert.ok(warning.endsWith(`/v1/models: ${advice}`), warning);
  assert.doesNotMatch(warning, /run again with the --allow-net flag/);
  const error = responses.find((r) => r.id === 3).error;
  assert.equal(error.message, `Cannot reach the model server at ${base}/chat/completions: ${advice}`);
  assert.equal(error.data.code, "model_unavailable");
});

/** The facts of `deno task <task>` run from the repository's folder, from its flags in deno.json. */
function taskFacts(task: string, init: { cwd?: string; tasks?: string[] } = {}): ProcessFacts {
  const flags = taskFlags(task);
  const grants: string[] = [];
  for (const flag of flags) {
    const match = /^--allow-(\w+)(?:=(.*))?$/.exec(flag);
    if (match === null) continue;
    if (match[2] === undefined) grants.push(match[1]);
    else for (const scope of match[2].split(",")) grants.push(`${match[1]}:${scope}`);
  }
  return facts({
    main: pathToFileURL(CLI).href,
    cwd: init.cwd ?? dirname(CLI),
    grants,
    tasks: init.tasks ?? Object.keys(TASKS),
  });
}

const TASKS: Record<string, string> = JSON.parse(
  Deno.readTextFileSync(new URL("../../deno.json", import.meta.url)),
).tasks;

/** The flags `deno run` is given in a task's command (before its module). */
function taskFlags(task: string): string[] {
  const words = TASKS[task].split(" ");
  return words.slice(words.indexOf("run") + 1, words.indexOf("cli.ts"));
}

Deno.test("the serve task's flags outside the repository: the printed 'models pull' grants the environment it reads its cache folder from", async () => {
  const fx = await Fixtures.create();
  try {
    // `deno task serve`'s permissions (a narrow --allow-env) for a server a user runs from a folder of theirs.
    const printed = oamCommandLineFor("models pull <url>", taskFacts("serve", { cwd: fx.dir, tasks: [] }));
    assert.equal(
      printed,
      `deno run --allow-read --allow-write --allow-net --allow-env --allow-ffi ${
        shellWord(CLI)
      } models pull <url>`,
    );
    // Run there as printed (a URL nothing answers): it gets as far as downloading, with a cache folder known.
    const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    const port = (listener.addr as Deno.NetAddr).port;
    listener.close();
    const words = printed.replace("<url>", `http://127.0.0.1:${port}/tiny.gguf`).split(" ");
    const run = await new Deno.Command(Deno.execPath(), {
      args: ["run", "--quiet", "--no-lock", ...words.slice(2)],
      cwd: fx.dir,
      stdin: "null",
      env: { NO_COLOR: "1", OAM_MODELS_DIR: fx.path("models") },
    }).output();
    const stderr = new TextDecoder().decode(run.stderr);
    assert.doesNotMatch(stderr, /No cache folder is known/);
    assert.match(
      stderr,
      new RegExp(`Downloading http://127\\.0\\.0\\.1:${port}/tiny\\.gguf → ${fx.path("models")}`),
    );
  } finally {
    await fx.remove();
  }
});

Deno.test("deno task stdio and a model server on another host: the printed command grants what the stdio tasks grant, and that host", () => {
  const advice = stdioNetAccessAdvice("api.example.com:443", taskFacts("stdio"));
  const command = /'(deno run [^']*)'/.exec(advice)?.[1] ?? "";
  const words = command.split(" ");
  assert.deepEqual(words.slice(-2), ["cli.ts", "stdio"], advice);
  const printed = words.slice(2, -2);
  // Each flag of the stdio:local task, its network grant aside, is in the printed command (the variables in
  // any order), and the network grant is the host's.
  const sorted = (flag: string) => flag.replace(/=(.*)$/, (_, list: string) => `=${list.split(",").sort()}`);
  for (const flag of taskFlags("stdio:local").filter((f) => !f.startsWith("--allow-net"))) {
    assert.ok(printed.map(sorted).includes(sorted(flag)), `${flag} is missing from: ${command}`);
  }
  assert.ok(printed.includes("--allow-net=api.example.com:443"), command);
  // Outside the repository, a stdio bridge is not to prompt either (its stdin is the protocol).
  const own = stdioNetAccessAdvice(
    "api.example.com:443",
    taskFacts("stdio", { cwd: "/home/me/game", tasks: [] }),
  );
  assert.match(own, /'deno run --no-prompt --allow-read --allow-env=\S*OAM_EXIT_WITH_PARENT\S* /, own);
});
