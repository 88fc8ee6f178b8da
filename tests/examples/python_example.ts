/**
 * Runs one of the Python examples (`examples/<file>`) the way a reader does, with this Deno as the bridge
 * (`OAM_BRIDGE_COMMAND`, the examples' own flags; `deno` need not be on PATH), and returns what it printed.
 * @module
 */
import assert from "node:assert/strict";
import { onPath } from "../bindings/toolchain.ts";

/** Whether `python3` is on PATH (the tests that need it are skipped without it). */
export const hasPython: boolean = onPath("python3");

/** Runs `examples/<file>` with python3; asserts it exits 0 and returns what it wrote. */
export async function runPythonExample(file: string): Promise<{ stdout: string; stderr: string }> {
  const script = new URL(`../../examples/${file}`, import.meta.url).pathname;
  const cli = new URL("../../cli.ts", import.meta.url).pathname;
  const out = await new Deno.Command("python3", {
    args: ["-B", script],
    env: { OAM_BRIDGE_COMMAND: `${Deno.execPath()} run --no-prompt --allow-env --allow-read ${cli} stdio` },
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(60_000), // a hang fails the test instead of stalling the run
  }).output();
  const stdout = new TextDecoder().decode(out.stdout);
  const stderr = new TextDecoder().decode(out.stderr);
  assert.equal(out.code, 0, stderr + stdout);
  return { stdout, stderr };
}
