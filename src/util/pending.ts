/**
 * A one-shot outcome with a single consumer and no microtask hop: the consumer's callback runs the moment
 * the outcome is set. Queued work answers through it, so a turn that finishes synchronously is written out
 * right away instead of one promise reaction later per request.
 * @module
 */

/**
 * A result that will be set once, read by one consumer.
 *
 * @example
 * ```ts
 * import { Pending } from "./pending.ts";
 * const pending = new Pending<number>();
 * const seen: number[] = [];
 * pending.settle((n) => seen.push(n), () => {});
 * pending.resolve(42); // the callback runs here: seen is [42]
 * ```
 */
export class Pending<T> {
  #state: "waiting" | "resolved" | "rejected" = "waiting";
  #value: unknown = undefined;
  #onValue: ((value: T) => void) | null = null;
  #onError: ((error: unknown) => void) | null = null;

  /** True once resolved or rejected. */
  get settled(): boolean {
    return this.#state !== "waiting";
  }

  /** Sets the value (ignored once settled). */
  resolve(value: T): void {
    if (this.#state !== "waiting") return;
    this.#state = "resolved";
    this.#value = value;
    const consumer = this.#onValue;
    this.#drop();
    consumer?.(value);
  }

  /** Sets the error (ignored once settled). */
  reject(error: unknown): void {
    if (this.#state !== "waiting") return;
    this.#state = "rejected";
    this.#value = error;
    const consumer = this.#onError;
    this.#drop();
    consumer?.(error);
  }

  /** Registers the consumer; it is called at once when the outcome is already set. One consumer only. */
  settle(onValue: (value: T) => void, onError: (error: unknown) => void): void {
    if (this.#onValue !== null) throw new Error("A Pending has one consumer.");
    if (this.#state === "resolved") onValue(this.#value as T);
    else if (this.#state === "rejected") onError(this.#value);
    else {
      this.#onValue = onValue;
      this.#onError = onError;
    }
  }

  /** The outcome as a promise (for code that awaits). */
  toPromise(): Promise<T> {
    return new Promise<T>((resolve, reject) => this.settle(resolve, reject));
  }

  #drop(): void {
    this.#onValue = null;
    this.#onError = null;
  }
}
