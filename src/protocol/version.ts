/**
 * The protocol version this bridge speaks and the server identity `initialize` reports.
 * @module
 */

/** Server name and version reported by `initialize`. */
export const SERVER_INFO = { name: "open-apple-models", version: "0.1.0" } as const;
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
