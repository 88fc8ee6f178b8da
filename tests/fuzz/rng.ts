/**
 * A small seeded pseudo-random generator (mulberry32) with the helpers the fuzzer needs. The same seed
 * always gives the same sequence, so a failing fuzz run is replayed with `--seed N`.
 */

/** A seeded random source. */
export class Rng {
  #state: number;

  /** Creates a generator for `seed` (any integer; only the low 32 bits matter). */
  constructor(seed: number) {
    this.#state = (seed >>> 0) ^ 0x9e3779b9;
  }

  /** A float in [0, 1). */
  next(): number {
    let t = (this.#state = (this.#state + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** An integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }

  /** An integer in [lo, hi]. */
  range(lo: number, hi: number): number {
    return lo + this.int(hi - lo + 1);
  }

  /** True with probability `p`. */
  chance(p: number): boolean {
    return this.next() < p;
  }

  /** One element of `items`. */
  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)];
  }

  /** Picks by weight: `[[weight, value], …]`. */
  weighted<T>(table: ReadonlyArray<readonly [number, T]>): T {
    let total = 0;
    for (const [w] of table) total += w;
    let x = this.next() * total;
    for (const [w, v] of table) {
      x -= w;
      if (x < 0) return v;
    }
    return table[table.length - 1][1];
  }

  /** A short printable ASCII word. */
  word(max = 8): string {
    const n = this.range(1, max);
    let s = "";
    for (let i = 0; i < n; i++) s += String.fromCharCode(97 + this.int(26));
    return s;
  }

  /** Random bytes. */
  bytes(n: number): Uint8Array {
    const out = new Uint8Array(n);
    for (let i = 0; i < n; i++) out[i] = this.int(256);
    return out;
  }
}
