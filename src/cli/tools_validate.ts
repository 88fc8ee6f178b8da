/**
 * `oam tools validate <file|->`: checks a tools file the way the bridge will read it (`tools/validate`),
 * plus the command tools' programs. Exit 2 on a bad schema, duplicate names or a missing command.
 * @module
 */
import type { JsonObject, JsonValue } from "../protocol/json.ts";
import { boolFlag, parseFlags, wantsHelp } from "./args.ts";
import { CliError, EXIT, type OutputMode, reportError } from "./cli_error.ts";
import { oamHelpLine } from "./invocation.ts";
import { commandArgv, findProgram, notExecutableProblem } from "./command_tools.ts";
import { LocalBridge } from "./local_bridge.ts";
import {
  type CommandSpec,
  type LoadedTools,
  loadToolsFile,
  toolsProblemInFile,
  toolWarningInFile,
  unknownToolKeyWarning,
} from "./tools_file.ts";
import { stderrStyle, stdoutStyle, writeErr, writeOut } from "./tty.ts";

/** Help text of `oam tools`. */
export const TOOLS_HELP = `oam tools validate — check a tools file

Usage: oam tools validate [options] <file|->

A tools file is JSON or JSONC: an array of tool definitions or {"tools": [...]} (bare or OpenAI
{"type":"function","function":{…}} form). An "x-oam" block makes a command tool that oam runs itself:
  "x-oam": {"command": ["./weather.sh"] or "shell command", "timeout": 30, "cwd": ".", "env": {},
            "maxOutputChars": 8000}
The arguments arrive as JSON on stdin and in $OAM_TOOL_ARGUMENTS ($OAM_TOOL_NAME, $OAM_TOOL_CALL_ID too);
stdout is the output. Relative program paths and cwd resolve against the tools file's directory.

Options:
  --json          print {"tools": [{"name", "kind", "argv"?, "cwd"?, "timeout"?, "warnings",
                  "generationSchema"}], "warnings"} on one line
  -v, --verbose   also print each tool's generation schema
  -h, --help      show this help

Exit codes: 0 valid, 2 invalid (bad schema, duplicate names, missing command, a missing or malformed
file, usage), 1 any other failure.

Example:
  oam tools validate tools.json
`;

const FLAGS = {
  json: { type: "boolean" },
  verbose: { type: "boolean", short: "v" },
  help: { type: "boolean", short: "h" },
} as const;

/** Runs `oam tools <subcommand>`; resolves with the exit code. */
export async function runTools(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === undefined) {
    writeErr(TOOLS_HELP); // no subcommand: a usage error, so the help goes to stderr
    return EXIT.usage;
  }
  if (sub === "-h" || sub === "--help" || sub === "help") {
    writeOut(TOOLS_HELP);
    return EXIT.ok;
  }
  if (sub !== "validate") {
    return reportError(
      CliError.usage(`Unknown subcommand 'tools ${sub}'; try '${oamHelpLine("tools validate")}'.`),
      {
        mode: "human",
        style: stderrStyle(),
      },
    );
  }
  return await runToolsValidate(rest);
}

/** Runs `oam tools validate`. */
export async function runToolsValidate(args: string[]): Promise<number> {
  if (wantsHelp(args)) {
    writeOut(TOOLS_HELP);
    return EXIT.ok;
  }
  const mode: OutputMode = args.includes("--json") ? "json" : "human";
  try {
    const { values, positionals } = parseFlags(args, {
      command: "tools validate",
      flags: FLAGS,
      positionals: true,
    });
    if (positionals.length !== 1) {
      throw CliError.usage("oam tools validate needs exactly one tools file (or '-' for stdin).");
    }
    const loaded = await loadToolsFile(positionals[0], { argument: true });
    const bridge = new LocalBridge({});
    const result = await bridge.call("tools/validate", { tools: loaded.definitions }).catch((error) => {
      throw toolsProblemInFile(error, loaded);
    }) as JsonObject;
    const validated = Array.isArray(result.tools) ? result.tools as JsonObject[] : [];
    const { tools, problems } = await describeTools(loaded, validated);
    const warnings = Array.isArray(result.warnings) ? result.warnings.map(String) : [];
    if (problems.length > 0) throw CliError.invalidInput(problems.join(" "));
    if (boolFlag(values, "json")) {
      writeOut(`${JSON.stringify({ tools, warnings })}\n`);
      return EXIT.ok;
    }
    printTools(tools, { loaded, warnings, verbose: boolFlag(values, "verbose") });
    return EXIT.ok;
  } catch (error) {
    return reportError(error, { mode, style: stderrStyle() });
  }
}

/**
 * Each tool the bridge validated as the command reports it (`{name, kind, argv | shell, cwd, timeout, warnings,
 * generationSchema}`), and the problems of the command tools' programs (not found, not executable).
 */
async function describeTools(
  loaded: LoadedTools,
  validated: JsonObject[],
): Promise<{ tools: JsonObject[]; problems: string[] }> {
  const problems: string[] = [];
  const tools: JsonObject[] = [];
  for (const [i, t] of validated.entries()) {
    const name = String(t.name);
    const entry: JsonObject = { name, kind: "client" };
    const spec = loaded.commands.get(name);
    if (spec) {
      const problem = await describeCommand(entry, spec);
      if (problem !== null) problems.push(`${definitionLabel(loaded, i)} '${name}': ${problem}.`);
    }
    // A key the bridge ignores (a misspelt "paramters") first: it changes what the tool is.
    const unknown = loaded.unknownKeys.filter((u) => u.index === i).map((u) => unknownToolKeyWarning(u));
    entry.warnings = [...unknown, ...(Array.isArray(t.warnings) ? t.warnings : [])];
    entry.generationSchema = t.generationSchema ?? null;
    tools.push(entry);
  }
  return { tools, problems };
}

/** A definition as the problems name it: its file, and its index there. */
function definitionLabel(loaded: LoadedTools, i: number): string {
  const origin = loaded.origins[i];
  return origin === undefined ? `tools[${i}]` : `${origin.label}: tools[${origin.index}]`;
}

/** Fills in a command tool's entry; the problem of its program (not found, not executable), or null. */
async function describeCommand(entry: JsonObject, spec: CommandSpec): Promise<string | null> {
  entry.kind = "command";
  const argv = commandArgv(spec);
  if (spec.argv) entry.argv = argv;
  else entry.shell = spec.shell;
  if (spec.cwd) entry.cwd = spec.cwd;
  entry.timeout = spec.timeoutSeconds;
  if (!spec.argv) return null;
  if (await findProgram(argv[0]) === null) {
    return `command '${spec.argv[0]}' was not found${
      spec.argv[0].includes("/") ? ` (looked at ${argv[0]})` : " on PATH"
    }`;
  }
  const problem = await notExecutableProblem(argv[0]);
  return problem === null ? null : `command '${spec.argv[0]}' ${problem}`;
}

/** Prints the tools for a person: each with how it runs and its warnings, then the file's, then the count. */
function printTools(
  tools: JsonObject[],
  options: { loaded: LoadedTools; warnings: string[]; verbose: boolean },
): void {
  const { loaded, warnings, verbose } = options;
  const s = stdoutStyle();
  for (const [index, t] of tools.entries()) {
    const how = t.kind === "command"
      ? `command ${t.argv ? (t.argv as JsonValue[]).join(" ") : `sh -c ${JSON.stringify(t.shell)}`}` +
        `${t.cwd ? ` (in ${t.cwd})` : ""}, timeout ${t.timeout}s`
      : "client (answered by you or your engine)";
    writeOut(`${s.green("✓")} ${s.bold(String(t.name))} ${s.dim(how)}\n`);
    // The tool's own warnings (no description) and its schema's: the bridge lists them all under its name.
    // A schema's names the place in the file, with its line, as a refusal does.
    for (const u of loaded.unknownKeys.filter((u) => u.index === index)) {
      writeOut(`    ${s.yellow("warning:")} ${unknownToolKeyWarning(u)}\n`);
    }
    const prefix = `${t.name}: `;
    for (const w of warnings.filter((w) => w.startsWith(prefix))) {
      const inFile = toolWarningInFile(w.slice(prefix.length), { tools: loaded, index });
      writeOut(`    ${s.yellow("warning:")} ${inFile}\n`);
    }
    if (verbose) writeOut(`${JSON.stringify(t.generationSchema, null, 2).replace(/^/gm, "    ")}\n`);
  }
  const general = warnings.filter((w) => !tools.some((t) => w.startsWith(`${t.name}: `)));
  for (const w of general) writeOut(`${s.yellow("warning:")} ${w}\n`);
  writeOut(`${tools.length} tool${tools.length === 1 ? "" : "s"} OK.\n`);
}
