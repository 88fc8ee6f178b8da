/**
 * Builds libopen_apple_models, its example and its test program with gcc, then runs them against the real
 * bridge process (`cli.ts stdio`, or OAM_BRIDGE_PATH). The slow tier (tests/slow/bindings_c_slow.ts) runs
 * the test program under valgrind and ThreadSanitizer and repeats the kill test.
 */
import assert from "node:assert/strict";
import { withDeadline } from "../helpers/deadline.ts";
import { assertSucceeded, bridgeEnv, run } from "./toolchain.ts";
import { buildC, type CBuild, hasGcc } from "./c_build.ts";

let built: Promise<CBuild> | undefined;
/** The build of this file's tests (made once). */
const build = () => built ??= buildC();

Deno.test({
  name: hasGcc
    ? "bindings/c: builds and passes its tests against the bridge"
    : "bindings/c: SKIPPED (gcc missing)",
  ignore: !hasGcc,
  sanitizeResources: false,
  async fn() {
    const { example, testBridge } = await build();
    const env = bridgeEnv();
    const exampleRun = await run(example, [], { env, timeoutMs: 30_000 });
    assertSucceeded(exampleRun, "example");
    assert.match(exampleRun.stdout, /portcullis chain is jammed/);
    // The engine's line shows the call as the game would log it (it printed the rest of the JSON line: `}}}}`).
    assert.match(exampleRun.stdout, /^ {2}\[engine\] open_gate\(gate: "north"\)$/m);
    // A hang guard: test_bridge starts about a dozen bridges (and waited out two ~3 s destroy grace periods, now
    // 0.5 s each); it took 10 s alone, 13 s beside two busy loops and 19 s beside four on 2 cores, and a loaded full run
    // went past 30 s.
    const tests = await run(testBridge, [], { env, timeoutMs: 120_000 });
    assertSucceeded(tests, "test_bridge");
    assert.match(tests.stdout, /^15 groups, \d+ checks, 0 failures$/m);
    assert.doesNotMatch(tests.stdout, /SKIP/, "game methods are served, so no test may be skipped");
  },
});

Deno.test({
  name: hasGcc
    ? "bindings/c: the bridge's stderr is passed on line by line, and the error of a bridge that exited ends with its last lines"
    : "bindings/c: SKIPPED (gcc missing)",
  ignore: !hasGcc,
  sanitizeResources: false,
  async fn() {
    const { testBridge } = await build();
    const tests = await run(testBridge, ["exit-stderr"], { env: bridgeEnv(), timeoutMs: 60_000 });
    assertSucceeded(tests, "test_bridge exit-stderr");
    assert.match(tests.stdout, /^1 groups, \d+ checks, 0 failures$/m);
    // The library reads the bridge's stderr (for the error's last lines) and passes every line on to the game's
    // stderr unchanged, as the game saw it when the bridge wrote there itself: also a line of a bridge that keeps
    // running, and the 5000-byte line whole (only the error keeps 1 KiB of it).
    const lines = tests.stderr.split("\n");
    for (
      const expected of [
        "stderr line one",
        "stderr line three",
        "a running bridge says hello on stderr",
        "0".repeat(5000),
      ]
    ) {
      assert.ok(
        lines.includes(expected),
        `no line ${expected.slice(0, 40)} in:\n${tests.stderr.slice(0, 4000)}`,
      );
    }
    assert.ok(
      lines.some((l) => l.startsWith("Error: Unknown option '--log-levle'; did you mean '--log-level'?")),
      tests.stderr.slice(0, 4000),
    );
  },
});

Deno.test({
  name: hasGcc
    ? "bindings/c: destroy kills a frozen bridge without waiting out the shutdown grace period"
    : "bindings/c: SKIPPED (gcc missing)",
  ignore: !hasGcc,
  sanitizeResources: false,
  async fn() {
    // A grace period of 60 s: a destroy that waited it out for the stopped bridges of these groups (stuck behind
    // a full pipe, a process that never reads its input, one destroyed from inside the callback) would pass the
    // hang guard below.
    const { testBridge } = await buildC({ dir: "c-long-grace", defines: ["OAM_SHUTDOWN_WAIT_MS=60000"] });
    const tests = await run(testBridge, ["destroy-stuck", "destroy-waiting"], {
      env: bridgeEnv(),
      timeoutMs: 45_000,
    });
    assertSucceeded(tests, "test_bridge destroy-stuck destroy-waiting (60 s grace)");
    assert.match(tests.stdout, /^2 groups, \d+ checks, 0 failures$/m);
  },
});

Deno.test({
  name: hasGcc
    ? "bindings/c: a game that finds no bridge is told which variables point the library at one"
    : "bindings/c: SKIPPED (gcc missing)",
  ignore: !hasGcc,
  sanitizeResources: false,
  async fn() {
    const { example } = await build();
    // No OAM_BRIDGE_COMMAND or OAM_BRIDGE_PATH, and no `oam` on PATH: the library's own line (a game prints no
    // hint of its own) says what to set, with the command of a checkout.
    const missing = await run(example, [], {
      env: { OAM_BRIDGE_COMMAND: "", OAM_BRIDGE_PATH: "", PATH: "/nonexistent" },
      timeoutMs: 30_000,
    });
    assert.notEqual(missing.code, 0);
    const line = missing.stderr.split("\n").find((l) => l.startsWith("[open-apple-models]")) ?? "";
    assert.match(line, /cannot start 'oam': No such file or directory/);
    assert.match(line, /OAM_BRIDGE_COMMAND="deno run -A \/path\/to\/cli\.ts stdio"/);
    assert.match(line, /OAM_BRIDGE_PATH/);
  },
});

/** True while `pid` is a process that is not a zombie (a stopped one counts) (Linux /proc). */
function alive(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z /.test(Deno.readTextFileSync(`/proc/${pid}/stat`));
  } catch {
    return false;
  }
}

Deno.test({
  name: "bindings/c: test_bridge ended by SIGTERM while it holds a bridge stopped does not leave it stopped",
  ignore: !hasGcc || Deno.build.os !== "linux",
  sanitizeResources: false,
  async fn() {
    const { testBridge } = await build();
    // Only test_bridge gets the signal (no process group of its own), as from `timeout` or a CI runner.
    const child = new Deno.Command(testBridge, {
      args: ["destroy-stuck"],
      env: bridgeEnv(),
      stdin: "null",
      stdout: "piped",
      stderr: "null",
    }).spawn();
    let bridge = 0;
    try {
      const decoder = new TextDecoder();
      let stdout = "";
      await withDeadline(
        (async () => {
          for await (const chunk of child.stdout) {
            stdout += decoder.decode(chunk, { stream: true });
            const m = /^stopped the bridge \(pid (\d+)\)$/m.exec(stdout);
            if (m) return bridge = Number(m[1]);
          }
          throw new Error(`test_bridge ended without stopping a bridge:\n${stdout}`);
        })(),
        "test_bridge to stop its bridge",
        30_000,
      );
      child.kill("SIGTERM");
      await withDeadline(child.status, "test_bridge to end after SIGTERM");
      let waited = 0;
      while (alive(bridge) && waited < 5_000) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        waited += 20;
      }
      assert.equal(alive(bridge), false, `the stopped bridge (pid ${bridge}) was left behind`);
    } finally {
      if (bridge > 0 && alive(bridge)) Deno.kill(bridge, "SIGKILL");
      try {
        child.kill("SIGKILL");
      } catch {
        // ended
      }
      await child.status;
    }
  },
});
