/**
 * Which `oam stdio` to start: the same rule every engine client of the project follows (bindings/README.md).
 * @module
 */

/** Reads a variable only when the permission is already granted (never prompts). */
function fromEnvironment(name: string): string | undefined {
  try {
    if (Deno.permissions.querySync({ name: "env", variable: name }).state !== "granted") return undefined;
    return Deno.env.get(name)?.trim() || undefined;
  } catch {
    return undefined;
  }
}

/**
 * The argv that starts the bridge, first match wins: `command` when given; `OAM_BRIDGE_COMMAND` (the whole
 * command line, split on whitespace); `OAM_BRIDGE_PATH` (a compiled `oam`, run as `<path> stdio`); else
 * `oam stdio` from `PATH`. With the last two, `OAM_BRIDGE_LOG=<level>` adds `--log-level <level>`.
 * Environment variables are read only when `--allow-env` already grants them; `env` replaces the lookup.
 *
 * @example
 * ```ts
 * import { bridgeCommand } from "@open-apple-models/bridge";
 * bridgeCommand(["deno", "run", "-A", "cli.ts", "stdio"]); // the argv as given
 * bridgeCommand(); // e.g. ["oam", "stdio"]
 * bridgeCommand(undefined, (name) => name === "OAM_BRIDGE_PATH" ? "/opt/oam" : undefined); // ["/opt/oam", "stdio"]
 * ```
 */
export function bridgeCommand(
  command?: readonly string[],
  env: (name: string) => string | undefined = fromEnvironment,
): string[] {
  if (command && command.length > 0) return [...command];
  const value = (name: string) => env(name)?.trim() || undefined;
  const line = value("OAM_BRIDGE_COMMAND");
  if (line) return line.split(/\s+/);
  const argv = [value("OAM_BRIDGE_PATH") ?? "oam", "stdio"];
  const log = value("OAM_BRIDGE_LOG");
  if (log) argv.push("--log-level", log);
  return argv;
}

/**
 * Which environment variable named the bridge {@link bridgeCommand} starts without a `command`:
 * `OAM_BRIDGE_COMMAND`, `OAM_BRIDGE_PATH`, or null for `oam` from `PATH` (for error messages).
 *
 * @example
 * ```ts
 * import { bridgeCommandSource } from "./bridge_command.ts";
 * bridgeCommandSource((name) => name === "OAM_BRIDGE_PATH" ? "/opt/oam" : undefined); // "OAM_BRIDGE_PATH"
 * bridgeCommandSource(() => undefined); // null
 * ```
 */
export function bridgeCommandSource(
  env: (name: string) => string | undefined = fromEnvironment,
): "OAM_BRIDGE_COMMAND" | "OAM_BRIDGE_PATH" | null {
  for (const name of ["OAM_BRIDGE_COMMAND", "OAM_BRIDGE_PATH"] as const) if (env(name)?.trim()) return name;
  return null;
}

/** The variable that makes `oam stdio` stop when the process that started it goes away. */
export const EXIT_WITH_PARENT_VARIABLE = "OAM_EXIT_WITH_PARENT";

/**
 * The environment a client gives the bridge it starts: `env` plus `OAM_EXIT_WITH_PARENT=1` (the bridge stops
 * when this process goes away, instead of running turns nobody will read), unless the variable is already
 * set in `env` or, as `inherited` reads it, in the environment the child inherits. Returns `env` itself when
 * nothing is added.
 *
 * @example
 * ```ts
 * import { bridgeEnvironment } from "./bridge_command.ts";
 * bridgeEnvironment(undefined, () => undefined); // { OAM_EXIT_WITH_PARENT: "1" }
 * bridgeEnvironment({ OAM_EXIT_WITH_PARENT: "0" }, () => undefined); // { OAM_EXIT_WITH_PARENT: "0" }
 * bridgeEnvironment(undefined, () => "0"); // undefined: the inherited "0" stays
 * ```
 */
export function bridgeEnvironment(
  env: Record<string, string> | undefined,
  inherited: (name: string) => string | undefined,
): Record<string, string> | undefined {
  const name = EXIT_WITH_PARENT_VARIABLE;
  if (env !== undefined && name in env) return env;
  if (inherited(name) !== undefined) return env;
  return { ...env, [name]: "1" };
}
