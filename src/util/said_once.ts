/**
 * A bounded "said once" memory: for warnings a long-running process says once per thing (a schema llama.cpp
 * refused, …), without keeping every thing it was ever told about.
 * @module
 */

/**
 * Remembers the last `limit` keys it was asked about; {@link SaidOnce.first} is true for a key it does not
 * remember. Past the limit the key asked about longest ago is forgotten (and would be said again).
 *
 * @example
 * ```ts
 * import { SaidOnce } from "./said_once.ts";
 * const said = new SaidOnce(2);
 * said.first("a"); // true: say it
 * said.first("a"); // false: said already
 * ```
 */
export class SaidOnce {
  readonly #keys = new Set<string>();
  readonly #limit: number;

  /** A memory of at most `limit` keys (at least 1). */
  constructor(limit: number) {
    this.#limit = Math.max(1, limit);
  }

  /** True the first time `key` is asked about (while remembered); it is remembered from then on. */
  first(key: string): boolean {
    const known = this.#keys.delete(key); // re-added below: the latest
    if (!known && this.#keys.size >= this.#limit) this.#keys.delete(this.#keys.values().next().value!);
    this.#keys.add(key);
    return !known;
  }

  /** How many keys are remembered. */
  get size(): number {
    return this.#keys.size;
  }
}
