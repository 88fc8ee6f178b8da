/**
 * OAM_EXIT_WITH_PARENT=1: when the game that started the bridge is killed, the bridge stops as on SIGTERM
 * (in-flight turns get -32009, then it exits) instead of finishing turns nobody will read. Without the
 * variable (or without the permission to read it) a bridge whose launcher is gone keeps working: a background
 * job whose output goes elsewhere must not be cut short.
 *
 * The bridge is started by tests/faults/bridge_parent.ts with the test's own pipes, so killing the launcher
 * does not close the bridge's stdin: only the parent's exit can make it stop.
 */
import assert from "node:assert/strict";
import type { JsonObject } from "../../src/protocol/json.ts";
import { onParentExit } from "../../src/cli/stop_signals.ts";
import { withDeadline } from "../helpers/deadline.ts";
import { BridgeProcess, STDIO_FLAGS } from "../helpers/process.ts";

const LAUNCHER = new URL("./bridge_parent.ts", import.meta.url).pathname;
/** The permission flags of `deno task stdio` (deno.json), whose --allow-env list must include the variable. */
const TASK_FLAGS: string[] = JSON.parse(Deno.readTextFileSync(new URL("../../deno.json", import.meta.url)))
  .tasks.stdio.split(" ").filter((word: string) => word.startsWith("--allow-"));
const CANCELLED = { code: -32009, message: "The turn was cancelled.", data: { code: "cancelled" } };

/** Whether `pid` has ended (no such process, or a zombie nobody reaped yet). */
function gone(pid: number): boolean {
  try {
    const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
    return /^[ZX]/.test(stat.slice(stat.lastIndexOf(")") + 2));
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return true;
    throw error;
  }
}

/** Waits (polling, with a deadline far above the time needed) until `pid` has ended. */
async function waitGone(pid: number): Promise<void> {
  await withDeadline(
    (async () => {
      while (!gone(pid)) await new Promise((r) => setTimeout(r, 100));
    })(),
    `bridge ${pid} to exit`,
    20_000,
  );
}

/**
 * A bridge started by the launcher, with a session whose turn (request 2) runs for `delayMs`; resolves once
 * the bridge has read the turn. Returns the process and the bridge's pid.
 */
async function launchWithTurn(env: Record<string, string>, delayMs: number, flags = STDIO_FLAGS) {
  const p = new BridgeProcess([], { launcher: LAUNCHER, env, flags });
  await p.until(() => /bridge pid \d+\n/.test(p.stderr), undefined, "the launcher to start the bridge");
  const pid = Number(/bridge pid (\d+)/.exec(p.stderr)![1]);
  await p.request(1, "session/create", {
    session: "slow",
    model: { type: "scripted", steps: [{ text: "finally", delayMs }] },
  });
  await p.request(2, "session/respond", { session: "slow", prompt: "wait" });
  // Requests are read in order: the answer to 3 means the turn is running.
  await p.request(3, "ping");
  await p.response(3);
  return { p, pid };
}

/** Kills the bridge when a test failed with it still running (it is not this process's child). */
function killBridge(pid: number | undefined): void {
  if (pid === undefined) return;
  try {
    Deno.kill(pid, "SIGKILL");
  } catch {
    // already gone
  }
}

Deno.test({
  name:
    "OAM_EXIT_WITH_PARENT=1 (deno task stdio's permissions): the launcher is killed; the running turn is cancelled and the bridge exits",
  ignore: Deno.build.os === "windows",
  fn: async () => {
    let bridge: number | undefined;
    let launcher: BridgeProcess | undefined;
    try {
      const { p, pid } = await launchWithTurn({ OAM_EXIT_WITH_PARENT: "1" }, 600_000, TASK_FLAGS);
      launcher = p;
      bridge = pid;
      p.child.kill("SIGKILL");
      // stdin stays open (this test holds it): the turn would run for 10 minutes.
      assert.deepEqual((await p.response(2, 20_000)).error, CANCELLED);
      await waitGone(pid);
      bridge = undefined;
      // Its stdout ended with it: nothing else was written, no warning on stderr.
      assert.deepEqual(p.messages.map((m) => m.id), [1, 3, 2]);
      assert.equal(p.stderr.replace(/^bridge pid \d+\n/, ""), "");
    } finally {
      killBridge(bridge);
      await launcher?.kill();
    }
  },
});

for (
  const [what, env, flags] of [
    ["without OAM_EXIT_WITH_PARENT", {}, STDIO_FLAGS],
    ["with OAM_EXIT_WITH_PARENT=0", { OAM_EXIT_WITH_PARENT: "0" }, STDIO_FLAGS],
    [
      "with OAM_EXIT_WITH_PARENT=1 but no permission to read it",
      { OAM_EXIT_WITH_PARENT: "1" },
      ["--allow-read", "--allow-env=OAM_SCRIPT,OAM_MODEL,OAM_FM_LIBRARY"],
    ],
  ] as const
) {
  Deno.test({
    name: `${what}: the launcher is killed; the bridge keeps working until end of input`,
    ignore: Deno.build.os === "windows",
    fn: async () => {
      let bridge: number | undefined;
      let launcher: BridgeProcess | undefined;
      try {
        // A turn longer than a few looks at the parent pid.
        const { p, pid } = await launchWithTurn(env, 3000, flags);
        launcher = p;
        bridge = pid;
        p.child.kill("SIGKILL");
        await p.child.status;
        assert.equal(((await p.response(2)).result as JsonObject).text, "finally");
        await p.request(4, "ping");
        assert.deepEqual(await p.response(4), { jsonrpc: "2.0", id: 4, result: {} });
        await p.closeInput();
        await waitGone(pid);
        bridge = undefined;
        assert.equal(p.stderr.replace(/^bridge pid \d+\n/, ""), "");
      } finally {
        killBridge(bridge);
        await launcher?.kill();
      }
    },
  });
}

Deno.test("onParentExit: stops once when the parent pid changes; off for 0, unset, other values and Windows", async () => {
  let ppid = 100;
  let stops = 0;
  let stopped!: () => void;
  const done = new Promise<void>((r) => stopped = r);
  const remove = onParentExit(() => {
    stops++;
    stopped();
  }, { env: () => "1", ppid: () => ppid, os: "linux" });
  ppid = 1;
  await withDeadline(done, "the stop after the parent pid changed");
  remove();
  assert.equal(stops, 1);

  const warnings: string[] = [];
  const never = () => assert.fail("stop must not be called");
  for (const value of [undefined, "", "0", " 0 ", "yes"]) {
    onParentExit(never, {
      env: () => value,
      ppid: () => assert.fail("ppid must not be read"),
      warn: (m) => warnings.push(m),
    })();
  }
  onParentExit(never, { env: () => "1", ppid: () => assert.fail("no polling on Windows"), os: "windows" })();
  assert.deepEqual(warnings, [
    "OAM_EXIT_WITH_PARENT=yes is neither 1 nor 0; the bridge does not stop when its parent exits.",
  ]);
});
