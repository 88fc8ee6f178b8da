/**
 * Subcommand dispatch of `oam`.
 * @module
 */
import { SERVER_INFO } from "../engine/engine.ts";
import { runStdio } from "./stdio.ts";
import { runRespond } from "./respond.ts";
import { runChat } from "./chat.ts";
import { runAvailable } from "./available.ts";
import { runNpc } from "./npc.ts";
import { runSchema } from "./schema_convert.ts";
import { runTools } from "./tools_validate.ts";

/** Top-level help. */
export const MAIN_HELP = `oam ${SERVER_INFO.version} — drive LLM agents with real tool calls from game engines

Usage: oam <command> [options]

Commands:
  stdio        serve the JSON-RPC bridge on stdin/stdout (for engines)

Run 'oam <command> --help' for a command's options.
`;

/** A subcommand: its arguments in, exit code out. */
export type Command = (args: string[]) => Promise<number>;

/** Registered subcommands. */
export const COMMANDS: Record<string, Command> = {
  stdio: runStdio,
  respond: runRespond,
  chat: runChat,
  npc: runNpc,
  available: runAvailable,
  schema: runSchema,
  tools: runTools,
};

/** Runs `oam` with `args`; returns the exit code. Usage errors print one line on stderr and return 2. */
export async function runCli(args: string[]): Promise<number> {
  const [command, ...rest] = args;
  const out = (text: string) => Deno.stdout.write(new TextEncoder().encode(text));
  if (command === undefined || command === "-h" || command === "--help" || command === "help") {
    await out(MAIN_HELP);
    return command === undefined ? 2 : 0;
  }
  if (command === "--version" || command === "-V" || (rest.includes("--version") && command in COMMANDS)) {
    await out(`oam ${SERVER_INFO.version}\n`);
    return 0;
  }
  const run = Object.hasOwn(COMMANDS, command) ? COMMANDS[command] : undefined;
  if (!run) {
    Deno.stderr.writeSync(
      new TextEncoder().encode(`Error: unknown command '${command}'. Run 'oam --help'.\n`),
    );
    return 2;
  }
  try {
    return await run(rest);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    Deno.stderr.writeSync(new TextEncoder().encode(`Error: ${message}\n`));
    return 2;
  }
}
