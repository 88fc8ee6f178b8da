/**
 * `oam serve`: the OpenAI-compatible Chat Completions server with real tool calls, and the bridge protocol
 * over WebSocket at `/rpc`.
 * @module
 */
import { resolve } from "node:path";
import { parseToolDefinitions } from "../agent/tool_definitions.ts";
import type { AgentTool } from "../agent/types.ts";
import { BridgeError } from "../protocol/errors.ts";
import type { LanguageModel } from "../models/language_model.ts";
import { createSystemModel } from "../models/system.ts";
import { OpenAIServer } from "../serve/openai_server.ts";
import { DEFAULT_PORT, SERVE_DEFAULTS, type ServeConfiguration } from "../serve/server_config.ts";
import { isLoopbackAddress } from "../serve/http_guard.ts";
import { stderrLogger } from "../util/logger.ts";
import {
  intFlag,
  listFlag,
  logLevelFlag,
  numberFlag,
  type ParsedFlags,
  parseFlags,
  stringFlag,
} from "./args.ts";
import { CliError, EXIT } from "./cli_error.ts";
import { runSubcommand } from "./subcommand.ts";
import { inRepository, shellWord } from "./invocation.ts";
import { refuseCommandsWithoutRun, refuseMissingPrograms, runCommandTool } from "./command_tools.ts";
import {
  availabilityOf,
  MODEL_FLAGS_HELP,
  type ModelChoice,
  resolveModelChoice,
  unavailableMessage,
} from "./local_bridge.ts";
import { onStopSignals } from "./stop_signals.ts";
import { loadToolsFile, toolName, toolsProblemInFile, unknownToolKeyWarnings } from "./tools_file.ts";
import { envVar } from "../util/env.ts";
import { writeErr, writeOut } from "./tty.ts";

/** Help text of `oam serve`. */
export const SERVE_HELP = `oam serve — an OpenAI-compatible Chat Completions server with real tool calls

Usage: oam serve [options]

Requests with "tools" get finish_reason "tool_calls" with the calls; send the results back as
"tool" messages (the standard OpenAI tool loop). tool_choice "required" and a named function work,
as do json_schema responses and streaming. The same server speaks the bridge's JSON-RPC protocol
over WebSocket at /rpc (one message per text frame), for browser games and other socket clients.

Endpoints:
  POST /v1/chat/completions   GET /v1/models   GET /health   GET /rpc (WebSocket)

Options:
  --host <addr>           address to bind (default 127.0.0.1; another address needs --api-key)
  --port <n>              TCP port (default ${DEFAULT_PORT}; 0 picks a free one; none with --socket alone)
  --socket <path>         also (or, without --port, only) listen on this Unix domain socket
  --api-key <key>         require 'Authorization: Bearer <key>' (default: $OAM_API_KEY)
  --allow-origin <o>      browser origin allowed to call the server, or '*' (repeatable)
  --allow-host <name>     host name served besides localhost on a loopback bind, or '*' (repeatable)
  --model-alias <a=m>     extra model id for a served model, e.g. gpt-4o-mini=system (repeatable)
  --tools <file>          command tools ("x-oam") the server runs itself; clients never see them
  -i, --instructions <t>  instructions put before every request's system messages
  --max-concurrent <n>    completions generated at once (default ${SERVE_DEFAULTS.maxConcurrentRequests}); others queue
  --max-queued <n>        completions waiting for a slot (default ${SERVE_DEFAULTS.maxQueuedRequests}); more get 429
  --timeout <s>           time limit per completion in seconds, body and queueing included (default 120)
  --max-body-bytes <n>    largest request body (default ${SERVE_DEFAULTS.maxRequestBodyBytes}); larger is 413
  --no-rpc                do not serve the WebSocket bridge at /rpc
  --tool-timeout <s>      /rpc: seconds a client has to answer a tool/call (default 120; 0 = forever)
  --max-sessions <n>      /rpc: sessions per connection (default 64)
  --max-connections <n>   /rpc: WebSocket connections open at once (default ${SERVE_DEFAULTS.rpcMaxConnections}); more get 503
  --log-level <level>     debug | info | warning | error | off (default info; logs go to stderr)
${MODEL_FLAGS_HELP}
  -h, --help              show this help

Environment:
  OAM_API_KEY=<key>       API key when --api-key is not given
  OAM_SCRIPT=<file>       the served model plays this scripted model (like --script)
  OAM_MODEL=<spec>        default for --model (OAM_SCRIPT wins over it)

Permissions (deno run): --allow-net=<host>:<port> (the bind address),
--allow-env=OAM_API_KEY,OAM_SCRIPT,OAM_MODEL (plus OAM_FM_LIBRARY), --allow-read (the plugin, a script, a
tools file), --allow-ffi (the on-device model); --allow-run only with --tools; --allow-write only with
--socket.

Exit codes: 0 stopped (Ctrl-C, SIGTERM), 1 it could not start (server_start_failed: the port is in use or
not allowed) or another failure, 2 usage or invalid input (a bad flag, a tools file or script it refuses).

Examples:
  oam serve
  oam serve --port 0 --tools server-tools.json --model-alias gpt-4o-mini=system
  oam serve --socket ./oam.sock
  OAM_API_KEY=secret oam serve --host 0.0.0.0
`;

/** Server tools of a tools file: every definition must be a command tool (`x-oam`). */
async function serverTools(path: string): Promise<AgentTool[]> {
  const loaded = await loadToolsFile(path);
  for (const warning of unknownToolKeyWarnings(loaded)) writeErr(`warning: ${warning}\n`);
  for (const def of loaded.raw) {
    const name = toolName(def);
    if (!loaded.commands.has(name)) {
      throw CliError.invalidInput(
        `${path}: server tool '${name}' has no "x-oam" command. Server tools run in the server; client tools arrive in each request's "tools".`,
      );
    }
  }
  try {
    refuseCommandsWithoutRun(loaded.commands);
  } catch (error) {
    // The `serve` task grants no --allow-run; the task that does is the one to name.
    if (!(error instanceof CliError) || !inRepository()) throw error;
    throw CliError.usage(
      `${error.message} In this repository 'deno task oam:local serve …' grants it ('deno task serve' does not).`,
    );
  }
  await refuseMissingPrograms(loaded.commands);
  let parsed;
  try {
    parsed = parseToolDefinitions(loaded.definitions, { path: "tools", defaultTimeoutMs: null });
  } catch (error) {
    if (!(error instanceof BridgeError)) throw error;
    // Worded for the file (its place and line) when it is a tool's problem; any other names the file.
    const worded = toolsProblemInFile(error, loaded);
    throw CliError.invalidInput(worded === error ? `${path}: ${error.message}` : (worded as Error).message);
  }
  for (const warning of parsed.warnings) writeErr(`warning: ${path}: ${warning}\n`);
  return parsed.tools.map((tool): AgentTool => {
    const spec = loaded.commands.get(tool.name)!;
    return {
      ...tool,
      execution: "local",
      // The command's own timeout (SIGTERM, then SIGKILL) ends it first; this bounds a stuck pipe.
      timeoutMs: (spec.timeoutSeconds + 5) * 1000,
      run: (args, context) =>
        runCommandTool(spec, {
          name: tool.name,
          call: { id: context.call.id, arguments: args },
          signal: context.signal,
        }),
    };
  });
}

function aliases(entries: string[], served: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const entry of entries) {
    const eq = entry.indexOf("=");
    if (eq <= 0 || eq === entry.length - 1) {
      throw CliError.usage(`--model-alias expects alias=model; got '${entry}'.`);
    }
    const target = entry.slice(eq + 1);
    if (target !== served) {
      throw CliError.usage(`--model-alias: unknown model '${target}'; the served model is '${served}'.`);
    }
    out.set(entry.slice(0, eq), target);
  }
  return out;
}

/** The banner: where the server listens, a ready-to-paste curl and the SDK base URL. */
export function banner(options: {
  host: string;
  port: number | null;
  socket: string | null;
  model: string;
  apiKey: boolean;
  /** The key came from `--api-key`, not `OAM_API_KEY`: the banner cannot say `$OAM_API_KEY` (and never shows it). */
  apiKeyFromFlag?: boolean;
  rpc: boolean;
  tools: string[];
  /** `--allow-origin` values: the browser pages that may use `/rpc` (the banner says so, or how to allow one). */
  allowedOrigins: string[];
}): string {
  const host = options.host.includes(":") ? `[${options.host}]` : options.host;
  const base = options.port === null ? null : `http://${host}:${options.port}`;
  const lines: string[] = [];
  if (base) lines.push(`oam serve listening on ${base}/v1  (model: ${options.model})`);
  if (options.socket) lines.push(`oam serve listening on unix:${options.socket}  (model: ${options.model})`);
  if (options.rpc && base) {
    lines.push(`bridge protocol over WebSocket: ws://${host}:${options.port}/rpc`);
    const origins = options.allowedOrigins;
    lines.push(
      origins.length === 0
        ? "  browser pages: none allowed; start with --allow-origin <the page's origin> (e.g. http://localhost:5173)"
        : `  browser pages allowed from: ${origins.includes("*") ? "any origin (*)" : origins.join(", ")}`,
    );
  }
  if (options.tools.length > 0) lines.push(`server tools: ${options.tools.join(", ")}`);
  const target = base
    ? `${base}/v1/chat/completions`
    : `--unix-socket ${shellWord(options.socket ?? "")} http://localhost/v1/chat/completions`;
  const key = options.apiKeyFromFlag ? "<the --api-key value>" : "$OAM_API_KEY";
  const auth = options.apiKey ? ` \\\n    -H "Authorization: Bearer ${key}"` : "";
  lines.push(
    "",
    "Try it:",
    `  curl ${target} \\`,
    `    -H 'Content-Type: application/json'${auth} \\`,
    `    -d '{"model": "system", "tool_choice": "required",`,
    `         "messages": [{"role": "user", "content": "What is the weather in Paris?"}],`,
    `         "tools": [{"type": "function", "function": {"name": "get_weather",`,
    `           "description": "Current weather for a city",`,
    `           "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]}'`,
    "",
    `Any OpenAI SDK works: base_url=${base ? `${base}/v1` : "(unix socket)"}, api_key=${
      options.apiKey ? key : "anything"
    }, model="system".`,
    "Press Ctrl-C to stop.",
    "",
  );
  return lines.join("\n");
}

/** `path` made absolute and clean (`./oam.sock` in /srv is `/srv/oam.sock`, not `/srv/./oam.sock`). */
function absolute(path: string): string {
  return resolve(path);
}

/** Runs `oam serve` with the arguments after the subcommand; resolves with the exit code. */
export function runServe(args: string[]): Promise<number> {
  return runSubcommand(args, { help: SERVE_HELP, run: () => serve(args) });
}

/** The flags of `oam serve` (see {@link SERVE_HELP}). */
const SERVE_FLAGS = {
  host: { type: "string" },
  port: { type: "string" },
  socket: { type: "string" },
  "api-key": { type: "string" },
  "allow-origin": { type: "string", multiple: true },
  "allow-host": { type: "string", multiple: true },
  "model-alias": { type: "string", multiple: true },
  tools: { type: "string" },
  instructions: { type: "string", short: "i" },
  "max-concurrent": { type: "string" },
  "max-queued": { type: "string" },
  timeout: { type: "string" },
  "max-body-bytes": { type: "string" },
  rpc: { type: "boolean" },
  "tool-timeout": { type: "string" },
  "max-sessions": { type: "string" },
  "max-connections": { type: "string" },
  "log-level": { type: "string" },
  model: { type: "string" },
  script: { type: "string" },
  help: { type: "boolean", short: "h" },
} as const;

/**
 * What to tell the operator about `--allow-origin` values: `*` without an API key (any page in a browser on
 * this machine may then drive the model and the server's tools), `null` (any site can send it), and a value
 * no browser sends (a path, a default port, capitals), which silently matches nothing.
 */
export function originWarnings(allowedOrigins: string[], apiKey: boolean): string[] {
  const warnings: string[] = [];
  for (const origin of allowedOrigins) {
    if (origin === "*") {
      if (!apiKey) {
        warnings.push(
          "--allow-origin * without an API key: any web page open in a browser on this machine can use this " +
            "server (its model and its --tools). Allow the game's own origin, or set --api-key.",
        );
      }
      continue;
    }
    if (origin === "null") {
      warnings.push(
        "--allow-origin null: sandboxed frames and local files of any site send 'null', so this allows them " +
          "all. Serve the page from an http(s) origin and allow that one.",
      );
      continue;
    }
    let serialized: string | null = null;
    try {
      const url = new URL(origin);
      if (url.origin !== "null") serialized = url.origin;
    } catch {
      // not a URL at all
    }
    if (serialized !== origin) {
      warnings.push(
        `--allow-origin ${origin} matches no page: ${
          serialized === null
            ? "an origin is scheme://host[:port], e.g. http://localhost:5173"
            : `a browser sends ${serialized}`
        }.`,
      );
    }
  }
  return warnings;
}

/**
 * Why the listener could not start, with the address it tried and what to do: a busy port names another
 * one; a missing net grant names the flag (the `serve` task grants its default address only).
 */
function startFailure(error: unknown, config: ServeConfiguration): string {
  const detail = error instanceof Error ? error.message : String(error);
  const host = config.host.includes(":") ? `[${config.host}]` : config.host;
  const tcp = config.port === null ? null : `${host}:${config.port}`;
  let hint = "";
  const socket = config.socketPath;
  if (
    socket !== null && error instanceof Deno.errors.NotCapable &&
    (detail.includes("unix:") || detail.includes(socket))
  ) {
    const grants = `--allow-net=unix:${socket} --allow-write=${socket}`;
    hint = ` (a Unix socket needs ${grants}, which no task grants: deno run ${grants} [your other flags] ` +
      `cli.ts serve --socket ${socket})`;
  } else if (tcp !== null && error instanceof Deno.errors.AddrInUse) {
    // `deno task serve` grants its one port: another would be refused for lack of a grant.
    const anyPort = Deno.permissions.querySync({ name: "net", host: `${host}:0` }).state === "granted";
    hint = " (another program listens there: use another --port, or --port 0 for a free one" +
      (anyPort ? ")" : `; this process may listen on ${tcp} only, so grant the new one: ` +
        `deno run --allow-net=${host}:0 [your other flags] cli.ts serve --port 0)`);
  } else if (tcp !== null && error instanceof Deno.errors.NotCapable && detail.includes("net access")) {
    // The task that grants every port of this machine's loopback addresses, or the grant for this address.
    const grant = `deno run --allow-net=${tcp} [your other flags] cli.ts serve --port ${config.port}`;
    hint = ["127.0.0.1", "localhost", "[::1]"].includes(host)
      ? ` (\`deno task serve\` grants 127.0.0.1:${DEFAULT_PORT} only: for another port on this machine use ` +
        `'deno task oam:local serve --port ${config.port} …', else grant this one: ${grant})`
      : ` (grant it with --allow-net=${tcp}: ${grant}; \`deno task serve\` grants 127.0.0.1:${DEFAULT_PORT} only)`;
  }
  const where = tcp ?? `unix:${config.socketPath}`;
  return `The server could not start on ${where}: ${detail}${hint}`;
}

async function serve(args: string[]): Promise<number> {
  const { values } = parseFlags(args, { command: "serve", flags: SERVE_FLAGS, positionals: false });
  const { config, model, choice } = await serveConfiguration(values);
  const server = new OpenAIServer(config);
  try {
    await server.start();
  } catch (error) {
    throw new CliError("server_start_failed", startFailure(error, server.configuration), {}, EXIT.failure);
  }
  const removeSignalListeners = onStopSignals(() => void server.stop());
  writeOut(banner({
    host: config.host,
    port: server.port,
    socket: config.socketPath ?? null,
    model: choice.name === "system" ? "system" : `system = ${choice.label}`,
    apiKey: config.apiKey !== null,
    apiKeyFromFlag: stringFlag(values, "api-key") !== undefined,
    rpc: config.rpc !== null,
    tools: config.serverTools.map((t) => t.name),
    allowedOrigins: server.configuration.allowedOrigins,
  }));
  for (const warning of originWarnings(config.allowedOrigins ?? [], config.apiKey !== null)) {
    writeErr(`warning: ${warning}\n`);
  }
  const availability = await availabilityOf(model);
  if (!availability.available) {
    // A permanent reason (a permission this process lacks, …) is not cured by waiting, only by a restart.
    const until = availability.permanent === true
      ? "Waiting cannot make it available: completions answer 503 until the server is started again with what it lacks."
      : "Completions answer 503 until it is available.";
    writeErr(
      `warning: ${
        unavailableMessage(availability.reason ?? "unknown", { detail: availability.detail, choice })
      } ${until}\n`,
    );
  }
  await server.stopped;
  removeSignalListeners();
  return EXIT.ok;
}

/** The server's configuration from the flags, with the model it serves and how that model was chosen. */
async function serveConfiguration(values: ParsedFlags["values"]): Promise<{
  config:
    & Partial<ServeConfiguration>
    & Pick<ServeConfiguration, "host" | "socketPath" | "apiKey" | "rpc" | "serverTools">;
  model: LanguageModel;
  choice: ModelChoice;
}> {
  const logger = stderrLogger(logLevelFlag(values, "info"), "oam serve");
  const host = stringFlag(values, "host") ?? SERVE_DEFAULTS.host;
  const socket = stringFlag(values, "socket");
  const portFlag = intFlag(values, { name: "port", min: 0, max: 65535 });
  const port = portFlag ?? (socket !== undefined ? null : DEFAULT_PORT);
  const keyFlag = stringFlag(values, "api-key");
  const apiKey = keyFlag !== undefined ? keyFlag : envVar("OAM_API_KEY") ?? "";
  if (port !== null && !isLoopbackAddress(host) && apiKey === "") {
    throw CliError.usage(
      `--host ${host} makes the server reachable from the network: set --api-key (or OAM_API_KEY) as well.`,
    );
  }
  const timeout = numberFlag(values, { name: "timeout", min: 0.001, max: 86400 }) ?? 120;
  const toolTimeout = numberFlag(values, { name: "tool-timeout", min: 0, max: 86400 });
  const maxSessions = intFlag(values, { name: "max-sessions", min: 1 });
  const maxConnections = intFlag(values, { name: "max-connections", min: 1 });
  const choice = await resolveModelChoice({
    model: stringFlag(values, "model"),
    script: stringFlag(values, "script"),
  });
  const systemModel = choice.config.systemModel;
  const model = systemModel ? systemModel() : createSystemModel();
  const toolsPath = stringFlag(values, "tools");
  const tools = toolsPath === undefined ? [] : await serverTools(toolsPath);
  const rpc: ServeConfiguration["rpc"] = values.rpc === false ? null : {
    engine: {
      logger,
      ...(systemModel ? { systemModel } : {}),
      ...(toolTimeout !== undefined ? { toolTimeoutSeconds: toolTimeout } : {}),
      ...(maxSessions !== undefined ? { maxSessions } : {}),
    },
    maxConnections: maxConnections ?? SERVE_DEFAULTS.rpcMaxConnections,
    maxMessageBytes: SERVE_DEFAULTS.rpcMaxMessageBytes,
  };
  const config = {
    host,
    port,
    socketPath: socket === undefined ? null : absolute(socket),
    models: new Map([["system", model]]),
    modelAliases: aliases(listFlag(values, "model-alias"), "system"),
    serverTools: tools,
    serverInstructions: stringFlag(values, "instructions") ?? null,
    apiKey: apiKey === "" ? null : apiKey,
    allowedOrigins: listFlag(values, "allow-origin"),
    allowedHosts: listFlag(values, "allow-host").map((h) => h.toLowerCase()),
    maxConcurrentRequests: intFlag(values, { name: "max-concurrent", min: 1 }),
    maxQueuedRequests: intFlag(values, { name: "max-queued", min: 0 }),
    requestTimeoutMs: Math.round(timeout * 1000),
    maxRequestBodyBytes: intFlag(values, { name: "max-body-bytes", min: 1024 }),
    rpc,
    logger,
  } satisfies Partial<ServeConfiguration>;
  return { config, model, choice };
}
