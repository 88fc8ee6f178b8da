/**
 * A serial work queue with commit points, used for per-session and per-NPC ordering (§2.3).
 *
 * - Operations run strictly one after another, in schedule order.
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
  #tail: Promise<void> = Promise.resolve();
  readonly #ops = new Set<Operation>();

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
    const previous = this.#tail;
    const promise = previous.then(async () => {
      if (op.signal.aborted) throw BridgeError.cancelled("The request was cancelled before it started.");
      op.markStarted();
      const result = await work(op);
      if (op.signal.aborted && !op.committed) throw BridgeError.cancelled();
      return result;
    }).finally(() => {
      op.markSettled();
      this.#ops.delete(op);
    });
    this.#tail = promise.then(() => {}, () => {});
    return { op, promise };
  }

  /** Cancels every running and waiting operation; returns how many were not yet committed. */
  cancelAll(): number {
    let n = 0;
    for (const op of this.#ops) if (op.cancel()) n++;
    return n;
  }

  /** Resolves when every operation scheduled so far has settled. */
  idle(): Promise<void> {
    return this.#tail;
  }
}
