/**
 * How the model layer's messages name the `oam` command its user types (`'oam models list'` in the error of a
 * model that is not cached). The model layer does not know how its process was started; the `oam` command line
 * does (`deno task oam`, an `oam` from `deno install`, a compiled binary's name, `deno run … cli.ts`) and sets
 * it once with {@link setOamCommand}. A host that sets nothing (a `deno run` script's `Bridge.open()`, an
 * engine host) gets {@link defaultOamCommand}: the `cli.ts` beside this module, which its user can run
 * without an `oam` installed.
 * @module
 */
import { fileURLToPath } from "node:url";

/** What gives the command line for some arguments; called once per arguments, when a message first needs it. */
let source: (args: string) => string = (args) => `${defaultOamCommand(import.meta.url)} ${args}`;
const lines = new Map<string, string>();

/**
 * The command that runs the `cli.ts` of the copy of this package `moduleUrl` (this module's URL) is in, for a
 * host that did not say how its user runs `oam`: `deno run -A --no-lock <checkout>/cli.ts` for a checkout
 * imported by path (`--no-lock`: a GGUF model run through it would pin node-llama-cpp in the checkout's
 * lock), `deno run -A jsr:@open-apple-models/bridge@<version>/cli` for the JSR package, else `oam`.
 *
 * @example
 * ```ts
 * import { defaultOamCommand } from "./oam_hint.ts";
 * defaultOamCommand("file:///home/me/oam/src/models/oam_hint.ts"); // "deno run -A --no-lock /home/me/oam/cli.ts"
 * defaultOamCommand("https://jsr.io/@open-apple-models/bridge/0.1.0/src/models/oam_hint.ts");
 * // "deno run -A jsr:@open-apple-models/bridge@0.1.0/cli"
 * ```
 */
export function defaultOamCommand(moduleUrl: string): string {
  const url = new URL(moduleUrl);
  if (url.protocol === "file:") {
    const cli = fileURLToPath(new URL("../../cli.ts", url));
    return `deno run -A --no-lock ${/^[A-Za-z0-9_@%+=:,./\\-]+$/.test(cli) ? cli : `"${cli}"`}`;
  }
  const jsr = /^https:\/\/jsr\.io\/(@[^/]+\/[^/]+)\/([^/]+)\/src\/models\/[^/]+$/.exec(url.href);
  return jsr ? `deno run -A jsr:${jsr[1]}@${jsr[2]}/cli` : "oam";
}

/**
 * Sets how the model layer's messages write `oam <args>`: `get` returns the whole command line for `args` (so
 * a command that needs more permissions than this process has, such as `models pull`, can say so). It is
 * called once per `args`, when a message first names them (a command that never fails pays nothing); a `get`
 * that throws gives `oam <args>`.
 *
 * @example
 * ```ts
 * import { oamCommandLine, setOamCommand } from "./oam_hint.ts";
 * setOamCommand((args) => `deno task oam ${args}`);
 * oamCommandLine("models list"); // "'deno task oam models list'"
 * ```
 */
export function setOamCommand(get: (args: string) => string): void {
  source = get;
  lines.clear();
}

/**
 * `oam <args>` as a message quotes it, with the command its user types in place of `oam`.
 *
 * @example
 * ```ts
 * import { oamCommandLine } from "./oam_hint.ts";
 * oamCommandLine("models pull <url>"); // "'deno run -A --no-lock <checkout>/cli.ts models pull <url>'" from a checkout
 * ```
 */
export function oamCommandLine(args: string): string {
  let line = lines.get(args);
  if (line === undefined) {
    try {
      line = source(args) || `oam ${args}`;
    } catch {
      line = `oam ${args}`;
    }
    lines.set(args, line);
  }
  return `'${line}'`;
}
