/**
 * Runs the Python client's unittest suite (bindings/python/test_bridge.py) against the real bridge process.
 */
import assert from "node:assert/strict";
import { assertSucceeded, bridgeEnv, onPath, REPO_ROOT, run } from "./toolchain.ts";

const hasPython = onPath("python3");

Deno.test({
  name: hasPython
    ? "bindings/python: unittest suite passes against the bridge"
    : "bindings/python: SKIPPED (python3 missing)",
  ignore: !hasPython,
  sanitizeResources: false,
  async fn() {
    const result = await run("python3", ["-B", `${REPO_ROOT}/bindings/python/test_bridge.py`], {
      env: { ...bridgeEnv(), PYTHONDONTWRITEBYTECODE: "1" },
      timeoutMs: 180_000, // a hang guard: under a loaded parallel run the suite has taken over 60 s
    });
    assertSucceeded(result, "python3 test_bridge.py");
    assert.match(result.stderr, /\nOK\b/);
    assert.doesNotMatch(result.stderr, /skipped/);
  },
});

Deno.test({
  name: hasPython
    ? "bindings/README.md: the complete Python script runs as written, beside a copy of the module: a tool call, a cancel, an error"
    : "bindings/README.md complete Python script: SKIPPED (python3 missing)",
  ignore: !hasPython,
  sanitizeResources: false,
  async fn() {
    const readme = await Deno.readTextFile(`${REPO_ROOT}/bindings/README.md`);
    const section = readme.split(/^### A complete Python script/m)[1];
    assert.ok(section !== undefined, "bindings/README.md has no '### A complete Python script' section");
    const block = /```python\n([\s\S]*?)\n```/.exec(section);
    assert.ok(block, "the section has no python block");
    const dir = await Deno.makeTempDir();
    try {
      await Deno.writeTextFile(`${dir}/game.py`, block[1]);
      await Deno.copyFile(`${REPO_ROOT}/bindings/python/open_apple_models.py`, `${dir}/open_apple_models.py`);
      const result = await run("python3", ["-B", "game.py"], {
        cwd: dir,
        env: bridgeEnv(),
        timeoutMs: 60_000,
      });
      assertSucceeded(result, "python3 game.py");
      assert.deepEqual(result.stdout.trim().split("\n").filter((line) => !line.startsWith("… ")), [
        "engine opens the north gate",
        'guard: The gate says {"opened":false}',
        "cancelled: the turn was cancelled",
        "-32020 session_not_found: No session with id 'nobody'.",
      ]);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test({
  name: hasPython
    ? "bindings/README.md: the Python quest content script runs as written: generate, decide, decide_many, the world"
    : "bindings/README.md Python quest content script: SKIPPED (python3 missing)",
  ignore: !hasPython,
  sanitizeResources: false,
  async fn() {
    const readme = await Deno.readTextFile(`${REPO_ROOT}/bindings/README.md`);
    const section = readme.split(/^### Quest content and decisions from Python/m)[1];
    assert.ok(
      section !== undefined,
      "bindings/README.md has no '### Quest content and decisions from Python' section",
    );
    const block = /```python\n([\s\S]*?)\n```/.exec(section);
    assert.ok(block, "the section has no python block");
    const dir = await Deno.makeTempDir();
    try {
      await Deno.writeTextFile(`${dir}/quest_content.py`, block[1]);
      await Deno.copyFile(`${REPO_ROOT}/bindings/python/open_apple_models.py`, `${dir}/open_apple_models.py`);
      const result = await run("python3", ["-B", "quest_content.py"], {
        cwd: dir,
        env: bridgeEnv(),
        timeoutMs: 60_000,
      });
      assertSucceeded(result, "python3 quest_content.py");
      assert.deepEqual(result.stdout.trim().split("\n"), [
        "reward: Pelts for Bram 120",
        "tactic: torches 70",
        "crowd: ['dodge', 'relight']",
        "world: done 132",
      ]);
      assert.doesNotMatch(result.stderr, /WARNING|Traceback/, result.stderr);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});
