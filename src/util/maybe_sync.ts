/**
 * Values that may be there now or later. A scripted turn needs no real waiting; running it through a
 * promise per layer would cost more than the turn itself, so the turn path passes plain values along while
 * it can and promises only once something really waits.
 * @module
 */

/** A value now, or a promise of it. */
export type MaybePromise<T> = T | Promise<T>;

/**
 * Calls `then` with the value now, or when the promise resolves.
 *
 * @example
 * ```ts
 * import { mapMaybe } from "./maybe_sync.ts";
 * mapMaybe(2, (n) => n * 2); // 4
 * ```
 */
export function mapMaybe<T, U>(value: MaybePromise<T>, then: (value: T) => U): MaybePromise<U> {
  return value instanceof Promise ? value.then(then) : then(value);
}
