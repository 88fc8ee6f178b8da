/**
 * A counting semaphore with a bounded FIFO queue, a deadline per waiter and cancellation: how many
 * completions run at once, and how many may wait for a slot.
 * @module
 */
import { wakeAll } from "../util/waiters.ts";

/** How an {@link ConcurrencyLimiter.acquire} ended. */
export type AcquireOutcome = "acquired" | "queue_full" | "timed_out" | "cancelled";

interface Waiter {
  resolve: (outcome: AcquireOutcome) => void;
  timer: ReturnType<typeof setTimeout> | undefined;
  signal: AbortSignal | undefined;
  onAbort: () => void;
}

/**
 * A limiter of `limit` slots with at most `maxQueued` waiters.
 *
 * @example
 * ```ts
 * import { ConcurrencyLimiter } from "./limiter.ts";
 * const limiter = new ConcurrencyLimiter(1, 8);
 * await limiter.acquire(Date.now() + 1000); // "acquired"
 * limiter.release();
 * ```
 */
export class ConcurrencyLimiter {
  /** Slots. */
  readonly limit: number;
  /** Most waiters. */
  readonly maxQueued: number;
  #active = 0;
  readonly #queue: Waiter[] = [];
  readonly #idleWaiters: Array<() => void> = [];

  /** A limiter with `limit` (≥ 1) slots and a queue of `maxQueued` (≥ 0). */
  constructor(limit: number, maxQueued: number) {
    this.limit = Math.max(1, limit);
    this.maxQueued = Math.max(0, maxQueued);
  }

  /** Slots in use. */
  get active(): number {
    return this.#active;
  }

  /** Waiters. */
  get queued(): number {
    return this.#queue.length;
  }

  /** Resolves when no slot is taken and nobody waits. */
  idle(): Promise<void> {
    if (this.#active === 0 && this.#queue.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  /**
   * Takes a slot, waiting in line until `deadline` (epoch ms) at most. On `"acquired"` the caller must call
   * {@link release} exactly once.
   */
  acquire(deadline: number, signal?: AbortSignal): Promise<AcquireOutcome> {
    if (signal?.aborted) return Promise.resolve("cancelled");
    if (this.#active < this.limit) {
      this.#active++;
      return Promise.resolve("acquired");
    }
    if (this.#queue.length >= this.maxQueued) return Promise.resolve("queue_full");
    return new Promise((resolve) => {
      const waiter: Waiter = {
        resolve,
        timer: undefined,
        signal,
        onAbort: () => this.#drop(waiter, "cancelled"),
      };
      waiter.timer = setTimeout(() => this.#drop(waiter, "timed_out"), Math.max(0, deadline - Date.now()));
      signal?.addEventListener("abort", waiter.onAbort, { once: true });
      this.#queue.push(waiter);
    });
  }

  /** Frees a slot, handing it to the longest-waiting request if any. */
  release(): void {
    const next = this.#queue.shift();
    if (next === undefined) {
      this.#active = Math.max(0, this.#active - 1);
      if (this.#active === 0) wakeAll(this.#idleWaiters);
      return;
    }
    this.#settle(next, "acquired"); // the slot passes on: `active` stays the same
  }

  #drop(waiter: Waiter, outcome: AcquireOutcome): void {
    const index = this.#queue.indexOf(waiter);
    if (index === -1) return; // already granted
    this.#queue.splice(index, 1);
    this.#settle(waiter, outcome);
  }

  #settle(waiter: Waiter, outcome: AcquireOutcome): void {
    clearTimeout(waiter.timer);
    waiter.signal?.removeEventListener("abort", waiter.onAbort);
    waiter.resolve(outcome);
  }
}
