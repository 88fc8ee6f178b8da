/**
 * Test helpers: the path of the C test double built by `deno task build:double`.
 * @module
 */

/** Absolute path of `.build/libfm_double.so`. */
export const DOUBLE_PATH: string = decodeURIComponent(
  new URL("../../.build/libfm_double.so", import.meta.url).pathname,
);

/** Fails early with a helpful message when the double was not built. */
export function requireDouble(): string {
  try {
    Deno.statSync(DOUBLE_PATH);
  } catch {
    throw new Error(`${DOUBLE_PATH} is missing: run 'deno task build:double' first.`);
  }
  return DOUBLE_PATH;
}
