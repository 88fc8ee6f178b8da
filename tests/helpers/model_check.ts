/**
 * Helpers for the model-based (stateful property) tests: a seeded run loop that names the seed and the last
 * steps when a run fails, and a key-order-independent canonical JSON text for comparing wire messages with a
 * reference model's expectations (own `__proto__` keys included).
 *
 * Replay a failure with `OAM_MODEL_SEED=<seed> deno test --allow-all <file>`; `OAM_MODEL_STEPS=<n>` changes the
 * number of steps per run, `OAM_MODEL_TRACE=<n>` how many of the last steps a failure shows (12), and
 * `OAM_MODEL_DEBUG=1` adds the model's expectations to the trace (where a test supports it).
 */
import { Rng } from "../fuzz/rng.ts";

export { Rng };

/** The seeds to run: `OAM_MODEL_SEED` alone when set, else `defaults`. */
export function modelSeeds(defaults: number[]): number[] {
  const given = Deno.env.get("OAM_MODEL_SEED");
  return given === undefined ? defaults : [Number(given)];
}

/** Steps per run: `OAM_MODEL_STEPS` when set, else `steps`. */
export function modelSteps(steps: number): number {
  const given = Deno.env.get("OAM_MODEL_STEPS");
  return given === undefined ? steps : Number(given);
}

/** A trace of the steps of one run, the last of which are shown when the run fails. */
export class Trace {
  readonly #lines: string[] = [];

  /** Records one step (long lines are shortened). */
  add(line: string): void {
    this.#lines.push(line.length > 400 ? `${line.slice(0, 400)}…(${line.length} chars)` : line);
  }

  /** The last `n` steps, one a line. */
  tail(n = Number(Deno.env.get("OAM_MODEL_TRACE") ?? 12)): string {
    return this.#lines.slice(-n).join("\n");
  }

  get length(): number {
    return this.#lines.length;
  }
}

/**
 * Runs `body` once per seed; a failure is rethrown with the seed, the replay command and the last steps of
 * the trace.
 */
export async function forEachSeed(
  file: string,
  seeds: number[],
  body: (rng: Rng, trace: Trace) => Promise<void>,
): Promise<void> {
  for (const seed of seeds) {
    const trace = new Trace();
    try {
      await body(new Rng(seed), trace);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      throw new Error(
        `model run failed with seed ${seed} at step ${trace.length} ` +
          `(replay: OAM_MODEL_SEED=${seed} deno test --allow-all ${file})\nlast steps:\n${trace.tail()}\n\n${message}`,
        { cause: error },
      );
    }
  }
}

/** JSON text with object keys sorted (own `__proto__` keys kept as data), for order-independent comparison. */
export function canonical(value: unknown): string {
  if (value === undefined) return "undefined";
  if (value === null || typeof value !== "object") return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  const keys = Object.keys(value).sort();
  const object = value as Record<string, unknown>;
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical(object[k])}`).join(",")}}`;
}

/** Sets an own enumerable property (safe for `__proto__`). */
export function put(object: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true });
}

/** An own property's value, or `undefined`. */
export function own(object: Record<string, unknown>, key: string): unknown {
  return Object.hasOwn(object, key) ? object[key] : undefined;
}

/** A deep copy of a JSON value (own `__proto__` keys kept as data). */
export function clone<T>(value: T): T {
  if (value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) return value.map(clone) as T;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) put(out, key, clone((value as Record<string, unknown>)[key]));
  return out as T;
}

/** True for a JSON object (not a list, not null). */
export function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** Asserts that two values are equal as canonical JSON; the message shows both, shortened to 1500 characters. */
export function assertSame(actual: unknown, expected: unknown, what: string): void {
  const a = canonical(actual);
  const e = canonical(expected);
  if (a === e) return;
  const cut = (s: string) => s.length > 1500 ? `${s.slice(0, 1500)}…(${s.length} chars)` : s;
  throw new Error(`${what}\n  actual:   ${cut(a)}\n  expected: ${cut(e)}`);
}
