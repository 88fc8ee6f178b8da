/**
 * Code that finishes synchronously when everything it waits for is already there, and asynchronously
 * otherwise. A scripted turn needs no real waiting; running it through five `async` frames would cost more
 * than the turn itself. Such code is written as a generator that `yield`s every value it would `await`
 * (plain values or promises) and is run by {@link runMaybeSync}.
 * @module
 */

/** A value now, or a promise of it. */
export type MaybePromise<T> = T | Promise<T>;

/** A generator run by {@link runMaybeSync}: it yields values it waits for and gets them back resolved. */
export type MaybeSyncBody<T> = Generator<unknown, T, unknown>;

/**
 * Runs `body`: each yielded plain value is handed straight back; at the first yielded promise the run
 * continues asynchronously. Returns the result directly when no promise was yielded (a throw then throws
 * synchronously), else a promise of it.
 *
 * @example
 * ```ts
 * import { runMaybeSync } from "./maybe_sync.ts";
 * const result = runMaybeSync((function* () {
 *   const a = (yield 1) as number;
 *   const b = (yield Promise.resolve(2)) as number;
 *   return a + b;
 * })());
 * await result; // 3 (a promise, because one yielded value was a promise)
 * ```
 */
export function runMaybeSync<T>(body: MaybeSyncBody<T>): MaybePromise<T> {
  let step = body.next();
  while (!step.done) {
    const value = step.value;
    if (value instanceof Promise) return resume(body, value);
    step = body.next(value);
  }
  return step.value;
}

async function resume<T>(body: MaybeSyncBody<T>, pending: Promise<unknown>): Promise<T> {
  for (;;) {
    let value: unknown;
    let failed = false;
    try {
      value = await pending;
    } catch (error) {
      failed = true;
      value = error;
    }
    let step = failed ? body.throw(value) : body.next(value);
    while (!step.done) {
      const next = step.value;
      if (next instanceof Promise) break;
      step = body.next(next);
    }
    if (step.done) return step.value;
    pending = step.value as Promise<unknown>;
  }
}

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
