/**
 * An abortable sleep.
 * @module
 */
import { BridgeError } from "../protocol/errors.ts";

/**
 * Resolves after `ms`, or rejects with a `cancelled` BridgeError (`message`) as soon as `signal` aborts.
 *
 * @example
 * ```ts
 * import { abortableSleep } from "./sleep.ts";
 * await abortableSleep(10, new AbortController().signal);
 * ```
 */
export function abortableSleep(
  ms: number,
  signal: AbortSignal,
  message = "The turn was cancelled.",
): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(BridgeError.cancelled(message));
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(BridgeError.cancelled(message));
    };
    signal.addEventListener("abort", onAbort, { once: true });
  });
}
