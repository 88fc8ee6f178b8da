/** The frame every `oam` subcommand runs in: its help on request, its errors reported with their exit code. */
import { wantsHelp } from "./args.ts";
import { EXIT, type OutputMode, reportError } from "./cli_error.ts";
import { stderrStyle, writeOut } from "./tty.ts";

/** A subcommand as {@link runSubcommand} runs it. */
export interface Subcommand {
  /** Printed on stdout for `-h`/`--help` (exit 0). */
  help: string;
  /** How an error is reported: a line for people (default), or JSON on stderr for `--json`/`--events`. */
  mode?: OutputMode;
  /** The work; resolves with the exit code. */
  run: () => Promise<number>;
}

/**
 * Runs a subcommand: its help for `-h`/`--help` (before `--`), otherwise its work, with any error it throws
 * reported on stderr and turned into its exit code.
 *
 * @example
 * ```ts ignore
 * export function runHello(args: string[]): Promise<number> {
 *   return runSubcommand(args, { help: "Usage: oam hello\n", run: async () => EXIT.ok });
 * }
 * ```
 */
export async function runSubcommand(args: string[], command: Subcommand): Promise<number> {
  if (wantsHelp(args)) {
    writeOut(command.help);
    return EXIT.ok;
  }
  try {
    return await command.run();
  } catch (error) {
    return reportError(error, { mode: command.mode ?? "human", style: stderrStyle() });
  }
}
