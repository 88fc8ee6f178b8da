/**
 * Runs command tools (`"x-oam"` blocks in tools files): the arguments go to the program as JSON on stdin and
 * in `$OAM_TOOL_ARGUMENTS` (plus `$OAM_TOOL_NAME`, `$OAM_TOOL_CALL_ID`); stdout is the output (JSON when it
 * parses as an object or array); a non-zero exit is an error output that includes stderr. Needs
 * `--allow-run`.
 * @module
 */
import { compactJson, type JsonObject, type JsonValue } from "../protocol/json.ts";
import { CliError, isPermissionError } from "./cli_error.ts";
import type { CommandSpec } from "./tools_file.ts";
import { headCharacters } from "../util/text.ts";
import { envVar } from "../util/env.ts";
import { startedByDeno } from "./invocation.ts";

/** What a tool produced. */
export interface ToolAnswer {
  /** Text or JSON the model sees. */
  output: JsonValue;
  /** True for an error output. */
  isError: boolean;
}

/** Seconds between SIGTERM and SIGKILL. */
const KILL_GRACE_MS = 2000;

function resolveProgram(program: string, baseDir: string): string {
  if (!program.includes("/") || program.startsWith("/")) return program;
  return `${baseDir.replace(/\/$/, "")}/${program}`;
}

/** The program and arguments a command spec runs. */
export function commandArgv(spec: CommandSpec): string[] {
  if (spec.argv) return [resolveProgram(spec.argv[0], spec.baseDir), ...spec.argv.slice(1)];
  return Deno.build.os === "windows" ? ["cmd", "/c", spec.shell!] : ["/bin/sh", "-c", spec.shell!];
}

/** What {@link refuseCommandsWithoutRun} asks of the process: may it run a program, and was it compiled. */
export interface RunPermission {
  /** Whether `program` (as it is spawned) is granted now. */
  mayRun(program: string): boolean;
  /** Whether this is a compiled executable (its permissions were fixed when it was compiled). */
  compiled: boolean;
}

/** This process's {@link RunPermission}. */
function thisProcess(): RunPermission {
  return {
    mayRun: (program) => Deno.permissions.querySync({ name: "run", command: program }).state === "granted",
    compiled: !startedByDeno(),
  };
}

/**
 * Refuses command tools this process may not run, before any turn: a `usage` error (exit 2) naming the tool,
 * its program and the flag it needs. Without the check such a tool fails inside the answer (the model gets
 * the error as its output) while the command exits 0, and a script cannot tell. Deno could only ask at a
 * terminal, in the middle of a conversation, so a program that is not granted yet is refused too.
 *
 * @example
 * ```ts
 * import { refuseCommandsWithoutRun } from "./command_tools.ts";
 * refuseCommandsWithoutRun(new Map()); // no command tools: nothing to check
 * ```
 */
export function refuseCommandsWithoutRun(
  commands: ReadonlyMap<string, CommandSpec>,
  process: RunPermission = thisProcess(),
): void {
  for (const [name, spec] of commands) {
    const program = commandArgv(spec)[0];
    if (process.mayRun(program)) continue;
    const scoped = /^[^,\s]+$/.test(program) ? ` (or --allow-run=${program})` : "";
    throw CliError.usage(
      process.compiled
        ? `Command tool '${name}' runs '${program}', which needs --allow-run: this executable was compiled ` +
          `without it; compile it with --allow-run (deno task compile:cli does).`
        : `Command tool '${name}' runs '${program}', which needs --allow-run${scoped}: add it to the deno ` +
          `command that starts oam.`,
    );
  }
}

/**
 * Refuses, before any turn, a command tool whose program is certainly not there (argv form: a path that does
 * not exist, or a name on no folder of `PATH`) or cannot run (on POSIX, a file without an executable bit): an
 * `invalid_input` error (exit 2) saying where it was looked for, or which file to make executable. Without the
 * check the turn ran and the model got `Cannot run '…': no such program.` (or, for a file that is not
 * executable, that running command tools needs --allow-run) while the command exited 0. A shell command is the
 * shell's to find, a place that cannot be looked at (no read permission, no `PATH`) is not taken for a
 * missing program, and on Windows, where a file has no executable bit, only whether it is there is checked.
 *
 * @example
 * ```ts
 * import { refuseMissingPrograms } from "./command_tools.ts";
 * await refuseMissingPrograms(new Map()); // no command tools: nothing to check
 * ```
 */
export async function refuseMissingPrograms(commands: ReadonlyMap<string, CommandSpec>): Promise<void> {
  for (const [name, spec] of commands) {
    if (spec.argv === null) continue;
    const program = commandArgv(spec)[0];
    const problem = await programProblem(program);
    if (problem === null) continue;
    throw CliError.invalidInput(`Command tool '${name}' runs '${spec.argv[0]}', which ${problem}.`);
  }
}

/** What is at `path`: nothing, a file that may run, a file without an executable bit, or something else. */
type Found = "nothing" | "runs" | "not executable" | "unknown";

/** What is at `path` ("unknown" when it cannot be looked at, or is no file). */
async function lookAt(path: string): Promise<Found> {
  let info: Deno.FileInfo;
  try {
    info = await Deno.stat(path);
  } catch (error) {
    return error instanceof Deno.errors.NotFound ? "nothing" : "unknown";
  }
  if (!info.isFile) return "unknown";
  // Windows has no executable bit (mode is null there, and not asked): a file is taken to run.
  if (Deno.build.os === "windows" || info.mode === null) return "runs";
  return (info.mode & 0o111) !== 0 ? "runs" : "not executable";
}

/** The words for a program file at `path` that is not executable. */
function notExecutable(path: string): string {
  return `is not executable (${path}): make it executable (chmod +x ${path})`;
}

/**
 * Why the program file of a command tool cannot run, when that is because it is not executable ("is not
 * executable (/path/roll.sh): make it executable (chmod +x /path/roll.sh)"), else null (it runs, is missing,
 * or cannot be looked at; always null on Windows, which has no executable bit).
 *
 * @example
 * ```ts
 * import { notExecutableProblem } from "./command_tools.ts";
 * await notExecutableProblem("echo"); // null: found on PATH, executable
 * ```
 */
export async function notExecutableProblem(program: string): Promise<string | null> {
  const problem = await programProblem(program);
  return problem?.startsWith("is not executable") ? problem : null;
}

/** Why `program` cannot run ("was not found (looked at …)", "is not executable (…): …"), else null. */
async function programProblem(program: string): Promise<string | null> {
  if (program.includes("/") || program.includes("\\")) {
    const path = program.replaceAll("/./", "/");
    const found = await lookAt(program);
    return found === "nothing"
      ? `was not found (looked at ${path})`
      : found === "not executable"
      ? notExecutable(path)
      : null;
  }
  const path = envVar("PATH");
  if (!path || Deno.build.os === "windows") return null; // Windows also tries PATHEXT's endings
  const dirs = path.split(":").filter((dir) => dir !== "");
  // As the system looks on PATH: the first file that runs; files that cannot are passed over.
  let passedOver: string | null = null;
  for (const dir of dirs) {
    const candidate = `${dir}/${program}`;
    const found = await lookAt(candidate);
    if (found === "not executable") passedOver ??= candidate;
    else if (found !== "nothing") return null;
  }
  if (passedOver !== null) return notExecutable(passedOver);
  return dirs.length > 0 ? "was not found on PATH" : null;
}

/** Where a program would be found, or null (bare names are searched on PATH). */
export async function findProgram(program: string): Promise<string | null> {
  const candidates: string[] = [];
  if (program.includes("/") || program.includes("\\")) candidates.push(program);
  else {
    const sep = Deno.build.os === "windows" ? ";" : ":";
    for (const dir of (envVar("PATH") ?? "").split(sep)) if (dir) candidates.push(`${dir}/${program}`);
  }
  for (const c of candidates) {
    try {
      const info = await Deno.stat(c);
      if (info.isFile) return c;
    } catch {
      // try the next one
    }
  }
  return null;
}

/** Output text as the model sees it: JSON when it parses as an object or array, else the text. */
export function outputValue(text: string): JsonValue {
  const trimmed = text.trim();
  if (trimmed.startsWith("{") || trimmed.startsWith("[")) {
    try {
      return JSON.parse(trimmed);
    } catch {
      // plain text after all
    }
  }
  return text.replace(/\r?\n$/, "");
}

/** `text`, or its first `max` characters (whole characters: an emoji is not split) and a note saying so. */
function cut(text: string, max: number): string {
  const head = headCharacters(text, max);
  return head === null ? text : `${head}… (output cut at ${max} characters)`;
}

/**
 * Runs a command tool for one call.
 *
 * @example
 * ```ts
 * import { runCommandTool } from "./command_tools.ts";
 * const spec = { argv: ["echo", "hi"], shell: null, timeoutSeconds: 5, cwd: null, env: {}, maxOutputChars: 100, baseDir: "." };
 * const answer = await runCommandTool(spec, { name: "say", call: { id: "call_1", arguments: {} } });
 * // answer.output === "hi"
 * ```
 */
export async function runCommandTool(
  spec: CommandSpec,
  run: { name: string; call: { id: string; arguments: JsonObject }; signal?: AbortSignal },
): Promise<ToolAnswer> {
  const { name, call, signal } = run;
  const argv = commandArgv(spec);
  const args = compactJson(call.arguments);
  let child: Deno.ChildProcess;
  try {
    child = new Deno.Command(argv[0], {
      args: argv.slice(1),
      cwd: spec.cwd ?? undefined,
      env: { ...spec.env, OAM_TOOL_ARGUMENTS: args, OAM_TOOL_NAME: name, OAM_TOOL_CALL_ID: call.id },
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) {
      return { output: `Cannot run '${argv[0]}': no such program.`, isError: true };
    }
    // The system's refusal (a file that is not executable) is not Deno's (no --allow-run).
    if (error instanceof Deno.errors.PermissionDenied) {
      return { output: `Cannot run '${argv[0]}': permission denied (is it executable?).`, isError: true };
    }
    if (isPermissionError(error)) {
      return { output: `Running command tools needs --allow-run (tool '${name}').`, isError: true };
    }
    return { output: `Cannot run '${argv[0]}': ${(error as Error).message}`, isError: true };
  }
  let timedOut = false;
  let killTimer: ReturnType<typeof setTimeout> | undefined;
  const stop = () => {
    try {
      child.kill("SIGTERM");
    } catch {
      return; // already gone
    }
    killTimer = setTimeout(() => {
      try {
        child.kill("SIGKILL");
      } catch {
        // already gone
      }
    }, KILL_GRACE_MS);
  };
  const timer = setTimeout(() => {
    timedOut = true;
    stop();
  }, spec.timeoutSeconds * 1000);
  signal?.addEventListener("abort", stop, { once: true });
  const writer = child.stdin.getWriter();
  writer.write(new TextEncoder().encode(args)).then(() => writer.close()).catch(() => {});
  const [status, stdout, stderr] = await Promise.all([
    child.status,
    new Response(child.stdout).text(),
    new Response(child.stderr).text(),
  ]);
  clearTimeout(timer);
  if (killTimer !== undefined) clearTimeout(killTimer);
  signal?.removeEventListener("abort", stop);
  if (timedOut) {
    return { output: `Tool '${name}' timed out after ${spec.timeoutSeconds}s.`, isError: true };
  }
  if (signal?.aborted) return { output: "The tool was cancelled.", isError: true };
  if (!status.success) {
    const all = stderr.trim() || stdout.trim();
    const detail = headCharacters(all, spec.maxOutputChars) ?? all;
    const how = status.signal ? `was killed by ${status.signal}` : `exited with status ${status.code}`;
    return { output: `Command ${how}${detail ? `: ${detail}` : "."}`, isError: true };
  }
  const text = cut(stdout, spec.maxOutputChars);
  return { output: text !== stdout ? text : outputValue(text), isError: false };
}
