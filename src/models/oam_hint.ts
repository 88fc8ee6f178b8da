/**
 * How the model layer's messages name the `oam` command its user types (`'oam models list'` in the error of a
 * model that is not cached). The model layer does not know how its process was started; the `oam` command line
 * does (`deno task oam`, an `oam` from `deno install`, a compiled binary's name, `deno run … cli.ts`) and sets
 * it once with {@link setOamCommand}. A host that sets nothing gets `oam`.
 * @module
 */

/** What gives the command; called at most once, when a message first needs it. */
let source: () => string = () => "oam";
let command: string | null = null;

/**
 * Sets how the model layer's messages name `oam`: `get` is called once, when a message first names it (so a
 * command that never fails pays nothing), and a `get` that throws leaves it `oam`.
 *
 * @example
 * ```ts
 * import { oamCommandLine, setOamCommand } from "./oam_hint.ts";
 * setOamCommand(() => "deno task oam");
 * oamCommandLine("models list"); // "'deno task oam models list'"
 * ```
 */
export function setOamCommand(get: () => string): void {
  source = get;
  command = null;
}

/**
 * `oam <args>` as a message quotes it, with the command its user types in place of `oam`.
 *
 * @example
 * ```ts
 * import { oamCommandLine } from "./oam_hint.ts";
 * oamCommandLine("models pull <url>"); // "'oam models pull <url>'" unless the CLI set the command
 * ```
 */
export function oamCommandLine(args: string): string {
  if (command === null) {
    try {
      command = source() || "oam";
    } catch {
      command = "oam";
    }
  }
  return `'${command} ${args}'`;
}
