/**
 * The protocol version this bridge speaks and the server identity `initialize` reports. The version is the
 * package's: `deno.json`'s `version`, written here as a literal (tests/release/version_test.ts fails when the
 * two differ) because the playground page bundles this module, and importing deno.json would bundle the whole
 * file (its tasks and settings) into the page.
 * @module
 */

/**
 * Server name and version reported by `initialize` (`oam --version` prints the same version).
 *
 * @example
 * ```ts
 * import { SERVER_INFO } from "@open-apple-models/bridge/engine";
 * SERVER_INFO.name; // "open-apple-models"
 * ```
 */
export const SERVER_INFO: { readonly name: string; readonly version: string } = {
  name: "open-apple-models",
  version: "0.1.0",
};
/**
 * Protocol version spoken.
 *
 * @example
 * ```ts
 * import { PROTOCOL_VERSION } from "@open-apple-models/bridge";
 * PROTOCOL_VERSION; // "1.0", sent with initialize
 * ```
 */
export const PROTOCOL_VERSION = "1.0";
