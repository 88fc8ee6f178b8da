/** Running an example the way a user does (`deno check`, `deno run` from the repository), for its tests. */
import assert from "node:assert/strict";

/** The repository's root. */
export const ROOT: URL = new URL("../../", import.meta.url);

/** What a finished `deno` command printed, and its exit code. */
export interface DenoRun {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs `deno <args>` without colors, in the repository's root or in `cwd` (a designer's folder with no
 * deno.json: theirs, not the repository's settings).
 */
export async function deno(args: string[], cwd: string = ROOT.pathname): Promise<DenoRun> {
  const out = await new Deno.Command(Deno.execPath(), {
    args,
    cwd,
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).output();
  const text = (b: Uint8Array) => new TextDecoder().decode(b);
  return { code: out.code, stdout: text(out.stdout), stderr: text(out.stderr) };
}

/** Asserts that `source` has no type cast (`as T`, `<T>x`) and no non-null assertion (`x!.`). */
export function assertNoCasts(source: string): void {
  assert.doesNotMatch(source, /\bas\s+(const|[A-Z{]|unknown|never|any|string|number)|<[A-Z]\w*>\s*\w|!\./);
}
