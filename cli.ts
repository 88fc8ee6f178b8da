/**
 * `oam`: the open-apple-models command line. It exports nothing: run it, or install it as `oam`.
 *
 * - `oam stdio` serves the bridge's JSON-RPC protocol on stdin/stdout: what a game engine (Unity, Godot,
 *   Unreal, any language) or the typed client's `Bridge.spawn()` starts. It needs `--allow-read --allow-env
 *   --allow-ffi`.
 * - `oam serve`: an OpenAI-compatible HTTP server with real tool calls, and the bridge over WebSocket.
 * - `oam playground`: a web page to write an NPC persona and talk to it; `oam demo`: a tavern scene; `oam chat`,
 *   `oam npc <persona.jsonc>`, `oam models pull <url>` and more: `oam --help` lists them, `oam <command> --help`
 *   gives a command's options, exit codes and an example. The commands for people also need `--allow-sys
 *   --allow-run --allow-write`; `serve` and `playground` need `--allow-net`.
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
