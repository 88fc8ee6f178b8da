/**
 * The shared ending of the scripts that build a committed, generated module (build_playground.ts,
 * build_ajv.ts): write it, or with `--check` fail when the committed file differs from what was built.
 * @module
 */

/**
 * Writes `built` to `path` (relative to the repository), or with `--check` in `args` exits 1 with
 * `staleMessage` when the committed file is not `built`.
 */
export async function writeOrCheck(
  path: string,
  built: string,
  options: { args: string[]; staleMessage: string },
): Promise<void> {
  const target = new URL(`../${path}`, import.meta.url);
  const say = (text: string) => Deno.stderr.writeSync(new TextEncoder().encode(`${text}\n`));
  if (options.args.includes("--check")) {
    const current = await Deno.readTextFile(target).catch(() => "");
    if (current !== built) {
      say(options.staleMessage);
      Deno.exit(1);
    }
    return;
  }
  await Deno.writeTextFile(target, built);
  say(`wrote ${path} (${built.length} bytes)`);
}
