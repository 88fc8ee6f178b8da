/**
 * A bounded pool of context sequences. Each sequence keeps its own KV cache, so a session that gets "its"
 * sequence back only evaluates what its new prompt adds. When every sequence is busy, callers wait in
 * arrival order (never an error); a waiting caller whose signal aborts leaves the queue at once.
 * @module
 */
import { BridgeError } from "../protocol/errors.ts";

/** A sequence handed out by the pool until `release()`. */
export interface SequenceLease<S> {
  readonly sequence: S;
  /** Whether the sequence last served the same owner (its cache holds the owner's previous prompt). */
  readonly warm: boolean;
  /** Gives the sequence back (idempotent). */
  release(): void;
}

interface Slot<S> {
  readonly sequence: S;
  owner: object | null;
  busy: boolean;
  lastUsed: number;
}

interface Waiter<S> {
  readonly owner: object;
  readonly resolve: (lease: SequenceLease<S>) => void;
  readonly reject: (error: BridgeError) => void;
  readonly signal: AbortSignal;
  readonly onAbort: () => void;
}

/**
 * Hands out up to `size` sequences, created on demand by `create`. A free sequence last used by the same
 * owner is preferred, then an unused one, then the least recently used one (whose owner then loses its
 * cache).
 *
 * @example
 * ```ts
 * import { SequencePool } from "./llama_pool.ts";
 * let n = 0;
 * const pool = new SequencePool(2, () => ({ id: ++n }));
 * const owner = {};
 * const lease = await pool.acquire(owner, new AbortController().signal);
 * lease.release();
 * (await pool.acquire(owner, new AbortController().signal)).warm; // true
 * ```
 */
export class SequencePool<S> {
  readonly #size: number;
  readonly #create: () => S;
  readonly #slots: Slot<S>[] = [];
  readonly #waiters: Waiter<S>[] = [];
  #clock = 0;
  #closed = false;

  /** A pool of at most `size` sequences made by `create`. */
  constructor(size: number, create: () => S) {
    this.#size = size;
    this.#create = create;
  }

  /** Sequences in use. */
  get busy(): number {
    return this.#slots.filter((slot) => slot.busy).length;
  }

  /** Callers waiting for a sequence. */
  get waiting(): number {
    return this.#waiters.length;
  }

  /** Whether {@link close} was called: the context behind the sequences is being unloaded. */
  get closed(): boolean {
    return this.#closed;
  }

  /** Hands out nothing more (only for an idle pool: nothing busy, nobody waiting). */
  close(): void {
    this.#closed = true;
  }

  /**
   * The owner's sequence when free, else another free one, else waits. Rejects `cancelled` on abort, and
   * `model_unavailable` once the pool is {@link closed} (the caller opens the model's context again).
   */
  acquire(owner: object, signal: AbortSignal): Promise<SequenceLease<S>> {
    if (signal.aborted) return Promise.reject(BridgeError.cancelled());
    if (this.#closed) {
      return Promise.reject(BridgeError.of("model_unavailable", "The model's context was unloaded."));
    }
    const slot = this.#freeSlot(owner);
    if (slot !== null) return Promise.resolve(this.#lease(slot, owner));
    return new Promise((resolve, reject) => {
      const waiter: Waiter<S> = {
        owner,
        resolve,
        reject,
        signal,
        onAbort: () => {
          const index = this.#waiters.indexOf(waiter);
          if (index >= 0) this.#waiters.splice(index, 1);
          reject(BridgeError.cancelled());
        },
      };
      signal.addEventListener("abort", waiter.onAbort, { once: true });
      this.#waiters.push(waiter);
    });
  }

  /** Every sequence created so far (for disposal). */
  sequences(): S[] {
    return this.#slots.map((slot) => slot.sequence);
  }

  #freeSlot(owner: object): Slot<S> | null {
    let best: Slot<S> | null = null;
    for (const slot of this.#slots) {
      if (slot.busy) continue;
      if (slot.owner === owner) return slot;
      if (best === null || slot.lastUsed < best.lastUsed) best = slot;
    }
    if (this.#slots.length < this.#size) {
      const slot: Slot<S> = { sequence: this.#create(), owner: null, busy: false, lastUsed: -1 };
      this.#slots.push(slot);
      return slot;
    }
    return best;
  }

  #lease(slot: Slot<S>, owner: object): SequenceLease<S> {
    const warm = slot.owner === owner;
    slot.busy = true;
    slot.owner = owner;
    let released = false;
    return {
      sequence: slot.sequence,
      warm,
      release: () => {
        if (released) return;
        released = true;
        slot.busy = false;
        slot.lastUsed = ++this.#clock;
        this.#serveWaiter();
      },
    };
  }

  #serveWaiter(): void {
    const waiter = this.#waiters.shift();
    if (waiter === undefined) return;
    waiter.signal.removeEventListener("abort", waiter.onAbort);
    const slot = this.#freeSlot(waiter.owner);
    // A slot was just freed, so there is one.
    waiter.resolve(this.#lease(slot!, waiter.owner));
  }
}
