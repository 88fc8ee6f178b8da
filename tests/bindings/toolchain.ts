/**
 * Helpers for the binding tests: the repository root, the bridge command the clients spawn, toolchain lookup
 * and running a subprocess with a deadline.
 */
import { fileURLToPath } from "node:url";

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
}

/** Runs a command (killed after `timeoutMs`) and collects its output. */
export async function run(
  command: string,
  args: string[],
  options: { env?: Record<string, string>; cwd?: string; timeoutMs?: number } = {},
): Promise<RunResult> {
  const output = await new Deno.Command(command, {
    args,
    env: options.env,
    cwd: options.cwd ?? REPO_ROOT,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(options.timeoutMs ?? 60_000),
  }).output();
  const decoder = new TextDecoder();
  return { code: output.code, stdout: decoder.decode(output.stdout), stderr: decoder.decode(output.stderr) };
}

/** Throws with both output streams when the command failed. */
export function assertSucceeded(result: RunResult, what: string): void {
  if (result.code !== 0) {
    throw new Error(
      `${what} exited with ${result.code}\n--- stdout\n${result.stdout}\n--- stderr\n${result.stderr}`,
    );
  }
}
