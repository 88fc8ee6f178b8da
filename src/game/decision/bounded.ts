/**
 * Runs asynchronous work over a list with a bound on how many items run at once.
 * @module
 */

/**
 * Calls `run(item, index)` for every item with at most `limit` calls in flight, starting them in list
 * order, and resolves with the results in list order. `run` should not reject (capture failures in its
 * result): a rejection rejects the returned promise at once while the other calls go on.
 *
 * @example
 * ```ts
 * const doubled = await mapBounded([1, 2, 3], { limit: 2, run: (n) => Promise.resolve(n * 2) }); // [2, 4, 6]
 * ```
 */
export async function mapBounded<T, R>(
  items: readonly T[],
  options: { limit: number; run: (item: T, index: number) => Promise<R> },
): Promise<R[]> {
  const { limit, run } = options;
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await run(items[index], index);
    }
  };
  const workers = Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker);
  await Promise.all(workers);
  return results;
}
