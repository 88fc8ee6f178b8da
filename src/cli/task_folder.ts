/**
 * Relative paths under `deno task oam`, which runs the command in its configuration's folder (the
 * repository) whatever folder it was typed in, and names that folder in `INIT_CWD`: a missing input file
 * that is in the folder it was typed in, and a file written where the user would not look for it, are said
 * with their full paths.
 * @module
 */

/** The folder the command runs in and the other one it was typed in (deno task's `INIT_CWD`), or null. */
function folders(): { cwd: string; typedIn: string } | null {
  try {
    const typedIn = Deno.env.get("INIT_CWD");
    const cwd = Deno.cwd();
    if (typedIn === undefined || typedIn === "" || typedIn === cwd) return null;
    return { cwd, typedIn };
  } catch {
    return null; // no --allow-env or --allow-read: nothing to say
  }
}

function isAbsolute(path: string): boolean {
  return path.startsWith("/") || path.startsWith("\\") || /^[A-Za-z]:[\\/]/.test(path);
}

/**
 * For a relative `path` that is missing where the command runs but is a file in the folder it was typed
 * in: the words that say so and give the full path (to follow "No such file: 'x'"); else "".
 *
 * @example
 * ```ts
 * import { typedElsewhere } from "./task_folder.ts";
 * // under `deno task oam npc gorm.jsonc` typed in /home/me/game, with gorm.jsonc there:
 * typedElsewhere("gorm.jsonc");
 * // " in /repo, where the command runs (deno task runs it in its configuration's folder); you typed it
 * //  in /home/me/game: give the full path, '/home/me/game/gorm.jsonc'"
 * ```
 */
export function typedElsewhere(path: string): string {
  const where = isAbsolute(path) ? null : folders();
  if (where === null) return "";
  const there = `${where.typedIn.replace(/[\\/]+$/, "")}/${path.replace(/^\.[\\/]/, "")}`;
  try {
    if (!Deno.statSync(there).isFile) return "";
  } catch {
    return "";
  }
  return ` in ${where.cwd}, where the command runs (deno task runs it in its configuration's folder); ` +
    `you typed it in ${where.typedIn}: give the full path, '${there}'`;
}

/**
 * How to show a file just written at `path`: as given, or its full path when the command was typed in
 * another folder than the one it runs in (under `deno task`), where the user would look for it first.
 *
 * @example
 * ```ts
 * import { shownWrittenPath } from "./task_folder.ts";
 * shownWrittenPath("talk.json"); // "talk.json"; under deno task typed elsewhere: "/repo/talk.json"
 * ```
 */
export function shownWrittenPath(path: string): string {
  const where = isAbsolute(path) ? null : folders();
  if (where === null) return path;
  return `${where.cwd.replace(/[\\/]+$/, "")}/${path.replace(/^\.[\\/]/, "")}`;
}
