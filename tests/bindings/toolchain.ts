/**
 * Helpers for the binding tests: the repository root, the bridge command the clients spawn, toolchain lookup
 * and running a subprocess with a deadline.
 */
import { fileURLToPath } from "node:url";
import { settledWithin } from "../../src/util/sleep.ts";

/** Absolute path of the repository root. */
export const REPO_ROOT: string = fileURLToPath(new URL("../../", import.meta.url)).replace(/\/$/, "");

/** Build output of the binding tests (gitignored). */
export const BUILD_DIR: string = `${REPO_ROOT}/.build/bindings`;

/**
 * Environment that points a client at the bridge: OAM_BRIDGE_PATH when the caller set it (a compiled `oam`),
 * else OAM_BRIDGE_COMMAND running `cli.ts stdio` with the current Deno.
 */
export function bridgeEnv(): Record<string, string> {
  const path = Deno.env.get("OAM_BRIDGE_PATH");
  if (path) return { OAM_BRIDGE_PATH: path, OAM_BRIDGE_COMMAND: "" };
  return {
    OAM_BRIDGE_COMMAND:
      `${Deno.execPath()} run --allow-read --allow-env --allow-ffi ${REPO_ROOT}/cli.ts stdio`,
  };
}

/** True when `command` is found on PATH. */
export function onPath(command: string): boolean {
  for (const dir of (Deno.env.get("PATH") ?? "").split(":")) {
    if (!dir) continue;
    try {
      const info = Deno.statSync(`${dir}/${command}`);
      if (info.isFile) return true;
    } catch {
      // not here
    }
  }
  return false;
}

/** Output of {@link run}. */
export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
  /** True when the command ran past its timeout and was killed, with every process of its group. */
  timedOut: boolean;
}

/**
 * How long {@link run} keeps reading output after the command ended before it kills what is left of the
 * command's process group, and then again before it stops reading (a process that left the group may hold
 * the pipes for ever).
 */
const DRAIN_MS = 2_000;

/**
 * Runs a command and collects its output. The command runs in a process group of its own (its own session);
 * after `timeoutMs` the whole group is killed (SIGKILL), so processes it started (a bridge it stopped with
 * SIGSTOP, say) do not outlive it. Output is read for at most {@link DRAIN_MS} after the command ended (then
 * the group is killed, and after another {@link DRAIN_MS} reading stops): a process that still holds a pipe
 * never makes the caller wait; what was read so far is returned.
 */
export async function run(
  command: string,
  args: string[],
  options: { env?: Record<string, string>; cwd?: string; timeoutMs?: number } = {},
): Promise<RunResult> {
  const child = new Deno.Command(command, {
    args,
    env: options.env,
    cwd: options.cwd ?? REPO_ROOT,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    detached: true, // setsid(): the child leads a process group that killGroup() ends as a whole
  }).spawn();
  const stdout = collect(child.stdout);
  const stderr = collect(child.stderr);
  const timedOut = !await settledWithin(child.status, { ms: options.timeoutMs ?? 60_000 });
  if (timedOut) killGroup(child);
  const status = await child.status;
  const outputEnded = Promise.all([stdout.ended, stderr.ended]);
  if (!await settledWithin(outputEnded, { ms: DRAIN_MS })) {
    killGroup(child); // what the command started and left running with the pipes open
    if (!await settledWithin(outputEnded, { ms: DRAIN_MS })) {
      await Promise.all([stdout.stop(), stderr.stop()]);
    }
  }
  return { code: status.code, stdout: stdout.text(), stderr: stderr.text(), timedOut };
}

/** Kills the process group `child` leads (SIGKILL; a stopped process dies too); nothing when it is gone. */
function killGroup(child: Deno.ChildProcess): void {
  try {
    if (Deno.build.os === "windows") child.kill("SIGKILL");
    else Deno.kill(-child.pid, "SIGKILL");
  } catch {
    // the group is gone
  }
}

/** Reads a stream to its end as text; `stop()` cancels the read and keeps what was read. */
function collect(stream: ReadableStream<Uint8Array>) {
  const reader = stream.getReader();
  const decoder = new TextDecoder();
  let text = "";
  const ended = (async () => {
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        text += decoder.decode(value, { stream: true });
      }
    } catch {
      // cancelled by stop()
    }
    text += decoder.decode();
  })();
  return {
    ended,
    text: () => text,
    stop: async () => {
      await reader.cancel().catch(() => {});
      await ended;
    },
  };
}

/** Throws with both output streams when the command failed. */
export function assertSucceeded(result: RunResult, what: string): void {
  if (result.code !== 0) {
    const killed = result.timedOut ? " (killed with its process group: it ran past its timeout)" : "";
    throw new Error(
      `${what} exited with ${result.code}${killed}\n--- stdout\n${result.stdout}\n--- stderr\n${result.stderr}`,
    );
  }
}
