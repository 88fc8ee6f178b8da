/**
 * What a failed `fetch` says: its message and the connection's own reason, which Deno keeps in `cause` behind a
 * bare "fetch failed" (a name that does not resolve, a refused connection).
 * @module
 */

/**
 * `error`'s message, followed by its cause's when it has one (without the "error sending request for url (…)"
 * preamble, which repeats the URL the caller names anyway).
 *
 * @example
 * ```ts
 * import { fetchFailure } from "./fetch_failure.ts";
 * const error = new TypeError("fetch failed", { cause: new Error("Connection refused (os error 111)") });
 * fetchFailure(error); // "fetch failed: Connection refused (os error 111)"
 * ```
 */
export function fetchFailure(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause.message : "";
  if (cause === "") return text;
  return `${text}: ${cause.replace(/^error sending request for url \([^)]*\): /, "")}`;
}
