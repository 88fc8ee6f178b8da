/**
 * `oam stdio`: the JSON-RPC bridge over stdin/stdout.
 * @module
 */
import { BridgeEngine } from "../composition.ts";
import type { BridgeConfiguration } from "../engine/configuration.ts";
import { stderrLogger } from "../util/logger.ts";
import { createStdioServer } from "../transports/stdio.ts";
import { hostModelFromEnvironment } from "./host_model.ts";
import {
  boolFlag,
  type FlagSpec,
  intFlag,
  logLevelFlag,
  numberFlag,
  parseFlags,
  stringFlag,
} from "./args.ts";
import { onParentExit, onStopSignals } from "./stop_signals.ts";
import { CliError, reportError } from "./cli_error.ts";
import { oamHelpLine } from "./invocation.ts";
import { stdioNetAccessAdvice } from "./local_bridge.ts";
import { isTerminal, stderrStyle, writeErr } from "./tty.ts";

/** Help text of `oam stdio`. */
export const STDIO_HELP = `oam stdio — serve the open-apple-models JSON-RPC bridge on stdin/stdout

Usage: oam stdio [options]

Reads one JSON-RPC 2.0 message per line on stdin and writes one per line on stdout. Logs go to stderr
(and, when stdin is a terminal, a line saying what it waits for). At end of input it answers every
request already read, then exits 0; a "shutdown" request exits 0 after its response.

Options:
  --max-sessions <n>      maximum concurrent sessions (default 64)
  --tool-timeout <s>      seconds the engine has to answer a tool/call (default 120; 0 = forever)
  --log-level <level>     debug | info | warning | error | off (default warning)
  --max-line-bytes <n>    longest accepted input line in bytes (default 16777216)
  --model <spec>          host default for "system": openai:<baseURL>#<model>, or gguf:<path|cached name>
                          for a GGUF file run in-process (needs --allow-read --allow-env --allow-sys
                          --allow-ffi --allow-run, the whole --allow-env, and --no-lock); system for the
                          on-device model even when OAM_SCRIPT or OAM_MODEL is set
  --no-scripted-models    reject {"type": "scripted"} models
  --version               print the version
  -h, --help              show this help

Environment:
  OAM_SCRIPT=<file>       every "system" session plays this scripted model (JSON array or {steps,
                          fallback}; --model wins over it)
  OAM_MODEL=<spec>        default for --model (OAM_SCRIPT wins over it)
  OAM_FM_LIBRARY=<path>   FoundationModels plugin to load for the system model
  OAM_EXIT_WITH_PARENT=1  when the process that started the bridge exits (is killed, crashes), stop as on
                          SIGTERM: cancel what is in flight, flush, exit 0 (Linux and macOS; the engine
                          bindings set it)

Exit codes: 0 the input ended or a "shutdown" request came (every request read is answered), or SIGINT or
SIGTERM (what is in flight is cancelled); 2 usage or invalid input (a bad flag, an OAM_SCRIPT file that is
missing or malformed); 1 any other failure.

Example:
  echo '{"jsonrpc":"2.0","id":1,"method":"ping"}' | oam stdio
`;

/** The line `oam stdio` writes on stderr when stdin is a terminal: a person started it, not a game engine. */
const TERMINAL_HINT =
  "oam stdio: the JSON-RPC bridge for game engines, waiting for one request per line on " +
  "stdin (Ctrl-D ends it). To talk to the model yourself: 'oam chat', 'oam npc <persona.jsonc>', 'oam --help'.";

const FLAGS: FlagSpec = {
  "max-sessions": { type: "string" },
  "tool-timeout": { type: "string" },
  "log-level": { type: "string" },
  "max-line-bytes": { type: "string" },
  "model": { type: "string" },
  "scripted-models": { type: "boolean" },
  "version": { type: "boolean" },
  "help": { type: "boolean", short: "h" },
};

/** A usage error of `oam stdio`, with the help hint the other commands give. */
function usage(message: string): CliError {
  return CliError.usage(`${message} Run '${oamHelpLine("stdio --help")}'.`);
}

/**
 * Runs `oam stdio` with the arguments after the subcommand; resolves with the exit code. Usage errors print
 * one line, `Error: <message> Run 'oam stdio --help'. [usage]` (in the repository's folder the command that runs
 * oam there: `deno task oam stdio --help`), and exit 2.
 */
export async function runStdio(args: string[]): Promise<number> {
  let config: Partial<BridgeConfiguration>;
  let logger: ReturnType<typeof stderrLogger>;
  let maxLineBytes: number | undefined;
  try {
    const { values } = parseFlags(args, { command: "stdio", flags: FLAGS, positionals: false });
    if (boolFlag(values, "help")) {
      await write(STDIO_HELP);
      return 0;
    }
    const flag = <T>(read: () => T): T => {
      try {
        return read();
      } catch (error) {
        throw error instanceof CliError ? usage(error.message) : error;
      }
    };
    logger = stderrLogger(flag(() => logLevelFlag(values, "warning")), "oam stdio");
    const toolTimeout = flag(() => numberFlag(values, { name: "tool-timeout", min: 0, max: 86400 }));
    // An openai model this process may not reach says how to run the bridge with that access.
    config = { logger, netAccessAdvice: (host) => stdioNetAccessAdvice(host) };
    const maxSessions = flag(() => intFlag(values, { name: "max-sessions", min: 1 }));
    if (maxSessions !== undefined) config.maxSessions = maxSessions;
    if (toolTimeout !== undefined) config.toolTimeoutSeconds = toolTimeout;
    if (values["scripted-models"] === false) config.allowsScriptedModels = false;
    maxLineBytes = flag(() => intFlag(values, { name: "max-line-bytes", min: 1024 }));
    let hostModel;
    try {
      // The script's unknown members are logged like the bridge's other warnings.
      hostModel = await hostModelFromEnvironment(stringFlag(values, "model"), {
        warn: (m) => logger.warning(m),
        netAccessAdvice: (host) => stdioNetAccessAdvice(host),
      });
    } catch (error) {
      // A bad --model is a usage error; a bad OAM_SCRIPT or OAM_MODEL says which (invalid input).
      if (error instanceof CliError && error.code !== "usage") throw error;
      throw usage(error instanceof Error ? error.message : String(error));
    }
    if (hostModel) config.systemModel = hostModel;
  } catch (error) {
    return reportError(error, { mode: "human", style: stderrStyle() });
  }
  // Started by hand at a terminal (an engine gives it a pipe): say what it waits for, on stderr.
  if (isTerminal(Deno.stdin)) writeErr(`${stderrStyle().dim(TERMINAL_HINT)}\n`);
  const server = createStdioServer(
    (send, onShutdown) => new BridgeEngine({ ...config, onShutdown }, send),
    { logger, ...(maxLineBytes ? { maxLineBytes } : {}) },
  );
  const removeSignalListeners = onStopSignals(() => server.stop());
  // OAM_EXIT_WITH_PARENT=1: the engine that started the bridge was killed or crashed; nobody will read the
  // answers, so stop as on SIGTERM instead of finishing turns for up to the end-of-input grace.
  const stopWatchingParent = onParentExit(() => {
    logger.info("The process that started the bridge has exited (OAM_EXIT_WITH_PARENT=1); stopping.");
    server.stop();
  }, { warn: (m) => logger.warning(m) });
  const code = await server.run();
  removeSignalListeners();
  stopWatchingParent();
  return code;
}

async function write(text: string): Promise<void> {
  await Deno.stdout.write(new TextEncoder().encode(text));
}
