/**
 * Test helpers: the path of the plugin library the FFI tests load — the C test double built by
 * `deno task build:double`, or any library with the same script semantics named by `OAM_FM_TEST_LIBRARY`
 * (`.ci/run` points it at the Swift-built library, whose stand-in plays the same scripts off macOS).
 * @module
 */

const BUILT_DOUBLE = decodeURIComponent(new URL("../../.build/libfm_double.so", import.meta.url).pathname);

function override(): string | undefined {
  try {
    return Deno.env.get("OAM_FM_TEST_LIBRARY") || undefined;
  } catch {
    return undefined; // no --allow-env: the built double
  }
}

/** Absolute path of the library under test (`.build/libfm_double.so` unless overridden). */
export const DOUBLE_PATH: string = override() ?? BUILT_DOUBLE;

/** Fails early with a helpful message when the library was not built. */
export function requireDouble(): string {
  try {
    Deno.statSync(DOUBLE_PATH);
  } catch {
    throw new Error(
      DOUBLE_PATH === BUILT_DOUBLE
        ? `${DOUBLE_PATH} is missing: run 'deno task build:double' first.`
        : `${DOUBLE_PATH} (OAM_FM_TEST_LIBRARY) is missing.`,
    );
  }
  return DOUBLE_PATH;
}
