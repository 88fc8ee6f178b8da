/**
 * Waiting on a timer: an abortable sleep, and a bounded wait for work that may never finish.
 * @module
 */
import { BridgeError, MESSAGES } from "../protocol/errors.ts";

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
  message: string = MESSAGES.turnCancelled,
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

/** Options of {@link settledWithin}. */
export interface SettledWithinOptions {
  /** The longest wait, in milliseconds (default: no limit). */
  ms?: number;
  /** Ends the wait early when it aborts. */
  signal?: AbortSignal;
}

/**
 * Waits until `work` settles, but at most `options.ms` milliseconds and no longer than `options.signal` stays
 * unaborted. Resolves true when `work` settled (fulfilled or rejected) in time, false otherwise; never rejects,
 * and leaves no timer or listener behind.
 *
 * @example
 * ```ts
 * import { settledWithin } from "./sleep.ts";
 * const never = new Promise<void>(() => {});
 * await settledWithin(never, { ms: 10 }); // false, after 10 ms
 * await settledWithin(Promise.resolve(), { ms: 10 }); // true
 * ```
 */
export function settledWithin(work: Promise<unknown>, options: SettledWithinOptions): Promise<boolean> {
  const { ms, signal } = options;
  if (signal?.aborted) return Promise.resolve(false);
  return new Promise<boolean>((resolve) => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const finish = (settled: boolean) => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
      resolve(settled);
    };
    const onAbort = () => finish(false);
    if (ms !== undefined) timer = setTimeout(() => finish(false), ms);
    signal?.addEventListener("abort", onAbort, { once: true });
    work.then(() => finish(true), () => finish(true));
  });
}
