/**
 * A serial work queue with commit points, used for per-session and per-NPC ordering (§2.3).
 *
 * - Operations run strictly one after another, in schedule order. When the queue is idle, a new operation
 *   starts on the next microtask (after the handler that scheduled it has returned).
 * - An operation cancelled before it starts fails with `-32009` "The request was cancelled before it started."
 * - A running operation sees its `signal` aborted. If it still returns successfully without having called
 *   `commit()`, it is reported as cancelled. After `commit()` it is immune to cancellation.
 * - Its outcome is a {@link Pending}, whose one consumer (the engine, answering the request) is called the
 *   moment the work finishes: work that finishes synchronously is answered without a promise per request.
 * @module
 */
import { BridgeError } from "../protocol/errors.ts";
import { wakeAll } from "./waiters.ts";

/**
 * Receives an outcome: `(true, value)` or `(false, error)`.
 *
 * @example
 * ```ts
 * import { Pending, type PendingConsumer } from "@open-apple-models/bridge/engine";
 * const seen: string[] = [];
 * const log: PendingConsumer<string> = (ok, value) => seen.push(ok ? `done: ${value}` : `failed: ${value}`);
 * const pending = new Pending<string>();
 * pending.consume(log);
 * pending.resolve("saved"); // seen: ["done: saved"]
 * ```
 */
export type PendingConsumer<T> = (ok: boolean, valueOrError: T | unknown) => void;

/**
 * A result that will be set once, read by one consumer.
 *
 * @example
 * ```ts
 * import { Pending } from "@open-apple-models/bridge/engine";
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

/**
 * What {@link WorkQueue} does to the operations it runs, set by Operation's static block: the state stays in
 * private fields, so an operation's public surface is only what its work may use.
 */
interface OperationInternals {
  /** Binds the work and the outcome of a queued operation. */
  bind(op: Operation, work: (op: Operation) => unknown, outcome: Pending<unknown>): void;
  /** Runs the bound work (once). */
  run(op: Operation): unknown;
  /** The bound outcome. */
  outcome(op: Operation): Pending<unknown>;
  markStarted(op: Operation): void;
  markSettled(op: Operation): void;
}

let internals: OperationInternals;

/**
 * The handle a running operation uses to observe cancellation and to commit.
 *
 * @example
 * ```ts
 * import { type Operation, WorkQueue } from "@open-apple-models/bridge/engine";
 * const queue = new WorkQueue();
 * async function save(op: Operation): Promise<string> {
 *   await new Promise((resolve) => setTimeout(resolve, 10)); // cancellable until it commits
 *   if (op.cancelled) throw op.signal.reason;
 *   op.commit(); // from here on, cancelling no longer stops it
 *   return "saved";
 * }
 * await queue.schedule(save).promise; // "saved"
 * ```
 */
export class Operation {
  // The controller is made on first use of `signal`: operations that never look at it (or only check
  // `cancelled`) cost no AbortController/EventTarget.
  #controller: AbortController | null = null;
  #reason: BridgeError | null = null;
  #committed = false;
  #started = false;
  #settled = false;
  /** The queued work and where its outcome goes (the operation is its own queue item). */
  #work: ((op: Operation) => unknown) | null = null;
  #outcome: Pending<unknown> | null = null;

  /** Aborted when the operation is cancelled. */
  get signal(): AbortSignal {
    if (this.#controller === null) {
      this.#controller = new AbortController();
      if (this.#reason !== null) this.#controller.abort(this.#reason);
    }
    return this.#controller.signal;
  }

  /** True once the operation was cancelled (before or after it started). */
  get cancelled(): boolean {
    return this.#reason !== null;
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
    if (this.#reason !== null) throw BridgeError.cancelled();
    this.#committed = true;
  }

  /** Throws `cancelled` if the operation was cancelled (without committing). */
  throwIfCancelled(): void {
    if (this.#reason !== null) throw BridgeError.cancelled();
  }

  /** Cancels the operation. Returns true when it counted (not committed and not finished). */
  cancel(): boolean {
    if (this.#committed || this.#settled || this.#reason !== null) return false;
    this.#reason = BridgeError.cancelled();
    this.#controller?.abort(this.#reason);
    return true;
  }

  static {
    internals = {
      bind: (op, work, outcome) => {
        op.#work = work;
        op.#outcome = outcome;
      },
      run: (op) => {
        const work = op.#work!;
        op.#work = null;
        return work(op);
      },
      outcome: (op) => op.#outcome!,
      markStarted: (op) => {
        op.#started = true;
      },
      markSettled: (op) => {
        op.#settled = true;
      },
    };
  }
}

/**
 * A serial queue of operations.
 *
 * @example
 * ```ts
 * import { WorkQueue } from "@open-apple-models/bridge/engine";
 * const queue = new WorkQueue();
 * const { promise } = queue.schedule(async (op) => {
 *   op.commit();
 *   return 42;
 * });
 * await promise; // 42
 * ```
 */
export class WorkQueue {
  /** Waiting operations from `#head` on (consumed slots are cleared and the array compacted now and then). */
  #items: Operation[] = [];
  #head = 0;
  /** The running operation, if any. */
  #current: Operation | null = null;
  #running = false;
  readonly #idleWaiters: Array<() => void> = [];

  /** Operations running or waiting. */
  get pending(): number {
    return this.#items.length - this.#head + (this.#current === null ? 0 : 1);
  }

  /** True when an operation is running or waiting. */
  get busy(): boolean {
    return this.pending > 0;
  }

  /** Schedules `work` after every earlier operation; `promise` settles with its outcome. */
  schedule<T>(work: (op: Operation) => Promise<T> | T): { op: Operation; promise: Promise<T> } {
    const { op, outcome } = this.enqueue(work);
    return { op, promise: outcome.toPromise() };
  }

  /**
   * {@link schedule} without a promise: `outcome` is set (and its consumer called) the moment the work
   * finishes, so work that finishes synchronously is answered within the same microtask.
   */
  enqueue<T>(work: (op: Operation) => Promise<T> | T): { op: Operation; outcome: Pending<T> } {
    const op = new Operation();
    const outcome = new Pending<T>();
    internals.bind(op, work, outcome as Pending<unknown>);
    this.#items.push(op);
    if (!this.#running) {
      // Start on a microtask: the handler that scheduled the work finishes first (arrival order).
      this.#running = true;
      queueMicrotask(() => this.#drain());
    }
    return { op, outcome };
  }

  async #drain(): Promise<void> {
    while (this.#head < this.#items.length) {
      const op = this.#items[this.#head];
      this.#items[this.#head++] = undefined as unknown as Operation;
      if (this.#head > 1024 && this.#head * 2 > this.#items.length) {
        this.#items = this.#items.slice(this.#head);
        this.#head = 0;
      }
      if (op.cancelled) {
        internals.markSettled(op);
        internals.outcome(op).reject(BridgeError.cancelled("The request was cancelled before it started."));
        continue;
      }
      this.#current = op;
      internals.markStarted(op);
      let failed = false;
      let result: unknown;
      try {
        result = internals.run(op);
        if (result instanceof Promise) result = await result;
      } catch (error) {
        failed = true;
        result = error;
      }
      this.#settle(op);
      // The consumer runs here (outside the try: its own failures are not the work's).
      if (failed) internals.outcome(op).reject(result);
      else if (op.cancelled && !op.committed) internals.outcome(op).reject(BridgeError.cancelled());
      else internals.outcome(op).resolve(result);
    }
    this.#items = [];
    this.#head = 0;
    this.#running = false;
    wakeAll(this.#idleWaiters);
  }

  #settle(op: Operation): void {
    internals.markSettled(op);
    this.#current = null;
  }

  /** Cancels every running and waiting operation; returns how many were not yet committed. */
  cancelAll(): number {
    let n = 0;
    if (this.#current?.cancel()) n++;
    const items = this.#items;
    for (let i = this.#head; i < items.length; i++) if (items[i].cancel()) n++;
    return n;
  }

  /** Resolves when every operation scheduled so far has settled. */
  idle(): Promise<void> {
    if (!this.#running) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }
}
