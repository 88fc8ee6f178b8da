/**
 * `--model gguf:…` and `OAM_MODEL` in the CLI, decided before node-llama-cpp would load (a missing file, a
 * bad value, precedence). Runs with the real model are in the GGUF tier (`tests/llama/gguf/`).
 */
import assert from "node:assert/strict";
import { CLI, oam, OAM_TASK_PERMISSIONS } from "./cli_helper.ts";
import { STDIO_HELP } from "../../src/cli/stdio.ts";
import { LLAMA_PERMISSIONS } from "../../src/models/llama_runtime.ts";

Deno.test("--model gguf:<missing file>: exit 3 naming the file", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const r = await oam(["respond", "--model", `gguf:${dir}/none.gguf`, "Hello"]);
    assert.equal(r.code, 3, r.stderr);
    assert.equal(
      r.stderr,
      `Error: The model ${dir}/none.gguf is unavailable: The model file '${dir}/none.gguf' does not ` +
        `exist; the folder ${dir} has no .gguf file. ` +
        "[model_unavailable]\n",
    );
    assert.equal(r.stdout, "");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("--model gguf:<name> neither a file nor cached: the error says where it looked and how to get one, once", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const r = await oam(["respond", "--model", "gguf:qwen", "Hello"], {
      env: { OAM_MODELS_DIR: dir },
      cwd: dir,
    });
    assert.equal(r.code, 3, r.stderr);
    // Run as `deno run -A <path>/cli.ts` from another folder, the hints name that command. The error that
    // ends the run says it all: no warning before it says the same.
    const oamRun = `deno run -A ${CLI}`;
    assert.equal(
      r.stderr,
      "Error: The model qwen is unavailable: The model file 'qwen' does not exist, and no cached model " +
        `is called that (in ${dir}: '${oamRun} models list' shows them, '${oamRun} models pull <url>' downloads ` +
        "one). [model_unavailable]\n",
    );
    // `oam available` and `oam serve` say the model's error too: once.
    const available = await oam(["available", "--model", "gguf:qwen"], {
      env: { OAM_MODELS_DIR: dir },
      cwd: dir,
    });
    assert.equal(available.stderr, "");
    assert.equal(available.stdout.match(/does not exist/g)?.length, 1, available.stdout);
    // oam stdio says it on stderr at the start (its turns' error goes to the engine, not to a terminal):
    // named by the variable OAM_MODEL.
    const stdio = await oam(["stdio"], {
      env: { OAM_MODELS_DIR: dir, OAM_MODEL: "gguf:qwen" },
      cwd: dir,
      stdin: "",
    });
    assert.equal(stdio.code, 0, stdio.stderr);
    assert.match(stdio.stderr, /OAM_MODEL: 'qwen' is neither a file in .* nor a cached model in /);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("--model gguf:<name> where the cache cannot be looked at (the stdio task's narrow --allow-env): no warning that it is not cached", async () => {
  // `deno task stdio`'s grants: the variables of the home folder and the cache are not readable, so
  // whether 'qwen' is cached is unknown; the model's own error says why and what to add.
  const r = await oam(["stdio", "--model", "gguf:qwen"], {
    permissions: [
      "--no-prompt",
      "--allow-env=OAM_FM_LIBRARY,OAM_SCRIPT,OAM_MODEL,OAM_EXIT_WITH_PARENT",
      "--allow-read",
      "--allow-ffi",
    ],
    stdin:
      `${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "session/create", params: { session: "a" } })}\n` +
      `${
        JSON.stringify({
          jsonrpc: "2.0",
          id: 2,
          method: "session/respond",
          params: { session: "a", prompt: "Hi" },
        })
      }\n`,
  });
  assert.equal(r.code, 0, r.stderr);
  assert.doesNotMatch(r.stderr, /nor a cached model/);
  const answer = JSON.parse(r.stdout.trim().split("\n")[1]);
  assert.match(
    answer.error.message,
    /^The model file 'qwen' does not exist, and without --allow-env no cached model can be looked up by that name\. It needs /,
  );
});

Deno.test("--model gguf:<name> run as 'deno task oam': the hints name the command its user types", async () => {
  const dir = await Deno.makeTempDir();
  try {
    // The permissions `deno task oam` grants, run from the repository's folder: its user types that task.
    const task = OAM_TASK_PERMISSIONS;
    const repo = new URL("../../", import.meta.url).pathname;
    const r = await oam(["respond", "--model", "gguf:qwen", "Hello"], {
      env: { OAM_MODELS_DIR: dir },
      cwd: repo,
      permissions: task,
    });
    assert.equal(r.code, 3, r.stderr);
    // The model's own error, alone (the model layer does not know how oam was started; the CLI tells it).
    assert.match(r.stderr, /^Error: The model qwen is unavailable: /);
    assert.ok(
      r.stderr.includes(
        `(in ${dir}: 'deno task oam models list' shows them, 'deno task models pull <url>' downloads one).`,
      ),
      r.stderr,
    );
    assert.ok(!/'oam models/.test(r.stderr), r.stderr);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("OAM_MODEL is the default for --model; OAM_SCRIPT wins over it; a bad value is invalid input", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const missing = `gguf:${dir}/none.gguf`;
    const fromEnv = await oam(["available", "--json"], { env: { OAM_MODEL: missing } });
    assert.equal(fromEnv.code, 3, fromEnv.stderr);
    const availability = JSON.parse(fromEnv.stdout);
    assert.equal(availability.available, false);
    assert.equal(
      availability.detail,
      `The model file '${dir}/none.gguf' does not exist; the folder ${dir} has no .gguf file.`,
    );

    const script = `${dir}/script.json`;
    await Deno.writeTextFile(script, JSON.stringify([{ text: "Scripted." }]));
    const scripted = await oam(["respond", "Hello"], { env: { OAM_MODEL: missing, OAM_SCRIPT: script } });
    assert.equal(scripted.code, 0, scripted.stderr);
    assert.equal(scripted.stdout, "Scripted.\n");

    const bad = await oam(["respond", "Hello"], { env: { OAM_MODEL: "llama:x" } });
    assert.equal(bad.code, 2);
    assert.match(
      bad.stderr,
      /Error: OAM_MODEL: must look like openai:<baseURL>#<model> or gguf:<path\|cached name>/,
    );

    // A value without its kind: the likely one is suggested.
    const file = await oam(["respond", "--model", "qwen.gguf", "Hello"]);
    assert.equal(file.code, 2);
    assert.equal(
      file.stderr,
      "Error: --model must look like openai:<baseURL>#<model> or gguf:<path|cached name>; got 'qwen.gguf'. " +
        "For a GGUF file write gguf:qwen.gguf. [usage]\n",
    );
    const url = await oam(["respond", "Hello"], { env: { OAM_MODEL: "http://127.0.0.1:8080/v1" } });
    assert.equal(url.code, 2);
    assert.equal(
      url.stderr,
      "Error: OAM_MODEL: must look like openai:<baseURL>#<model> or gguf:<path|cached name>; got " +
        "'http://127.0.0.1:8080/v1'. For a server write openai:http://127.0.0.1:8080/v1#<model>. [invalid_input]\n",
    );

    const flag = await oam(["respond", "--model", "gguf:x.gguf#speed=1", "Hello"]);
    assert.equal(flag.code, 2);
    assert.match(flag.stderr, /unknown setting 'speed'/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("--model with a download (hf:… or a URL of a .gguf file): the error names the pull command, then the name to use", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const hf = "hf:Qwen/Qwen2.5-1.5B-Instruct-GGUF/qwen2.5-1.5b-instruct-q4_k_m.gguf";
    // Run as `deno run -A <path>/cli.ts` from a folder of the user's own: the pull command is that one.
    const pull = (source: string) => `'deno run -A ${CLI} models pull ${source}' downloads it once; then use`;
    const bare = await oam(["respond", "--model", hf, "Hello"], { cwd: dir });
    assert.equal(bare.code, 2, bare.stderr);
    assert.equal(
      bare.stderr,
      "Error: --model must look like openai:<baseURL>#<model> or gguf:<path|cached name>; got " +
        `'${hf}'. That is a model to download: ${
          pull(hf)
        } --model gguf:qwen2.5-1.5b-instruct-q4_k_m. [usage]\n`,
    );
    // Behind gguf:, it was looked for as a file in a folder 'hf:Qwen' (exit 3): it is a usage error.
    const prefixed = await oam(["respond", "--model", `gguf:${hf}`, "Hello"], { cwd: dir });
    assert.equal(prefixed.code, 2, prefixed.stderr);
    assert.equal(
      prefixed.stderr,
      `Error: --model gguf:${hf} names a model to download, not a file on this computer: ${pull(hf)} ` +
        "--model gguf:qwen2.5-1.5b-instruct-q4_k_m. [usage]\n",
    );
    const url =
      "https://huggingface.co/Qwen/Qwen2.5-1.5B-Instruct-GGUF/resolve/main/qwen2.5-1.5b-instruct-q4_k_m.gguf";
    const fromEnv = await oam(["respond", "Hello"], { cwd: dir, env: { OAM_MODEL: url } });
    assert.equal(fromEnv.code, 2, fromEnv.stderr);
    assert.equal(
      fromEnv.stderr,
      "Error: OAM_MODEL: must look like openai:<baseURL>#<model> or gguf:<path|cached name>; got " +
        `'${url}'. That is a model to download: ${pull(url)} OAM_MODEL=gguf:qwen2.5-1.5b-instruct-q4_k_m. ` +
        "[invalid_input]\n",
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("gguf:<name> finds a model in OAM_MODELS_DIR", async () => {
  const dir = await Deno.makeTempDir();
  try {
    // Not a real model: the path resolves to the cached file, which then fails to be a GGUF file.
    await Deno.writeTextFile(`${dir}/pet.gguf`, "not a model");
    const r = await oam(["available", "--json", "--model", "gguf:pet"], { env: { OAM_MODELS_DIR: dir } });
    assert.equal(r.code, 3, r.stderr);
    assert.equal(
      JSON.parse(r.stdout).detail,
      `The model file '${dir}/pet.gguf' is not a GGUF file: it does not start with 'GGUF'. Give a model in ` +
        // Run as `deno run -A cli.ts` from the repository, the command is that one.
        "GGUF format (a .gguf file, such as one 'deno run -A cli.ts models pull <url>' downloads).",
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a bad OAM_SCRIPT or OAM_MODEL: oam stdio and oam respond name the variable and the problem alike", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const broken = `${dir}/broken.json`;
    await Deno.writeTextFile(broken, "[{");
    const wrongStep = `${dir}/wrong_step.jsonc`;
    await Deno.writeTextFile(wrongStep, '// a step without a kind\n[{"say": "hi"}]');
    const cases: Array<[Record<string, string>, string]> = [
      [{ OAM_SCRIPT: `${dir}/none.json` }, `OAM_SCRIPT: No such file: '${dir}/none.json'.`],
      [
        { OAM_SCRIPT: broken },
        `OAM_SCRIPT: ${broken}: not valid JSON: expected ',' or '}' at line 1, column 3 (found the end of the input).`,
      ],
      [
        { OAM_SCRIPT: wrongStep },
        `OAM_SCRIPT=${wrongStep}: step 1 must contain one of 'text', 'toolCalls', 'json', 'template' ` +
        "or 'error'.",
      ],
      [
        { OAM_MODEL: "llama:x" },
        "OAM_MODEL: must look like openai:<baseURL>#<model> or gguf:<path|cached name>; got 'llama:x'.",
      ],
    ];
    for (const [env, message] of cases) {
      for (const args of [["stdio"], ["respond", "Hello"]]) {
        const r = await oam(args, { env });
        assert.deepEqual(
          [r.code, r.stdout, r.stderr],
          [2, "", `Error: ${message} [invalid_input]\n`],
          args[0],
        );
      }
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("oam stdio --help names every permission a GGUF model needs, beyond the stdio task's narrow grants", () => {
  // The help said "needs --allow-sys --allow-ffi --allow-run too"; the stdio task narrows --allow-env to four
  // variables, so those flags added to it left node-llama-cpp unable to run: "cannot run without --allow-env".
  const entry = STDIO_HELP.slice(
    STDIO_HELP.indexOf("--model <spec>"),
    STDIO_HELP.indexOf("--no-scripted-models"),
  );
  const named = new Set(entry.match(/--[a-z-]+/g));
  const missing = [...LLAMA_PERMISSIONS.split(" "), "--no-lock"].filter((flag) => !named.has(flag));
  assert.deepEqual(missing, [], entry);
});
