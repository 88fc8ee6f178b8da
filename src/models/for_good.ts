/**
 * Failures that waiting cannot cure for the life of this process: a Deno permission it was not granted (a
 * grant cannot be added while it runs), a model id a server does not offer, credentials a server refuses.
 * A backend marks such an error where it knows so (no message text is matched); its availability check then
 * says `permanent: true`, which `oam serve` turns into a 503 that asks no retry.
 * @module
 */

const MARKED = new WeakSet<object>();

/**
 * Marks `error` as a failure that waiting cannot cure; returns it (so `throw forGood(…)` reads as one).
 *
 * @example
 * ```ts
 * import { forGood, isForGood } from "./for_good.ts";
 * const error = forGood(new Error("Reading the model file needs --allow-read."));
 * isForGood(error); // true
 * ```
 */
export function forGood<T extends object>(error: T): T {
  MARKED.add(error);
  return error;
}

/**
 * Whether `error` was marked with {@link forGood}.
 *
 * @example
 * ```ts
 * import { isForGood } from "./for_good.ts";
 * isForGood(new Error("Connection refused")); // false
 * ```
 */
export function isForGood(error: unknown): boolean {
  return typeof error === "object" && error !== null && MARKED.has(error);
}

/**
 * Whether `error` is Deno's refusal of a permission this process lacks (`Requires net access to "…"`).
 *
 * @example
 * ```ts
 * import { isMissingGrant } from "./for_good.ts";
 * isMissingGrant(new Deno.errors.NotCapable('Requires net access to "localhost:8080"')); // true
 * ```
 */
export function isMissingGrant(error: unknown): boolean {
  return error instanceof Deno.errors.NotCapable || error instanceof Deno.errors.PermissionDenied;
}
