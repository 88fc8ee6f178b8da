/**
 * Subcommand dispatch of `oam`.
 * @module
 */
import { SERVER_INFO } from "../protocol/version.ts";
import { reportError } from "./cli_error.ts";
import { stderrStyle, writeErr, writeOut } from "./tty.ts";
import { didYouMean, nearestName } from "../protocol/edit_distance.ts";
import { setOamCommand } from "../models/oam_hint.ts";
import { oamCommandLineFor, oamHelpLine } from "./invocation.ts";

/** Top-level help. */
export const MAIN_HELP = `oam ${SERVER_INFO.version} — drive LLM agents with real tool calls from game engines

Usage: oam <command> [options]

Try it:
  demo                 a tavern scene: an NPC, client tools, a shared world and a decision

Talk to the model:
  chat                 interactive streaming chat with live tool calls
  respond [prompt…]    one turn for shell scripts (--json, --events, --schema, client tools → exit 10)
  npc <persona.jsonc>  talk to a game character defined in a file
  playground           a web page to write an NPC persona and talk to it

Models:
  models pull <url>    download a GGUF model (hf:<user>/<repo>/<file.gguf> works too); use --model gguf:<name>
  models list          the cached GGUF models

Inspect:
  available            is the model usable here? (exit 3 when not)
  schema convert <f>   show the generation schema of a JSON Schema
  tools validate <f>   check a tools file

Serve:
  stdio                serve the JSON-RPC bridge on stdin/stdout (for engines)
  serve                OpenAI-compatible HTTP server with real tool calls, and the bridge over WebSocket

Run 'oam <command> --help' (or 'oam help <command>') for a command's options, exit codes and an example.
Colors only on a terminal; NO_COLOR=1 turns them off. OAM_SCRIPT=<file> swaps in a scripted model.
`;

/** A subcommand: its arguments in, exit code out. */
export type Command = (args: string[]) => Promise<number>;

/**
 * Registered subcommands. Each loads its module on first use, so a process starts with only the code of the
 * command it runs: `oam stdio`, the one game engines spawn, starts in about two thirds of the time it takes
 * with every command loaded.
 */
export const COMMANDS: Record<string, Command> = {
  stdio: async (args) => (await import("./stdio.ts")).runStdio(args),
  serve: async (args) => (await import("./serve.ts")).runServe(args),
  playground: async (args) => (await import("./playground.ts")).runPlayground(args),
  respond: async (args) => (await import("./respond.ts")).runRespond(args),
  chat: async (args) => (await import("./chat.ts")).runChat(args),
  npc: async (args) => (await import("./npc.ts")).runNpc(args),
  demo: async (args) => (await import("./demo.ts")).runDemo(args),
  available: async (args) => (await import("./available.ts")).runAvailable(args),
  schema: async (args) => (await import("./schema_convert.ts")).runSchema(args),
  tools: async (args) => (await import("./tools_validate.ts")).runTools(args),
  models: async (args) => (await import("./models.ts")).runModels(args),
};

/**
 * Commands none of whose arguments is a positional starting with `-`: for them a `--` right after the command
 * can only be the separator `deno task stdio -- --log-level debug` passes through, and is dropped.
 */
const NO_DASH_POSITIONALS = new Set(["stdio", "serve", "playground", "demo", "chat", "available"]);

/**
 * `args` without the `--` that `deno task <name> -- <args>` passes through: before the command
 * (`deno task oam -- respond …`), or right after a command in {@link NO_DASH_POSITIONALS}.
 */
export function withoutTaskSeparator(args: string[]): string[] {
  const out = args[0] === "--" ? args.slice(1) : [...args];
  if (out[1] === "--" && NO_DASH_POSITIONALS.has(out[0])) out.splice(1, 1);
  return out;
}

/**
 * Runs `oam` with `args`; returns the exit code. Usage errors print one line on stderr and return 2. What a
 * command does not catch (a help that cannot be written, …) is reported like a command's error, `Error:
 * <message> [<code>]`, with its exit code. The `--` that `deno task … -- <args>` passes through is dropped
 * (see {@link withoutTaskSeparator}). `oam help <command>` runs `oam <command> --help`.
 */
export async function runCli(args: string[]): Promise<number> {
  const words = withoutTaskSeparator(args);
  // `oam help <command>` is `oam <command> --help`.
  const [command, ...rest] = words[0] === "help" && words.length > 1 ? [words[1], "--help"] : words;
  // The model layer's messages ('oam models list') name the command this user types.
  setOamCommand((args) => oamCommandLineFor(args));
  try {
    if (command === undefined) {
      writeErr(MAIN_HELP); // no command: a usage error, so the help goes to stderr
      return 2;
    }
    if (command === "-h" || command === "--help" || command === "help") {
      writeOut(MAIN_HELP);
      return 0;
    }
    if (
      command === "--version" || command === "-V" || command === "version" ||
      (rest.includes("--version") && command in COMMANDS)
    ) {
      writeOut(`oam ${SERVER_INFO.version}\n`);
      return 0;
    }
    const run = Object.hasOwn(COMMANDS, command) ? COMMANDS[command] : undefined;
    if (!run) {
      const what = command.startsWith("-") ? "Unknown option" : "Unknown command";
      const meant = command.startsWith("-") ? undefined : nearestName(command, Object.keys(COMMANDS));
      const hint = didYouMean(meant, { as: "clause" }) || ".";
      writeErr(`Error: ${what} '${command}'${hint} Run '${oamHelpLine("--help")}'. [usage]\n`);
      return 2;
    }
    return await run(rest);
  } catch (error) {
    return reportError(error, { mode: "human", style: stderrStyle() });
  }
}
