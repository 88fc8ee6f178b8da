/**
 * `oam playground`: the NPC playground, a web page where a designer writes a persona and talks to it. It is
 * `oam serve`'s server on 127.0.0.1 with the page's routes added; the page is one more client of the bridge
 * protocol over the WebSocket at `/rpc`.
 * @module
 */
import { createSystemModel } from "../models/system.ts";
import { OpenAIServer } from "../serve/openai_server.ts";
import { playgroundPages } from "../serve/playground/site.ts";
import { SERVE_DEFAULTS } from "../serve/server_config.ts";
import { stderrLogger } from "../util/logger.ts";
import { boolFlag, intFlag, logLevelFlag, parseFlags, stringFlag } from "./args.ts";
import { onStopSignals } from "./stop_signals.ts";
import { CliError, EXIT } from "./cli_error.ts";
import { runSubcommand } from "./subcommand.ts";
import {
  availabilityOf,
  MODEL_FLAGS_HELP,
  type ModelChoice,
  resolveModelChoice,
  unavailableMessage,
} from "./local_bridge.ts";
import { writeErr, writeOut } from "./tty.ts";

/** Default port of the playground (the one after `oam serve`'s 1976). */
export const PLAYGROUND_PORT = 1977;

/** The playground only listens on the loopback address. */
const HOST = "127.0.0.1";

/** Help text of `oam playground`. */
export const PLAYGROUND_HELP = `oam playground — a web page to write an NPC persona and talk to it

Usage: oam playground [options]

Serves the NPC playground on http://${HOST}:<port>/ and prints the address. In the page: every persona
field and NPC option (with the spec's defaults and checks), the raw JSONC, client tools you answer by
hand, streaming replies with emotions, barks, memory, the world as an editable live tree, per-turn
latency and usage, the raw JSON-RPC log, and save/restore of npc/state. The page talks to the bridge
over the WebSocket at /rpc, like any other client; it reaches nothing but this server.

Options:
  --port <n>              TCP port on ${HOST} (default ${PLAYGROUND_PORT}; 0 picks a free one)
  --open                  open the page in the default browser
${MODEL_FLAGS_HELP}
                          (the page can also run NPCs on a script written in it)
  --log-level <level>     debug | info | warning | error | off (default warning; logs go to stderr)
  -h, --help              show this help

Environment:
  OAM_SCRIPT=<file>       the bridge's model plays this script (like --script)
  OAM_MODEL=<spec>        default for --model

Permissions (deno run): --allow-net=${HOST} (the listener; and a model server on it), --allow-read,
--allow-env=OAM_FM_LIBRARY,OAM_SCRIPT,OAM_MODEL, --allow-ffi (the on-device model), --allow-run only
with --open (xdg-open or open).

Exit codes: 0 stopped (Ctrl-C, SIGTERM), 1 it could not start (server_start_failed: the port is in use or
not allowed) or another failure, 2 usage or invalid input (a bad flag, a script it refuses).

Examples:
  oam playground --open   # the page's sample persona comes with its own script (Model tab)
  oam playground --port 0 --script steps.json
                          (steps.json: a script you write for your persona, e.g. [{"text": "Welcome!"}]
                          for one that replies in text; load the persona with Load file… in the page)
  oam playground --model openai:http://127.0.0.1:8080/v1#qwen
  # in a checkout: --script personas/shopkeeper.steps.json, then Load file… personas/shopkeeper.jsonc
`;

/** The command that opens `url` in the default browser on this platform. */
export function openCommand(url: string, os: string = Deno.build.os): [string, string[]] {
  if (os === "darwin") return ["open", [url]];
  if (os === "windows") return ["cmd", ["/c", "start", "", url]];
  return ["xdg-open", [url]];
}

async function openBrowser(url: string): Promise<void> {
  const [command, args] = openCommand(url);
  try {
    const child = new Deno.Command(command, { args, stdin: "null", stdout: "null", stderr: "null" }).spawn();
    const status = await child.status;
    if (!status.success) throw new Error(`${command} exited with code ${status.code}`);
  } catch (error) {
    writeErr(
      `warning: could not open a browser (${error instanceof Error ? error.message : String(error)}); ` +
        `open ${url} yourself.\n`,
    );
  }
}

function modelLabel(choice: ModelChoice): string {
  if (choice.name === "system") return "the on-device model (system)";
  return choice.name === "scripted" ? choice.label : `${choice.name}: ${choice.label}`;
}

/** Runs `oam playground` with the arguments after the subcommand; resolves with the exit code. */
export function runPlayground(args: string[]): Promise<number> {
  return runSubcommand(args, { help: PLAYGROUND_HELP, run: () => playground(args) });
}

async function playground(args: string[]): Promise<number> {
  const { values } = parseFlags(args, {
    command: "playground",
    flags: {
      port: { type: "string" },
      open: { type: "boolean" },
      model: { type: "string" },
      script: { type: "string" },
      "log-level": { type: "string" },
      help: { type: "boolean", short: "h" },
    },
    positionals: false,
  });
  const level = logLevelFlag(values, "warning");
  const logger = stderrLogger(level, "oam playground");
  const port = intFlag(values, { name: "port", min: 0, max: 65535 }) ?? PLAYGROUND_PORT;
  const choice = await resolveModelChoice({
    model: stringFlag(values, "model"),
    script: stringFlag(values, "script"),
  });
  const systemModel = choice.config.systemModel;
  const model = systemModel ? systemModel() : createSystemModel();
  const server = new OpenAIServer({
    host: HOST,
    port,
    models: new Map([["system", model]]),
    rpc: {
      engine: { logger, ...(systemModel ? { systemModel } : {}) },
      maxConnections: SERVE_DEFAULTS.rpcMaxConnections,
      maxMessageBytes: SERVE_DEFAULTS.rpcMaxMessageBytes,
    },
    pages: playgroundPages({
      name: choice.name,
      label: modelLabel(choice),
      ...(choice.script ? { script: choice.script.file } : {}),
    }),
    logger,
  });
  try {
    await server.start();
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error);
    throw new CliError(
      "server_start_failed",
      `The playground could not start on ${HOST}:${port}: ${detail}${
        error instanceof Deno.errors.AddrInUse ? " (use --port 0 for a free port)" : ""
      }`,
      {},
      EXIT.failure,
    );
  }
  const removeSignalListeners = onStopSignals(() => void server.stop());
  const url = `http://${HOST}:${server.port}/`;
  writeOut(`oam playground: ${url}  (model: ${modelLabel(choice)})\nPress Ctrl-C to stop.\n`);
  const availability = await availabilityOf(model);
  if (!availability.available) {
    writeErr(
      `note: ${
        unavailableMessage(availability.reason ?? "unknown", { detail: availability.detail, choice })
      } The page can still run NPCs on a script (its Model tab).\n`,
    );
  }
  if (boolFlag(values, "open")) await openBrowser(url);
  await server.stopped;
  removeSignalListeners();
  return EXIT.ok;
}
