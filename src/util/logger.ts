/**
 * A leveled logger that writes to stderr only (stdout is the protocol).
 * @module
 */
import { stderrQueue } from "./stderr_queue.ts";

/**
 * Log levels, most verbose first.
 *
 * @example
 * ```ts
 * import { LOG_LEVELS } from "@open-apple-models/bridge/engine";
 * LOG_LEVELS.join(", "); // "debug, info, warning, error, off"
 * ```
 */
export const LOG_LEVELS = ["debug", "info", "warning", "error", "off"] as const;

/**
 * One of {@link LOG_LEVELS}: a logger prints its level and the ones after it.
 *
 * @example
 * ```ts
 * import { type LogLevel, stderrLogger } from "@open-apple-models/bridge/engine";
 * const level: LogLevel = "error";
 * const log = stderrLogger(level, "my-game"); // prints errors only
 * ```
 */
export type LogLevel = typeof LOG_LEVELS[number];

/**
 * Something that logs. The bridge logs to it, never to stdout (the protocol).
 *
 * @example
 * ```ts
 * import { BridgeEngine, type Logger } from "@open-apple-models/bridge/engine";
 * const seen: string[] = [];
 * const logger: Logger = {
 *   debug: () => {},
 *   info: () => {},
 *   warning: (message) => seen.push(`warning: ${message}`),
 *   error: (message) => seen.push(`error: ${message}`),
 * };
 * const engine = new BridgeEngine({ logger }, () => {});
 * ```
 */
export interface Logger {
  /** Logs a debug message. */
  debug(message: string): void;
  /** Logs an informational message. */
  info(message: string): void;
  /** Logs a warning. */
  warning(message: string): void;
  /** Logs an error. */
  error(message: string): void;
}

/** Control characters (but newline and tab) and bidi controls: what a terminal would act on. */
// deno-lint-ignore no-control-regex -- control characters are what it looks for
const UNPRINTABLE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/**
 * `message` with control and bidi characters written as `\uXXXX` (newlines and tabs stay): log lines quote
 * what clients sent (an id, an origin), which must not reach the terminal as escape sequences.
 */
function terminalSafe(message: string): string {
  return message.replace(UNPRINTABLE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/**
 * A logger printing "[<tag>] <level>: <message>" to stderr for levels at or above `level`, control and bidi
 * characters in the message written as `\uXXXX` (newlines and tabs stay).
 *
 * @example
 * ```ts
 * import { stderrLogger } from "@open-apple-models/bridge/engine";
 * const log = stderrLogger("warning", "oam stdio");
 * log.warning("Ignoring a response to unknown or finished request 't-9'.");
 * ```
 */
export function stderrLogger(level: LogLevel, tag = "open-apple-models"): Logger {
  const min = LOG_LEVELS.indexOf(level);
  // Queued, never a blocking write: a game that pipes stderr and never reads it must not stop the bridge.
  const write = (l: LogLevel) => (message: string) => {
    if (LOG_LEVELS.indexOf(l) < min) return;
    stderrQueue.push(`[${tag}] ${l}: ${terminalSafe(message)}\n`);
  };
  return { debug: write("debug"), info: write("info"), warning: write("warning"), error: write("error") };
}

/**
 * A logger that drops everything (the engine's default logs errors to stderr).
 *
 * @example
 * ```ts
 * import { BridgeEngine, silentLogger } from "@open-apple-models/bridge/engine";
 * const engine = new BridgeEngine({ logger: silentLogger }, () => {});
 * ```
 */
export const silentLogger: Logger = { debug() {}, info() {}, warning() {}, error() {} };
