/**
 * `oam`: the open-apple-models command line. Thin: parses the subcommand and hands off to src/cli/.
 *
 * @example
 * ```sh
 * # installed from JSR as `oam`, with the permissions of `oam stdio`
 * deno install -g -n oam --allow-read --allow-env --allow-ffi jsr:@open-apple-models/bridge/cli
 * oam stdio
 * # or in a checkout of the repository
 * deno run --allow-read --allow-env --allow-ffi cli.ts stdio
 * ```
 * @module
 */
import { runCli } from "./src/cli/main.ts";
import { stderrQueue } from "./src/util/stderr_queue.ts";

if (import.meta.main) {
  const code = await runCli(Deno.args);
  // Log lines still queued reach stderr first, unless nobody reads it (then exiting matters more).
  await stderrQueue.flush(500);
  Deno.exit(code);
}
