/**
 * A serial work queue with commit points, used for per-session and per-NPC ordering (§2.3).
 *
 * - Operations run strictly one after another, in schedule order. When the queue is idle, a new operation
 *   starts on the next microtask (after the handler that scheduled it has returned).
 * - An operation cancelled before it starts fails with `-32009` "The request was cancelled before it started."
 * - A running operation sees its `signal` aborted. If it still returns successfully without having called
 *   `commit()`, it is reported as cancelled. After `commit()` it is immune to cancellation.
 * @module
 */
import { BridgeError } from "../protocol/errors.ts";

/** The handle a running operation uses to observe cancellation and to commit. */
export class Operation {
  readonly #controller = new AbortController();
  #committed = false;
  #started = false;
  #settled = false;

  /** Aborted when the operation is cancelled. */
  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /** True once `commit()` succeeded. */
  get committed(): boolean {
    return this.#committed;
  }

  /** True once the operation started running. */
  get started(): boolean {
    return this.#started;
  }

  /** True once it has finished (any outcome). */
  get settled(): boolean {
    return this.#settled;
  }

  /** Throws `cancelled` if the operation was cancelled; otherwise makes it immune to later cancellation. */
  commit(): void {
    if (this.#controller.signal.aborted) throw BridgeError.cancelled();
    this.#committed = true;
  }

  /** Throws `cancelled` if the operation was cancelled (without committing). */
  throwIfCancelled(): void {
    if (this.#controller.signal.aborted) throw BridgeError.cancelled();
  }

  /** Cancels the operation. Returns true when it counted (not committed and not finished). */
  cancel(): boolean {
    if (this.#committed || this.#settled || this.#controller.signal.aborted) return false;
    this.#controller.abort(BridgeError.cancelled());
    return true;
  }

  /** @internal */
  markStarted(): void {
    this.#started = true;
  }

  /** @internal */
  markSettled(): void {
    this.#settled = true;
  }
}

interface Item {
  op: Operation;
  work: (op: Operation) => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/**
 * A serial queue of operations.
 *
 * @example
 * ```ts
 * import { WorkQueue } from "./work_queue.ts";
 * const queue = new WorkQueue();
 * const { promise } = queue.schedule(async (op) => {
 *   op.commit();
 *   return 42;
 * });
 * await promise; // 42
 * ```
 */
export class WorkQueue {
  #items: Item[] = [];
  #head = 0;
  #running = false;
  readonly #ops = new Set<Operation>();
  #idleWaiters: Array<() => void> = [];

  /** Operations running or waiting. */
  get pending(): number {
    return this.#ops.size;
  }

  /** True when an operation is running or waiting. */
  get busy(): boolean {
    return this.#ops.size > 0;
  }

  /** Schedules `work` after every earlier operation. */
  schedule<T>(work: (op: Operation) => Promise<T> | T): { op: Operation; promise: Promise<T> } {
    const op = new Operation();
    this.#ops.add(op);
    let resolve!: (value: unknown) => void;
    let reject!: (error: unknown) => void;
    const promise = new Promise<T>((res, rej) => {
      resolve = res as (value: unknown) => void;
      reject = rej;
    });
    this.#items.push({ op, work, resolve, reject });
    if (!this.#running) {
      // Start on a microtask: the handler that scheduled the work finishes first (arrival order).
      this.#running = true;
      queueMicrotask(() => this.#drain());
    }
    return { op, promise };
  }

  async #drain(): Promise<void> {
    this.#running = true;
    while (this.#head < this.#items.length) {
      const item = this.#items[this.#head];
      this.#items[this.#head++] = undefined as unknown as Item;
      if (this.#head > 1024 && this.#head * 2 > this.#items.length) {
        this.#items = this.#items.slice(this.#head);
        this.#head = 0;
      }
      const op = item.op;
      if (op.signal.aborted) {
        this.#settle(op);
        item.reject(BridgeError.cancelled("The request was cancelled before it started."));
        continue;
      }
      op.markStarted();
      try {
        let result = item.work(op);
        if (result instanceof Promise) result = await result;
        this.#settle(op);
        if (op.signal.aborted && !op.committed) item.reject(BridgeError.cancelled());
        else item.resolve(result);
      } catch (error) {
        this.#settle(op);
        item.reject(error);
      }
    }
    this.#items = [];
    this.#head = 0;
    this.#running = false;
    const waiters = this.#idleWaiters;
    this.#idleWaiters = [];
    for (const w of waiters) w();
  }

  #settle(op: Operation): void {
    op.markSettled();
    this.#ops.delete(op);
  }

  /** Cancels every running and waiting operation; returns how many were not yet committed. */
  cancelAll(): number {
    let n = 0;
    for (const op of this.#ops) if (op.cancel()) n++;
    return n;
  }

  /** Resolves when every operation scheduled so far has settled. */
  idle(): Promise<void> {
    if (!this.#running) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }
}
