/**
 * Test helper: the files `deno publish --dry-run --allow-dirty` would upload to JSR, and a copy of them in a
 * temporary folder (the package as JSR serves it: nothing else of the repository beside it).
 */

const ROOT = new URL("../../", import.meta.url);

/** The dry run's exit code, the published files (repository-relative paths) and its whole output. */
export interface DryRun {
  code: number;
  files: string[];
  text: string;
}

/** Runs the publish dry run in the repository. */
export async function dryRun(): Promise<DryRun> {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["publish", "--dry-run", "--allow-dirty"],
    cwd: ROOT.pathname,
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
    // A hang fails the test instead of stalling the run. Cold (a fresh clone type-checks everything) on a busy
    // 2-core machine the dry run took over 60 s while the other release test ran its own.
    signal: AbortSignal.timeout(180_000),
  }).output();
  const text = new TextDecoder().decode(output.stdout) + new TextDecoder().decode(output.stderr);
  const files = [...text.matchAll(/^\s+file:\/\/(\S+) \(/gm)].map((m) => m[1].slice(ROOT.pathname.length));
  return { code: output.code, files, text };
}

/** Copies `files` (repository-relative) into `dir`, keeping their paths. */
export async function copyFiles(files: readonly string[], dir: string): Promise<void> {
  for (const file of files) {
    const target = `${dir}/${file}`;
    await Deno.mkdir(target.slice(0, target.lastIndexOf("/")), { recursive: true });
    await Deno.copyFile(new URL(file, ROOT), target);
  }
}
