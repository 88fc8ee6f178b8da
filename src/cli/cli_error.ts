/**
 * Errors and exit codes of the human-facing commands. Every failure is a {@link CliError} with a stable
 * `code` (a CLI code such as `usage`, or the bridge's `data.code`) and an exit code derived from it.
 * @module
 */
import { BridgeError } from "../protocol/errors.ts";
import type { JsonObject } from "../protocol/json.ts";
import { type Style, writeErr, writeOut } from "./tty.ts";

/** Exit codes (stable; listed in `--help` of every model command). */
export const EXIT = {
  ok: 0,
  failure: 1,
  usage: 2,
  unavailable: 3,
  blocked: 4,
  contextExceeded: 5,
  rateLimited: 6,
  toolCalls: 10,
  interrupted: 130,
} as const;

/** The exit code table as help text. */
export const EXIT_CODES_HELP = `Exit codes:
  0    success; also when stdout's reader stops early ('| head'): oam ends quietly, as Unix tools do
  1    failure (generation_failed, tool_failed, io_error: a file could not be written, …)
  2    usage or invalid input (usage, invalid_input: an input file that is missing, unreadable, not
       UTF-8 or not valid JSON, invalid_params, invalid_schema, invalid_request, unsupported_language,
       missing_tool_output)
  3    model unavailable (model_unavailable)
  4    blocked by the guardrails or refused (guardrail_violation, refusal)
  5    conversation too long (context_size_exceeded)
  6    rate limited (rate_limited)
  10   client tool calls are pending (oam respond; resume with --resume and --tool-output)
  130  interrupted (Ctrl-C) or cancelled
`;

const BY_CODE: Record<string, number> = {
  usage: EXIT.usage,
  invalid_input: EXIT.usage,
  invalid_params: EXIT.usage,
  invalid_schema: EXIT.usage,
  invalid_request: EXIT.usage,
  unsupported_language: EXIT.usage,
  missing_tool_output: EXIT.usage,
  parse_error: EXIT.usage,
  model_unavailable: EXIT.unavailable,
  guardrail_violation: EXIT.blocked,
  refusal: EXIT.blocked,
  context_size_exceeded: EXIT.contextExceeded,
  rate_limited: EXIT.rateLimited,
  tool_calls: EXIT.toolCalls,
  cancelled: EXIT.interrupted,
  interrupted: EXIT.interrupted,
};

/** The exit code of an error code (`data.code` or CLI code); 1 for anything not listed. */
export function exitCodeFor(code: string): number {
  return Object.hasOwn(BY_CODE, code) ? BY_CODE[code] : EXIT.failure;
}

/**
 * A command failure with a stable code.
 *
 * @example
 * ```ts
 * import { CliError } from "./cli_error.ts";
 * const error = new CliError("usage", "oam respond needs a prompt.");
 * error.exitCode; // 2
 * ```
 */
export class CliError extends Error {
  /** Stable code: `usage`, `invalid_input`, `io_error`, `missing_tool_output` or a bridge `data.code`. */
  readonly code: string;
  /** Process exit code. */
  readonly exitCode: number;
  /** Extra data (the bridge error's `data` without `code`). */
  readonly data: JsonObject;

  /** Creates an error; the exit code follows from `code` unless given. */
  constructor(code: string, message: string, data: JsonObject = {}, exitCode?: number) {
    super(message);
    this.name = "CliError";
    this.code = code;
    this.data = data;
    this.exitCode = exitCode ?? exitCodeFor(code);
  }

  /** `usage` error (exit 2). */
  static usage(message: string): CliError {
    return new CliError("usage", message);
  }

  /** `invalid_input` error (exit 2). */
  static invalidInput(message: string): CliError {
    return new CliError("invalid_input", message);
  }

  /** `{code, message}` as printed in JSON modes. */
  toJson(): JsonObject {
    return { code: this.code, message: this.message };
  }
}

/** True for a missing Deno permission or an OS permission error. */
export function isPermissionError(error: unknown): boolean {
  return error instanceof Deno.errors.PermissionDenied || error instanceof Deno.errors.NotCapable;
}

/** Maps anything thrown to a CliError (bridge errors keep their `data.code`). */
export function toCliError(error: unknown): CliError {
  if (error instanceof CliError) return error;
  if (error instanceof BridgeError) {
    const { ...data } = error.data;
    return new CliError(error.dataCode, error.message, data);
  }
  if (error instanceof Deno.errors.NotFound || isPermissionError(error)) {
    return new CliError("io_error", (error as Error).message);
  }
  if (error instanceof Deno.errors.IsADirectory || error instanceof Deno.errors.BrokenPipe) {
    return new CliError("io_error", error.message);
  }
  if (error instanceof TypeError && "code" in error && String(error.code).startsWith("ERR_PARSE_ARGS")) {
    return CliError.usage(error.message);
  }
  const message = error instanceof Error ? error.message : String(error);
  return new CliError("failure", message);
}

/** How a command reports: human text, one JSON object, or JSON lines. */
export type OutputMode = "human" | "json" | "events";

/**
 * Reports `error` on stderr — one line `Error: <message> [<code>]` for humans, `{"error": {code, message}}` in
 * JSON modes (and, in events mode, a final `{"type": "error", …}` line on stdout) — and returns its exit code.
 */
export function reportError(error: unknown, how: { mode: OutputMode; style?: Style }): number {
  const { mode, style } = how;
  const e = toCliError(error);
  if (mode === "human") {
    const label = style ? style.red(style.bold("Error:")) : "Error:";
    const code = style ? style.dim(`[${e.code}]`) : `[${e.code}]`;
    writeErr(`${label} ${e.message.replace(/\s*\n\s*/g, " ")} ${code}\n`);
  } else {
    writeErr(`${JSON.stringify({ error: e.toJson() })}\n`);
    if (mode === "events") writeOut(`${JSON.stringify({ type: "error", error: e.toJson() })}\n`);
  }
  return e.exitCode;
}
