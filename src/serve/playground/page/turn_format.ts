/**
 * How the conversation words a turn's and a bark's times ("340 ms", "thinking… 12 s") and takes what a failed
 * request threw as a {@link BridgeError} (its code and message shown under the entry).
 * @module
 */
import { BridgeError } from "../../../protocol/errors.ts";

/**
 * What a failed turn or bark threw, as a BridgeError: a BridgeError as it is, anything else `internal_error`
 * with its message.
 *
 * @example
 * ```ts
 * import { describeError } from "./turn_format.ts";
 * describeError(new Error("boom")).dataCode; // "internal_error"
 * ```
 */
export function describeError(error: unknown): BridgeError {
  if (error instanceof BridgeError) return error;
  return BridgeError.internal(error instanceof Error ? error.message : String(error));
}

/**
 * A time in whole milliseconds, or "–" when it never came.
 *
 * @example
 * ```ts
 * import { ms } from "./turn_format.ts";
 * ms(339.6); // "340 ms"
 * ms(undefined); // "–"
 * ```
 */
export function ms(value: number | undefined): string {
  return value === undefined ? "–" : `${Math.round(value)} ms`;
}

/**
 * "thinking… 12 s": how long the model has been working since `since` (a `Date.now()` time), in whole seconds.
 *
 * @example
 * ```ts
 * import { thinkingFor } from "./turn_format.ts";
 * thinkingFor(Date.now()); // "thinking… 0 s"
 * ```
 */
export function thinkingFor(since: number): string {
  return `thinking… ${Math.max(0, Math.floor((Date.now() - since) / 1000))} s`;
}

/** Characters of an NPC's name the page shows before it cuts the name with "…". */
const SHOWN_NAME = 40;

/**
 * An NPC's name as the page shows it where it names the NPC (the conversation, the status line, the result
 * line): trimmed as the bridge trims it, and cut with "…" past 40 characters (a paste into the wrong field
 * would fill the conversation).
 *
 * @example
 * ```ts
 * import { shownName } from "./turn_format.ts";
 * shownName(" Mira "); // "Mira"
 * shownName("G".repeat(5000)).length; // 41
 * ```
 */
export function shownName(name: string): string {
  const chars = [...name.trim()];
  return chars.length > SHOWN_NAME ? `${chars.slice(0, SHOWN_NAME).join("")}…` : chars.join("");
}
