/**
 * How this `oam` was started, as a command a user can type again (the hint of a paused `oam respond`).
 *
 * A compiled executable is its own name. Under Deno it is `deno task oam` (or `oam:local`) only where that
 * works: run from the folder whose `deno.json` has the task and whose `cli.ts` is running, with permissions
 * the task grants. Anywhere else — a user's own folder, `jsr:@open-apple-models/bridge/cli` — it is
 * `deno run` with the permissions this process has and the module it runs, so the printed command works
 * where it is printed.
 */
import { basename, dirname, isAbsolute, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** Permissions in the order the README's commands give them; `-A` when all of them are granted. */
const NAMES: PermissionName[] = ["read", "write", "net", "env", "sys", "ffi", "run"];
/** A permission the printed command can grant. */
export type PermissionName = "read" | "write" | "net" | "env" | "sys" | "ffi" | "run";
/** The hosts `deno task oam:local` grants. */
const LOCAL_HOSTS = ["127.0.0.1", "localhost", "[::1]"];
/** Environment variables oam reads (a grant for some of them is given again as that list). */
const OAM_ENV = ["OAM_MODEL", "OAM_SCRIPT", "OAM_FM_LIBRARY", "OAM_API_KEY", "OAM_EXIT_WITH_PARENT"];

/** What the printed command depends on; {@link currentProcess} reads it from this process. */
export interface ProcessFacts {
  /** `Deno.execPath()`, or "" when it cannot be read. */
  execPath: string;
  /** `Deno.mainModule`. */
  mainModule: string;
  /** The working directory, or "" when it cannot be read. */
  cwd: string;
  /** Whether a permission is granted (`host` or `variable` narrows it). */
  granted(name: PermissionName, scope?: string): boolean;
  /** The task names of `deno.json` or `deno.jsonc` in `cwd` (empty when there is none). */
  tasks(): string[];
}

/** Options of {@link oamCommand}. */
export interface OamCommandOptions {
  /**
   * The command loads a GGUF model (node-llama-cpp): `deno run` gets `--no-lock`, as the repository's tasks
   * pass it, so running it never pins node-llama-cpp in a lock file (the checkout's, or the project's it is
   * run in). The tasks and a compiled oam need nothing added.
   */
  noLock?: boolean;
}

/**
 * The command that starts this `oam` again, for printed hints: the executable's name, `deno task oam`
 * where that task runs this very `cli.ts`, else `deno run <permissions> <module>` (with `--no-lock` when
 * `how.noLock`: a GGUF model).
 *
 * @example
 * ```ts
 * import { oamCommand } from "./invocation.ts";
 * const command = oamCommand(); // e.g. "deno run --allow-read --allow-env jsr:@open-apple-models/bridge@0.1.0/cli"
 * oamCommand(undefined, { noLock: true }); // e.g. "deno run --no-lock -A /src/oam/cli.ts"
 * ```
 */
export function oamCommand(facts: ProcessFacts = currentProcess(), how: OamCommandOptions = {}): string {
  if (!runByDeno(facts)) return executableName(facts).replace(/\.exe$/i, "") || "oam";
  const task = repositoryTask(facts);
  if (task !== null) return `deno task ${task}`;
  const lock = how.noLock ? ["--no-lock"] : [];
  return ["deno", "run", ...lock, ...permissionFlags(facts), moduleWord(facts.mainModule, facts.cwd)].join(
    " ",
  );
}

/**
 * What an `oam` command needs beyond what this process may have been started with: `models pull` downloads
 * (network), saves (write) and finds its cache folder in the environment (`OAM_MODELS_DIR`, `XDG_CACHE_HOME`,
 * `HOME`…: a server's narrow `--allow-env` lacks them). A printed hint for it grants those too.
 */
const COMMAND_NEEDS: ReadonlyArray<readonly [string, readonly PermissionName[]]> = [
  ["models pull", ["read", "net", "write", "env"]],
];

/**
 * `oam <args>` as a command a user can type where this process runs: {@link oamCommand} with `args`, with the
 * permissions the command needs (`models pull` needs the network, writes, and reads the environment) added when this process lacks
 * them. In the repository's folder that is `deno task models …`, which grants them.
 *
 * @example
 * ```ts
 * import { oamCommandLineFor } from "./invocation.ts";
 * oamCommandLineFor("models pull <url>"); // e.g. "deno run --allow-read --allow-write --allow-net cli.ts models pull <url>"
 * ```
 */
export function oamCommandLineFor(args: string, facts: ProcessFacts = currentProcess()): string {
  const needs = COMMAND_NEEDS.find(([command]) => args === command || args.startsWith(`${command} `))?.[1] ??
    [];
  // A compiled oam's permissions were fixed when it was compiled: its name is all a hint can give.
  const missing = runByDeno(facts) ? needs.filter((name) => !facts.granted(name)) : [];
  if (missing.length === 0) return `${oamCommand(facts)} ${args}`;
  if (args.startsWith("models ") && runsRepositoryCli(facts) && facts.tasks().includes("models")) {
    return `deno task models ${args.slice("models ".length)}`;
  }
  const granted: ProcessFacts["granted"] = (name, scope) =>
    missing.includes(name) || facts.granted(name, scope);
  return `${oamCommand({ ...facts, granted })} ${args}`;
}

/**
 * `oam <args>` as a usage error's hint names it (`stdio --help`): in the repository's folder, running its own
 * `cli.ts` (`deno task stdio`, `deno task oam …`, `deno run -A cli.ts …`), the command that runs it there
 * ({@link oamCommand}: `deno task oam stdio --help`), since no `oam` need be installed; anywhere else `oam
 * <args>` as the help pages write it: a `jsr:` or another folder's `cli.ts` may be an installed `oam` (whose
 * script runs `deno run` the same way), and a compiled one may be on the PATH under that name.
 *
 * @example
 * ```ts
 * import { oamHelpLine } from "./invocation.ts";
 * oamHelpLine("stdio --help"); // "oam stdio --help", or "deno task oam stdio --help" in the repository
 * ```
 */
export function oamHelpLine(args: string, facts: ProcessFacts = currentProcess()): string {
  if (runByDeno(facts) && runsRepositoryCli(facts)) return `${oamCommand(facts)} ${args}`.trimEnd();
  return `oam ${args}`.trimEnd();
}

/**
 * Whether this process is `deno` running a module, rather than a compiled executable (whose permissions were
 * fixed when it was compiled).
 *
 * @example
 * ```ts
 * import { startedByDeno } from "./invocation.ts";
 * startedByDeno(); // true under `deno run cli.ts …`
 * ```
 */
export function startedByDeno(facts: ProcessFacts = currentProcess()): boolean {
  return runByDeno(facts);
}

/**
 * Where a printed hint that grants network access to `host` can give a command: `"task"` in the repository's
 * folder (its `oam:local` task, or its `cli.ts` there), `"compiled"` for a compiled oam (its permissions were
 * fixed when it was compiled), else the `deno run` command with this process's permissions (its network
 * grant replaced by `host`) and module, which works in the folder it is printed in.
 *
 * @example
 * ```ts
 * import { commandWithNet } from "./invocation.ts";
 * commandWithNet("127.0.0.1:8080"); // e.g. "deno run --allow-read --allow-net=127.0.0.1:8080 /src/oam/cli.ts"
 * ```
 */
export function commandWithNet(host: string, facts: ProcessFacts = currentProcess()): string {
  if (!runByDeno(facts)) return "compiled";
  if (runsRepositoryCli(facts)) return "task";
  return denoRunWithNet(host, facts);
}

/**
 * The `deno run` command of this process (its permissions, its network grant replaced by `host`, and its
 * module), whether or not a task of the repository runs it; "compiled" for a compiled executable.
 *
 * @example
 * ```ts
 * import { denoRunWithNet } from "./invocation.ts";
 * denoRunWithNet("api.example.com:443"); // e.g. "deno run --allow-read --allow-net=api.example.com:443 cli.ts"
 * ```
 */
export function denoRunWithNet(host: string, facts: ProcessFacts = currentProcess()): string {
  if (!runByDeno(facts)) return "compiled";
  const others: ProcessFacts["granted"] = (name, scope) => name !== "net" && facts.granted(name, scope);
  const flags = permissionFlags({ ...facts, granted: others });
  return ["deno", "run", ...flags, `--allow-net=${host}`, moduleWord(facts.mainModule, facts.cwd)].join(" ");
}

/** The file name of the executable running this process. */
function executableName(facts: ProcessFacts): string {
  return facts.execPath.split(/[\\/]/).pop() ?? "";
}

/** Whether this process is `deno` running a module (else a compiled executable). */
function runByDeno(facts: ProcessFacts): boolean {
  return /^deno(\.exe)?$/i.test(executableName(facts));
}

/**
 * Whether this process is `deno` running the repository's own `cli.ts` from the repository's folder, where
 * its tasks (`deno task oam:local …`) can be named in a hint.
 *
 * @example
 * ```ts
 * import { inRepository } from "./invocation.ts";
 * inRepository(); // true under `deno task oam …` in a checkout
 * ```
 */
export function inRepository(facts: ProcessFacts = currentProcess()): boolean {
  return hasRepositoryTask("oam:local", facts);
}

/**
 * Whether this process is `deno` running the repository's own `cli.ts` from its folder, whose `deno.json` has
 * task `task` (so a hint can name `deno task <task>`).
 *
 * @example
 * ```ts
 * import { hasRepositoryTask } from "./invocation.ts";
 * hasRepositoryTask("stdio:local"); // true under `deno task stdio` in a checkout
 * ```
 */
export function hasRepositoryTask(task: string, facts: ProcessFacts = currentProcess()): boolean {
  return runByDeno(facts) && runsRepositoryCli(facts) && facts.tasks().includes(task);
}

/**
 * Whether `host` (a name, with or without its port: `127.0.0.1:8080`, `[::1]:80`) is this machine, as the
 * `:local` tasks grant it.
 *
 * @example
 * ```ts
 * import { isLocalHost } from "./invocation.ts";
 * isLocalHost("localhost:8080"); // true
 * isLocalHost("api.example.com:443"); // false
 * ```
 */
export function isLocalHost(host: string): boolean {
  return LOCAL_HOSTS.includes(host.replace(/:\d+$/, ""));
}

/** Whether this process runs the `cli.ts` of its working directory (the repository's own, run from its folder). */
function runsRepositoryCli(facts: ProcessFacts): boolean {
  if (facts.cwd === "" || !facts.mainModule.startsWith("file:")) return false;
  const main = fileURLToPath(facts.mainModule);
  return basename(main) === "cli.ts" && dirname(main) === resolve(facts.cwd);
}

/** `oam` or `oam:local` when this is the repository's own `cli.ts` run from its folder, else null. */
function repositoryTask(facts: ProcessFacts): string | null {
  if (!runsRepositoryCli(facts)) return null;
  const tasks = facts.tasks();
  // Both tasks grant everything but the network; oam:local adds this machine's hosts.
  if (facts.granted("net")) return null;
  const local = LOCAL_HOSTS.some((host) => facts.granted("net", host));
  const task = local ? "oam:local" : "oam";
  return tasks.includes(task) ? task : null;
}

/** The `--allow-…` flags of what this process may do (a grant it cannot name, such as some paths, is left out). */
function permissionFlags(facts: ProcessFacts): string[] {
  if (NAMES.every((name) => facts.granted(name))) return ["-A"];
  const flags: string[] = [];
  for (const name of NAMES) {
    if (facts.granted(name)) flags.push(`--allow-${name}`);
    else if (name === "net") {
      const hosts = LOCAL_HOSTS.filter((host) => facts.granted("net", host));
      if (hosts.length > 0) flags.push(`--allow-net=${hosts.join(",")}`);
    } else if (name === "env") {
      const vars = OAM_ENV.filter((variable) => facts.granted("env", variable));
      if (vars.length > 0) flags.push(`--allow-env=${vars.join(",")}`);
    }
  }
  return flags;
}

/** The main module as a shell word: a path (relative when under `cwd`), a `jsr:` specifier, or the URL. */
function moduleWord(mainModule: string, cwd: string): string {
  if (mainModule.startsWith("file:")) {
    const path = fileURLToPath(mainModule);
    const inside = cwd === "" ? "" : relative(cwd, path);
    return shellWord(inside === "" || inside.startsWith("..") || isAbsolute(inside) ? path : inside);
  }
  // jsr.io serves a package version's files at https://jsr.io/@scope/name/<version>/<file>.
  const jsr = /^https:\/\/jsr\.io\/(@[^/]+\/[^/]+)\/([^/]+)\/cli\.ts$/.exec(mainModule);
  if (jsr) return `jsr:${jsr[1]}@${jsr[2]}/cli`;
  return shellWord(mainModule);
}

/**
 * `word` as one shell word: as it is when it is safe, else in single quotes.
 *
 * @example
 * ```ts
 * import { shellWord } from "./invocation.ts";
 * shellWord("it's"); // "'it'\\''s'"
 * ```
 */
export function shellWord(word: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}

/** The facts of this process (each read defensively: a hint must never fail the command). */
export function currentProcess(): ProcessFacts {
  return {
    execPath: attempt(() => Deno.execPath(), ""),
    mainModule: Deno.mainModule,
    cwd: attempt(() => Deno.cwd(), ""),
    granted: (name, scope) => {
      const descriptor =
        (name === "net" && scope !== undefined
          ? { name, host: scope }
          : name === "env" && scope !== undefined
          ? { name, variable: scope }
          : { name }) as Deno.PermissionDescriptor;
      return attempt(() => Deno.permissions.querySync(descriptor).state === "granted", false);
    },
    tasks: () => {
      for (const file of ["deno.json", "deno.jsonc"]) {
        const tasks = attempt(() => taskNames(Deno.readTextFileSync(`${Deno.cwd()}/${file}`)), null);
        if (tasks !== null) return tasks;
      }
      return [];
    },
  };
}

/** The task names of a `deno.json` text (comments of a `.jsonc` that JSON cannot read give none). */
function taskNames(text: string): string[] {
  const config = attempt(() => JSON.parse(text), null);
  const tasks = config !== null && typeof config === "object" ? config.tasks : null;
  return tasks !== null && typeof tasks === "object" && !Array.isArray(tasks) ? Object.keys(tasks) : [];
}

function attempt<T>(read: () => T, fallback: T): T {
  try {
    return read();
  } catch {
    return fallback;
  }
}
