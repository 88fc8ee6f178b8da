/**
 * A slow load (a GGUF model file, node-llama-cpp with it) started once per key, with one word on stderr when it
 * starts: a script that waits seconds for its first turn hears why, and a load already made says nothing.
 * @module
 */
import { stderrQueue } from "../util/stderr_queue.ts";

/** What {@link loadOnce} starts, and what it says when it does. */
export interface LoadStart<T> {
  /** The key of the load in the map (a model file and its settings). */
  key: string;
  /** Starts the load. */
  load: () => Promise<T>;
  /** The line said when the load starts (no newline), or null for none. */
  notice: string | null;
  /** Where the line goes (default: stderr, through the queue that never blocks; never stdout, which may be the protocol). */
  say?: (line: string) => void;
}

/**
 * The load of `start.key` in `loads`: the one running or done when there is one (nothing said), else a new one
 * started with `start.load`, `start.notice` said first. A load that fails is forgotten, so the next call starts
 * (and announces) it again.
 *
 * @example
 * ```ts
 * import { loadOnce } from "./load_once.ts";
 * const loads = new Map<string, Promise<string>>();
 * const start = { key: "tiny", load: () => Promise.resolve("loaded"), notice: "[oam] Loading the model 'tiny'…" };
 * await loadOnce(loads, start); // says the notice on stderr
 * await loadOnce(loads, start); // says nothing: loaded already
 * ```
 */
export function loadOnce<T>(loads: Map<string, Promise<T>>, start: LoadStart<T>): Promise<T> {
  const running = loads.get(start.key);
  if (running !== undefined) return running;
  if (start.notice !== null) {
    const line = `${start.notice}\n`;
    if (start.say) start.say(line);
    else stderrQueue.push(line);
  }
  const promise = start.load();
  loads.set(start.key, promise);
  promise.catch(() => {
    if (loads.get(start.key) === promise) loads.delete(start.key);
  });
  return promise;
}
