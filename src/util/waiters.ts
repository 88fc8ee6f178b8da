/**
 * Lists of callbacks waiting for a condition (idle, drained, shut down).
 * @module
 */

/**
 * Empties `waiters`, then calls each callback that was in it (a callback may add a new waiter safely).
 *
 * @example
 * ```ts
 * import { wakeAll } from "./waiters.ts";
 * const waiters: Array<() => void> = [];
 * const idle = new Promise<void>((resolve) => waiters.push(resolve));
 * wakeAll(waiters);
 * await idle;
 * ```
 */
export function wakeAll(waiters: Array<() => void>): void {
  for (const wake of waiters.splice(0)) wake();
}
