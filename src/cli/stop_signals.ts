/**
 * The signals that stop a long-running command (`oam stdio`, `serve`, `playground`): SIGINT, and SIGTERM where
 * the platform has it; and, for `oam stdio` with `OAM_EXIT_WITH_PARENT=1`, the exit of the process that
 * started it.
 * @module
 */
import { grantedEnvVar } from "../util/env.ts";
import { EXIT_WITH_PARENT_VARIABLE } from "../client/bridge_command.ts";

/**
 * Calls `stop` on SIGINT or SIGTERM (SIGINT only on Windows; nothing where signals are unavailable). Returns a
 * function that removes the listeners again.
 *
 * @example
 * ```ts
 * const controller = new AbortController();
 * const removeListeners = onStopSignals(() => controller.abort());
 * removeListeners(); // the command has ended
 * ```
 */
export function onStopSignals(stop: () => void): () => void {
  const signals: Deno.Signal[] = Deno.build.os === "windows" ? ["SIGINT"] : ["SIGINT", "SIGTERM"];
  const added: Deno.Signal[] = [];
  for (const s of signals) {
    try {
      Deno.addSignalListener(s, stop);
      added.push(s);
    } catch {
      // signals unavailable
    }
  }
  return () => {
    for (const s of added) Deno.removeSignalListener(s, stop);
  };
}

/** How often {@link onParentExit} looks at the parent pid (ms). */
export const PARENT_POLL_MS = 500;

/** Options of {@link onParentExit}. */
export interface ParentExitOptions {
  /** Reads a variable (default: only when `--allow-env` already grants it; never prompts). */
  env?: (name: string) => string | undefined;
  /** The parent pid now (default `Deno.ppid`). */
  ppid?: () => number;
  /** Where a value that is neither `1` nor `0` is reported (once). */
  warn?: (message: string) => void;
  /** The platform (default `Deno.build.os`). */
  os?: typeof Deno.build.os;
}

/**
 * With `OAM_EXIT_WITH_PARENT=1`, calls `stop` once when the process that started this one goes away: on Linux
 * and macOS an orphan is adopted by another process, so the parent pid changes from the one seen now. It is
 * looked at every {@link PARENT_POLL_MS} ms by a timer that never keeps the process alive. Off when the
 * variable is unset, `0`, or not readable (a narrowed `--allow-env` without it), and on Windows, where the
 * parent pid never changes. Returns a function that stops watching.
 *
 * @example
 * ```ts
 * const controller = new AbortController();
 * const stopWatching = onParentExit(() => controller.abort());
 * stopWatching(); // the command has ended
 * ```
 */
export function onParentExit(stop: () => void, options: ParentExitOptions = {}): () => void {
  const value = (options.env ?? grantedEnvVar)(EXIT_WITH_PARENT_VARIABLE)?.trim();
  if (value !== "1") {
    if (value !== undefined && value !== "" && value !== "0") {
      options.warn?.(
        `${EXIT_WITH_PARENT_VARIABLE}=${value} is neither 1 nor 0; the bridge does not stop when its parent exits.`,
      );
    }
    return () => {};
  }
  if ((options.os ?? Deno.build.os) === "windows") return () => {};
  const ppid = options.ppid ?? (() => Deno.ppid);
  const parent = ppid();
  const timer = setInterval(() => {
    if (ppid() === parent) return;
    clearInterval(timer);
    stop();
  }, PARENT_POLL_MS);
  Deno.unrefTimer(timer);
  return () => clearInterval(timer);
}
