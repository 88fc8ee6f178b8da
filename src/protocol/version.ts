/**
 * The protocol version this bridge speaks and the server identity `initialize` reports (its version is the
 * package's, read from deno.json).
 * @module
 */
import packageInfo from "../../deno.json" with { type: "json" };

/**
 * Server name and version reported by `initialize` (`oam --version` prints the same version).
 *
 * @example
 * ```ts
 * import { SERVER_INFO } from "./version.ts";
 * SERVER_INFO.name; // "open-apple-models"
 * ```
 */
export const SERVER_INFO: { readonly name: string; readonly version: string } = {
  name: "open-apple-models",
  version: packageInfo.version,
};
/**
 * Protocol version spoken.
 *
 * @example
 * ```ts
 * import { PROTOCOL_VERSION } from "./version.ts";
 * PROTOCOL_VERSION; // "1.0", sent with initialize
 * ```
 */
export const PROTOCOL_VERSION = "1.0";
