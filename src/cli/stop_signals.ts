/**
 * The signals that stop a long-running command (`oam stdio`, `serve`, `playground`): SIGINT, and SIGTERM where
 * the platform has it.
 * @module
 */

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
