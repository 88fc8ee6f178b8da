/**
 * The Deno permissions node-llama-cpp needs, which of them this process lacks, and where its user gives them:
 * `oam` (this package's `cli.ts`) through its tasks or an `oam` installed again; a script of its own that
 * imports the package (a `deno run` script's `Bridge.open()`) on its own command line, which is named.
 * @module
 */
import { fileURLToPath } from "node:url";
import { isAbsolute, relative } from "node:path";

/** Permissions node-llama-cpp needs under Deno (it checks its native binary in a child process). */
export const LLAMA_PERMISSIONS = "--allow-read --allow-env --allow-sys --allow-ffi --allow-run";

/**
 * Where `oam`'s user gives them: a script's own `deno run`, in this repository the tasks that pass them (the
 * narrow `serve`, `stdio` and `playground` tasks leave them out), or an `oam` installed again with them (the
 * README's install command gives `oam stdio`'s permissions only).
 */
const LLAMA_TASK_HINT = `(a script: deno run ${LLAMA_PERMISSIONS} --no-lock your_script.ts; ` +
  "deno task oam and oam:local pass them, e.g. deno task oam:local serve --model gguf:…; an oam from deno " +
  `install: install it again with them, deno install -g -f -n oam ${LLAMA_PERMISSIONS} --allow-write ` +
  "jsr:@open-apple-models/bridge/cli)";

/** Whether a permission is granted (asked without prompting). */
function granted(descriptor: Deno.PermissionDescriptor): boolean {
  try {
    return Deno.permissions.querySync(descriptor).state === "granted";
  } catch {
    return false;
  }
}

/** The command node-llama-cpp runs to test its native binary: this executable (`process.execPath`). */
function runDescriptor(): Deno.PermissionDescriptor {
  try {
    return { name: "run", command: Deno.execPath() };
  } catch {
    return { name: "run" };
  }
}

/**
 * The flags of {@link LLAMA_PERMISSIONS} but `--allow-read` this process was not given (asked without
 * prompting), e.g. `["--allow-run"]`. node-llama-cpp needs them before it reads any model; without
 * `--allow-run` its test of the native binary throws where no caller can catch it and the whole process
 * exits, so the backend checks first.
 *
 * @example
 * ```ts
 * import { missingLlamaPermissions } from "./llama_permissions.ts";
 * missingLlamaPermissions(); // [] under --allow-all
 * ```
 */
export function missingLlamaPermissions(): string[] {
  const missing: string[] = [];
  if (!granted({ name: "env" })) missing.push("--allow-env");
  if (!granted({ name: "sys" })) missing.push("--allow-sys");
  if (!granted({ name: "ffi" })) missing.push("--allow-ffi");
  if (!granted(runDescriptor())) missing.push("--allow-run");
  return missing;
}

/** True when this process is `oam` (this package's `cli.ts` is the main module), false for a script of its own. */
function isOam(mainModule: string): boolean {
  return mainModule === new URL("../../cli.ts", import.meta.url).href;
}

/** The main module as its user typed it: a path relative to the working folder when inside it, else as it is. */
function scriptWord(mainModule: string): string {
  let word = mainModule;
  if (mainModule.startsWith("file:")) {
    word = fileURLToPath(mainModule);
    try {
      const inside = relative(Deno.cwd(), word);
      if (inside !== "" && !inside.startsWith("..") && !isAbsolute(inside)) word = inside;
    } catch {
      // The working folder cannot be read: the absolute path.
    }
  }
  return /^[A-Za-z0-9_@%+=:,./\\-]+$/.test(word) ? word : `"${word}"`;
}

/**
 * Where a script of its own (`mainModule`, by default this process's main module) gives missing permissions:
 * `add them to this script's command, deno run <all> --no-lock game.ts (or deno run -A --no-lock game.ts)`;
 * null for `oam`, whose ways are {@link llamaPermissionAdvice}'s.
 *
 * @example
 * ```ts
 * import { scriptPermissionHint } from "./llama_permissions.ts";
 * scriptPermissionHint("file:///home/me/game.ts");
 * // "add them to this script's command, deno run --allow-read … --allow-run --no-lock /home/me/game.ts (or …)"
 * ```
 */
export function scriptPermissionHint(mainModule: string = Deno.mainModule): string | null {
  if (isOam(mainModule)) return null;
  const script = scriptWord(mainModule);
  return `add them to this script's command, deno run ${LLAMA_PERMISSIONS} --no-lock ${script} (or deno ` +
    `run -A --no-lock ${script})`;
}

/**
 * What to do about permissions node-llama-cpp lacks, after the sentence that said so: ` It needs <all>`, then
 * where to give them (for `oam` its tasks or an install, for a script of its own the script's command line).
 *
 * @example
 * ```ts
 * import { llamaPermissionAdvice } from "./llama_permissions.ts";
 * "node-llama-cpp cannot run without --allow-run." + llamaPermissionAdvice("file:///home/me/game.ts");
 * // "… It needs --allow-read … --allow-run: add them to this script's command, deno run … (or …)."
 * ```
 */
export function llamaPermissionAdvice(mainModule: string = Deno.mainModule): string {
  const script = scriptPermissionHint(mainModule);
  return ` It needs ${LLAMA_PERMISSIONS}${script === null ? ` ${LLAMA_TASK_HINT}` : `: ${script}`}.`;
}
