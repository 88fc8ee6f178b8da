/**
 * Waiting on a timer: an abortable sleep, and a bounded wait for work that may never finish.
 * @module
 */
import { BridgeError } from "../protocol/errors.ts";

/**
 * Resolves after `ms`, or rejects with `-32009 cancelled` "The turn was cancelled." as soon as `signal`
 * aborts (the waits it serves are a turn's: a retry's delay, a scripted step's `delayMs`).
 *
 * @example
 * ```ts
 * import { abortableSleep } from "./sleep.ts";
 * await abortableSleep(10, new AbortController().signal);
 * ```
 */
export function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(BridgeError.turnCancelled());
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(BridgeError.turnCancelled());
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
