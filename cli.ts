/**
 * `oam`: the open-apple-models command line. Thin: parses the subcommand and hands off to src/cli/.
 *
 * @example
 * ```sh
 * deno run --allow-read --allow-env --allow-ffi cli.ts stdio
 * ```
 * @module
 */
import { runCli } from "./src/cli/main.ts";

if (import.meta.main) {
  const code = await runCli(Deno.args);
  Deno.exit(code);
}
