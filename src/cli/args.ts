/**
 * Flag parsing shared by the commands: `node:util` parseArgs with one-line usage errors, and typed readers
 * for numeric flags.
 * @module
 */
import { parseArgs, type ParseArgsConfig } from "node:util";
import { CliError } from "./cli_error.ts";
import { LOG_LEVELS, type LogLevel } from "../util/logger.ts";
import { didYouMean, nearestName } from "../protocol/edit_distance.ts";
import { oamHelpLine } from "./invocation.ts";

/** Options in the `node:util` parseArgs format. */
export type FlagSpec = NonNullable<ParseArgsConfig["options"]>;

/** Parsed flags: values by long name, and positionals. */
export interface ParsedFlags {
  /** Flag values by long name. */
  values: Record<string, string | boolean | string[] | boolean[] | undefined>;
  /** Positional arguments. */
  positionals: string[];
}

/** How {@link parseFlags} reads a command line. */
export interface FlagsSyntax {
  /** The command, as its help hint names it (`respond`, `tools validate`). */
  command: string;
  flags: FlagSpec;
  /** Whether positional arguments are allowed. */
  positionals: boolean;
}

/**
 * Parses `args` against `syntax.flags` (`--no-<flag>` negates booleans). Problems become `usage` errors that
 * name the command: "Unknown option '--foo'. Run 'oam respond --help'.", with the flag a misspelt one most
 * likely meant: "Unknown option '--jsno'; did you mean '--json'? Run 'oam respond --help'." In the
 * repository's folder the hint names the command that runs oam there (`deno task oam respond --help`).
 */
export function parseFlags(args: string[], syntax: FlagsSyntax): ParsedFlags {
  const { command, flags: options, positionals: allowPositionals } = syntax;
  try {
    const { values, positionals } = parseArgs({
      args,
      options,
      strict: true,
      allowPositionals,
      allowNegative: true,
    });
    return { values: values as ParsedFlags["values"], positionals };
  } catch (error) {
    const raw = error instanceof Error ? error.message : String(error);
    let message = raw.replace(/\. To specify a positional argument.*$/s, ".");
    message = message.replace(
      /^Option '(?:-\w, )?(--[\w-]+)(?: <value>)?' argument missing$/,
      "$1 needs a value.",
    );
    message = message.replace(
      /^Option '(?:-\w, )?(--[\w-]+)' argument is ambiguous\..*$/s,
      "$1 needs a value (write $1=<value> for a value that starts with '-').",
    );
    message = message.replace(/^Unexpected argument '(.*)'.*$/s, "Unexpected argument '$1'.");
    const unknown = /^Unknown option '--([^'=]+)'/.exec(message)?.[1];
    // `--system` is modelFromArgs's flag for the on-device model; oam's is `--model system`.
    const meant = unknown === undefined
      ? undefined
      : unknown === "system" && Object.hasOwn(options, "model")
      ? "model system"
      : nearestName(unknown, Object.keys(options));
    if (meant !== undefined) {
      message = `Unknown option '--${unknown}'${didYouMean(`--${meant}`, { as: "clause" })}`;
    }
    if (!/[.?]$/.test(message)) message += ".";
    throw CliError.usage(`${message} Run '${oamHelpLine(`${command} --help`)}'.`);
  }
}

/** A string flag value (the last one when repeated). */
export function stringFlag(values: ParsedFlags["values"], name: string): string | undefined {
  const v = values[name];
  if (Array.isArray(v)) return v.length > 0 ? String(v[v.length - 1]) : undefined;
  return typeof v === "string" ? v : undefined;
}

/** Every value of a repeatable string flag. */
export function listFlag(values: ParsedFlags["values"], name: string): string[] {
  const v = values[name];
  if (v === undefined) return [];
  return Array.isArray(v) ? v.map(String) : [String(v)];
}

/** A boolean flag (false when absent). */
export function boolFlag(values: ParsedFlags["values"], name: string): boolean {
  return values[name] === true;
}

/** A numeric flag: its name (without `--`) and its bounds. */
export interface NumericFlag {
  /** The flag's name, e.g. `max-tool-rounds`. */
  name: string;
  /** Smallest accepted value. */
  min: number;
  /** Largest accepted value (default: none for integers). */
  max?: number;
}

/** Parses the integer flag `flag.name` of `values` within its bounds; usage error otherwise. */
export function intFlag(values: ParsedFlags["values"], flag: NumericFlag): number | undefined {
  const value = stringFlag(values, flag.name);
  if (value === undefined) return undefined;
  const { min, max = Number.MAX_SAFE_INTEGER } = flag;
  const n = Number(value);
  if (value.trim() === "" || !Number.isInteger(n) || n < min || n > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? `at least ${min}` : `from ${min} to ${max}`;
    throw CliError.usage(`--${flag.name} must be an integer ${range}; got '${value}'.`);
  }
  return n;
}

/** Parses the number flag `flag.name` of `values` within its bounds; usage error otherwise. */
export function numberFlag(
  values: ParsedFlags["values"],
  flag: NumericFlag & { max: number },
): number | undefined {
  const value = stringFlag(values, flag.name);
  if (value === undefined) return undefined;
  const { min, max } = flag;
  const n = Number(value);
  if (value.trim() === "" || !Number.isFinite(n) || n < min || n > max) {
    throw CliError.usage(`--${flag.name} must be a number from ${min} to ${max}; got '${value}'.`);
  }
  return n;
}

/**
 * The `--log-level` flag of `values` (`fallback` when absent); usage error for a level that does not exist.
 *
 * @example
 * ```ts
 * logLevelFlag({ "log-level": "debug" }, "warning"); // "debug"
 * logLevelFlag({}, "info"); // "info"
 * ```
 */
export function logLevelFlag(values: ParsedFlags["values"], fallback: LogLevel): LogLevel {
  const level = (stringFlag(values, "log-level") ?? fallback) as LogLevel;
  if (!LOG_LEVELS.includes(level)) {
    throw CliError.usage(`--log-level must be one of ${LOG_LEVELS.join(", ")}; got '${level}'.`);
  }
  return level;
}

/** True when `args` asks for help. */
export function wantsHelp(args: string[]): boolean {
  const end = args.indexOf("--");
  const head = end === -1 ? args : args.slice(0, end);
  return head.includes("-h") || head.includes("--help");
}
