/**
 * A one-shot outcome with a single consumer and no microtask hop: the consumer's callback runs the moment
 * the outcome is set. Queued work answers through it, so a turn that finishes synchronously is written out
 * right away instead of one promise reaction later per request.
 * @module
 */

/** Receives an outcome: `(true, value)` or `(false, error)`. */
export type PendingConsumer<T> = (ok: boolean, valueOrError: T | unknown) => void;

/**
 * A result that will be set once, read by one consumer.
 *
 * @example
 * ```ts
 * import { Pending } from "./pending.ts";
 * const pending = new Pending<number>();
 * const seen: unknown[] = [];
 * pending.consume((ok, value) => seen.push(ok, value));
 * pending.resolve(42); // the callback runs here: seen is [true, 42]
 * ```
 */
export class Pending<T> {
  #state: "waiting" | "resolved" | "rejected" = "waiting";
  #value: unknown = undefined;
  #consumer: PendingConsumer<T> | null = null;

  /** True once resolved or rejected. */
  get settled(): boolean {
    return this.#state !== "waiting";
  }

  /** Sets the value (ignored once settled). */
  resolve(value: T): void {
    this.#settle(true, value);
  }

  /** Sets the error (ignored once settled). */
  reject(error: unknown): void {
    this.#settle(false, error);
  }

  /** Registers the consumer; it is called at once when the outcome is already set. One consumer only. */
  consume(consumer: PendingConsumer<T>): void {
    if (this.#consumer !== null) throw new Error("A Pending has one consumer.");
    if (this.#state === "waiting") this.#consumer = consumer;
    else consumer(this.#state === "resolved", this.#value);
  }

  #settle(ok: boolean, value: unknown): void {
    if (this.#state !== "waiting") return;
    this.#state = ok ? "resolved" : "rejected";
    this.#value = value;
    const consumer = this.#consumer;
    this.#consumer = null;
    consumer?.(ok, value);
  }

  /** The outcome as a promise (for code that awaits). */
  toPromise(): Promise<T> {
    return new Promise<T>((resolve, reject) =>
      this.consume((ok, value) => ok ? resolve(value as T) : reject(value))
    );
  }
}
