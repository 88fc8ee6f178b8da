/**
 * Values that may be there now or later. A scripted turn needs no real waiting; running it through a
 * promise per layer would cost more than the turn itself, so the turn path passes plain values along while
 * it can and promises only once something really waits.
 * @module
 */

/** A value now, or a promise of it. */
export type MaybePromise<T> = T | Promise<T>;
