/**
 * The subprocess runner of the binding tests: a program that runs past its timeout is killed with the
 * processes it started, and a process that keeps its output pipes open never makes a test wait for it.
 */
import assert from "node:assert/strict";
import { withDeadline } from "../helpers/deadline.ts";
import { onPath, run } from "./toolchain.ts";

/** True while `pid` is a live process (not a zombie) (Linux /proc; elsewhere, false). */
function alive(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z /.test(Deno.readTextFileSync(`/proc/${pid}/stat`));
  } catch {
    return false;
  }
}

/**
 * True when `pid` ends within a few seconds: a process killed by SIGKILL closes its pipes a moment before it
 * becomes a zombie.
 */
async function ends(pid: number): Promise<boolean> {
  for (let waited = 0; waited < 5_000; waited += 20) {
    if (!alive(pid)) return true;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return false;
}

/**
 * Runs `script` with sh; it writes the pid of the process it leaves behind to a file, read afterwards. With
 * `expectEnded`, waits for that process to end; it is killed in any case.
 */
async function runLeavingProcess(script: string, timeoutMs: number, expectEnded = true) {
  const pidFile = await Deno.makeTempFile({ prefix: "oam-run-test-" });
  let grandchild = 0;
  try {
    const result = await withDeadline(
      run("sh", ["-c", script.replaceAll("PID_FILE", pidFile)], { timeoutMs }),
      "run() to return",
      20_000,
    );
    grandchild = Number(await Deno.readTextFile(pidFile));
    return { result, grandchildLeft: expectEnded ? !await ends(grandchild) : alive(grandchild) };
  } finally {
    grandchild ||= Number(await Deno.readTextFile(pidFile).catch(() => "0"));
    if (grandchild > 0 && alive(grandchild)) Deno.kill(grandchild, "SIGKILL");
    await Deno.remove(pidFile);
  }
}

Deno.test({
  name: "run: a program past its timeout is killed with the process it started that holds stderr",
  ignore: Deno.build.os !== "linux",
  async fn() {
    const { result, grandchildLeft } = await runLeavingProcess(
      "sleep 600 >&2 & echo $! > PID_FILE; echo started; echo on stderr >&2; sleep 600",
      500,
    );
    assert.equal(result.timedOut, true);
    assert.notEqual(result.code, 0);
    assert.equal(result.stdout, "started\n", "what the program wrote before the timeout is kept");
    assert.equal(result.stderr, "on stderr\n");
    assert.equal(grandchildLeft, false, "the background process was left running");
  },
});

Deno.test({
  name: "run: a program that exits leaving a process that holds stderr returns its output",
  ignore: Deno.build.os !== "linux",
  async fn() {
    const { result, grandchildLeft } = await runLeavingProcess(
      "sleep 600 >&2 & echo $! > PID_FILE; echo done",
      30_000,
    );
    assert.equal(result.timedOut, false);
    assert.equal(result.code, 0);
    assert.equal(result.stdout, "done\n");
    assert.equal(grandchildLeft, false, "the background process was left running");
  },
});

Deno.test({
  name: "run: a process outside the program's group that holds stderr does not keep run waiting",
  ignore: Deno.build.os !== "linux" || !onPath("setsid"),
  async fn() {
    const { result } = await runLeavingProcess(
      "setsid sleep 600 >&2 & echo $! > PID_FILE; echo done",
      30_000,
      false,
    );
    assert.equal(result.timedOut, false);
    assert.equal(result.code, 0);
    assert.equal(result.stdout, "done\n", "what was read before reading stopped");
  },
});
