/**
 * The bridge's one error type and the protocol's error table (§8).
 * @module
 */
import { isJsonObject, type JsonObject } from "./json.ts";

/**
 * Stable `data.code` strings and their JSON-RPC numbers (PROTOCOL.md §8).
 *
 * @example
 * ```ts
 * import { BridgeError, ERROR_CODES } from "@open-apple-models/bridge";
 * function isMissingNpc(error: unknown): boolean {
 *   return error instanceof BridgeError && error.code === ERROR_CODES.npc_not_found; // -32050
 * }
 * ```
 */
// The type spells the values out: the package's generated reference shows no value of an `as const` object.
export const ERROR_CODES: {
  readonly parse_error: -32700;
  readonly invalid_message: -32600;
  readonly method_not_found: -32601;
  readonly invalid_params: -32602;
  readonly internal_error: -32603;
  readonly model_unavailable: -32001;
  readonly guardrail_violation: -32002;
  readonly refusal: -32003;
  readonly context_size_exceeded: -32004;
  readonly rate_limited: -32005;
  readonly unsupported_language: -32006;
  readonly invalid_schema: -32007;
  readonly tool_failed: -32008;
  readonly cancelled: -32009;
  readonly busy: -32010;
  readonly invalid_request: -32011;
  readonly generation_failed: -32012;
  readonly session_not_found: -32020;
  readonly session_exists: -32021;
  readonly session_limit: -32022;
  readonly shut_down: -32023;
  readonly timeout: -32024;
  readonly npc_not_found: -32050;
  readonly npc_exists: -32051;
  readonly world_not_found: -32052;
  readonly world_exists: -32053;
  readonly world_error: -32054;
  readonly limit_reached: -32055;
  readonly subscription_not_found: -32056;
} = {
  parse_error: -32700,
  invalid_message: -32600,
  method_not_found: -32601,
  invalid_params: -32602,
  internal_error: -32603,
  model_unavailable: -32001,
  guardrail_violation: -32002,
  refusal: -32003,
  context_size_exceeded: -32004,
  rate_limited: -32005,
  unsupported_language: -32006,
  invalid_schema: -32007,
  tool_failed: -32008,
  cancelled: -32009,
  busy: -32010,
  invalid_request: -32011,
  generation_failed: -32012,
  session_not_found: -32020,
  session_exists: -32021,
  session_limit: -32022,
  shut_down: -32023,
  timeout: -32024,
  npc_not_found: -32050,
  npc_exists: -32051,
  world_not_found: -32052,
  world_exists: -32053,
  world_error: -32054,
  limit_reached: -32055,
  subscription_not_found: -32056,
};

/**
 * The codes PROTOCOL.md §8 leaves to extensions' own errors ("Codes -32050…-32056 belong to the game methods;
 * other extensions use -32057…-32099"). A `BridgeError` a handler fails with must have one of these codes or
 * one of {@link ERROR_CODES} (with its name); otherwise the request is answered `-32603 internal_error`
 * naming the rule (see {@link toBridgeError}), since every client would read the code as something else.
 *
 * @example
 * ```ts
 * import { BridgeError, EXTENSION_ERROR_CODES } from "@open-apple-models/bridge/engine";
 * const QUEST_NOT_FOUND = EXTENSION_ERROR_CODES.min + 9; // -32090
 * new BridgeError(QUEST_NOT_FOUND, "quest_not_found", "No quest 'crypt'.", { quest: "crypt" });
 * ```
 */
// The type spells the values out: the package's generated reference shows no value of an `as const` object.
export const EXTENSION_ERROR_CODES: { readonly min: -32099; readonly max: -32057 } = {
  min: -32099,
  max: -32057,
};

/** The §8 name of each protocol code. */
const NAME_OF_CODE: ReadonlyMap<number, string> = new Map(
  Object.entries(ERROR_CODES).map(([name, code]) => [code, name]),
);

/** The range of {@link EXTENSION_ERROR_CODES} as the messages show it. */
const EXTENSION_RANGE = `${EXTENSION_ERROR_CODES.max}…${EXTENSION_ERROR_CODES.min}`;

/**
 * What is wrong with a code and `data.code` made into a BridgeError, or null: the table's codes go with their
 * names, and other codes are in {@link EXTENSION_ERROR_CODES} (so an extension cannot answer with a code that
 * means something else to every client).
 */
function codeProblem(code: number, dataCode: string): string | null {
  const named = typeof dataCode === "string" ? `'${dataCode}'` : String(dataCode);
  if (!Number.isSafeInteger(code)) return `BridgeError code ${code} (${named}) is not an integer.`;
  if (typeof dataCode !== "string" || dataCode === "") {
    return `BridgeError code ${code} needs a data.code string such as 'quest_not_found'; got ${
      typeof dataCode === "string" ? "''" : String(dataCode)
    }.`;
  }
  const tableCode = Object.hasOwn(ERROR_CODES, dataCode) ? ERROR_CODES[dataCode as ErrorName] : undefined;
  if (tableCode !== undefined) {
    if (tableCode === code) return null;
    return `BridgeError data.code '${dataCode}' is the protocol's code ${tableCode} (PROTOCOL.md §8); got ` +
      `${code}. Use BridgeError.of("${dataCode}", message), or a name of your own.`;
  }
  const tableName = NAME_OF_CODE.get(code);
  if (tableName !== undefined) {
    const hint = tableName === "invalid_params"
      ? "; for invalid params use BridgeError.invalidParams(message)"
      : "";
    return `BridgeError code ${code} (${named}) is the protocol's '${tableName}' (PROTOCOL.md §8). An ` +
      `extension's own codes are ${EXTENSION_RANGE}${hint}.`;
  }
  if (code < EXTENSION_ERROR_CODES.min || code > EXTENSION_ERROR_CODES.max) {
    return `BridgeError code ${code} (${named}) is outside ${EXTENSION_RANGE}, the codes PROTOCOL.md §8 ` +
      "leaves to extensions.";
  }
  return null;
}

/**
 * The problem of a BridgeError whose `data` has a `code` member of its own, which its JSON would send as
 * `data.code` instead of {@link BridgeError.dataCode} (e.g. an item's code in the data of `item_sold_out`), or
 * null.
 */
function dataCodeProblem(error: BridgeError): string | null {
  const data = error.data;
  if (typeof data !== "object" || data === null || !Object.hasOwn(data, "code")) return null;
  return `BridgeError data has a member 'code' (${JSON.stringify(data.code)}), which would replace its ` +
    `data.code '${error.dataCode}' on the wire; give that member another name.`;
}

/**
 * A known `data.code` string.
 *
 * @example
 * ```ts
 * import { type ErrorName } from "@open-apple-models/bridge";
 * const retryable: ErrorName[] = ["rate_limited", "busy"];
 * ```
 */
export type ErrorName = keyof typeof ERROR_CODES;

/**
 * The `data.code` values a model or agent may fail with (a scripted `error` step may use any of them).
 *
 * @example
 * ```ts
 * import { AGENT_ERROR_CODES } from "@open-apple-models/bridge/engine";
 * AGENT_ERROR_CODES.includes("rate_limited"); // true
 * ```
 */
export const AGENT_ERROR_CODES = [
  "model_unavailable",
  "guardrail_violation",
  "refusal",
  "context_size_exceeded",
  "rate_limited",
  "unsupported_language",
  "invalid_schema",
  "tool_failed",
  "cancelled",
  "busy",
  "invalid_request",
  "generation_failed",
] as const;

/**
 * A `data.code` an agent or model can produce.
 *
 * @example
 * ```ts
 * import { type AgentErrorCode, BridgeError } from "@open-apple-models/bridge/engine";
 * const code: AgentErrorCode = "guardrail_violation";
 * const error = BridgeError.of(code, "The model declined.");
 * error.code; // -32002
 * ```
 */
export type AgentErrorCode = typeof AGENT_ERROR_CODES[number];

/** True when `code` is one of {@link AGENT_ERROR_CODES}. */
export function isAgentErrorCode(code: string): code is AgentErrorCode {
  return (AGENT_ERROR_CODES as readonly string[]).includes(code);
}

/**
 * Texts the bridge uses in many places, worded once.
 *
 * @example
 * ```ts
 * import { MESSAGES } from "./errors.ts";
 * MESSAGES.shutDown; // "The bridge has shut down."
 * ```
 */
export const MESSAGES = {
  /** `-32023 shut_down` of a request (or a client request) after shutdown. */
  shutDown: "The bridge has shut down.",
  /** `-32009 cancelled` of a turn cancelled while it ran. */
  turnCancelled: "The turn was cancelled.",
  /** `-32009 cancelled` of any other cancelled work. */
  requestCancelled: "The request was cancelled.",
} as const;

/**
 * A protocol error: JSON-RPC `code`, stable `data.code` string, message and extra `data` fields. Handlers
 * throw it; the typed client rejects with it (rebuilt from the error response).
 *
 * @example A handler's error
 * ```ts
 * import { BridgeError } from "@open-apple-models/bridge";
 * const error = BridgeError.invalidParams("Missing required parameter 'session'.");
 * error.toJson(); // {code: -32602, message: "Missing required parameter 'session'.", data: {code: "invalid_params"}}
 * ```
 *
 * @example A client's error
 * ```ts
 * import { Bridge, BridgeError } from "@open-apple-models/bridge";
 * await using bridge = await Bridge.open();
 * try {
 *   await bridge.npc("nobody").talk("Hello?");
 * } catch (error) {
 *   if (!(error instanceof BridgeError) || error.dataCode !== "npc_not_found") throw error;
 *   error.data.npc; // "nobody"
 * }
 * ```
 */
export class BridgeError extends Error {
  /** JSON-RPC error number. */
  readonly code: number;
  /** Stable `data.code` string. */
  readonly dataCode: string;
  /** Extra `data` members (besides `code`). */
  readonly data: JsonObject;

  /**
   * Creates an error with a JSON-RPC number, a `data.code` string, a message and extra data. A code of the
   * protocol's table (§8) goes with its name (use {@link BridgeError.of}). An extension's own codes are in
   * {@link EXTENSION_ERROR_CODES} (-32057…-32099): the bridge answers a request whose handler fails with any
   * other code with `-32603 internal_error` naming the rule (see {@link toBridgeError}), and so it does when
   * `data` has a `code` member of its own (it would replace `dataCode` on the wire). A client's reply to a
   * `tool/call` may use any code (the spec's example uses -32000).
   */
  constructor(code: number, dataCode: string, message: string, data: JsonObject = {}) {
    super(message);
    this.name = "BridgeError";
    this.code = code;
    this.dataCode = dataCode;
    this.data = data;
  }

  /**
   * The error a JSON-RPC `error` object stands for, as it was received (any code: a peer's errors are not
   * the caller's to check); `data.code` becomes {@link BridgeError.dataCode} (`""` when absent) and the
   * other `data` members {@link BridgeError.data}.
   *
   * @example
   * ```ts
   * import { BridgeError } from "@open-apple-models/bridge";
   * const e = BridgeError.fromJson({ code: -32000, message: "Gate offline", data: { code: "gate_offline" } });
   * e.dataCode; // "gate_offline"
   * ```
   */
  static fromJson(error: { code: number; message: string; data?: unknown }): BridgeError {
    const data: JsonObject = isJsonObject(error.data) ? { ...error.data } : {};
    const dataCode = typeof data.code === "string" ? data.code : "";
    delete data.code;
    return new BridgeError(error.code, dataCode, error.message, data);
  }

  /** An error from the §8 table by its `data.code` name. */
  static of(name: ErrorName, message: string, data: JsonObject = {}): BridgeError {
    return new BridgeError(ERROR_CODES[name], name, message, data);
  }

  /** `-32602 invalid_params`. */
  static invalidParams(message: string, data: JsonObject = {}): BridgeError {
    return BridgeError.of("invalid_params", message, data);
  }

  /** `-32009 cancelled`. */
  static cancelled(message: string = MESSAGES.requestCancelled): BridgeError {
    return BridgeError.of("cancelled", message);
  }

  /** `-32009 cancelled` "The turn was cancelled.". */
  static turnCancelled(): BridgeError {
    return BridgeError.cancelled(MESSAGES.turnCancelled);
  }

  /** `-32023 shut_down` "The bridge has shut down.". */
  static shutDown(): BridgeError {
    return BridgeError.of("shut_down", MESSAGES.shutDown);
  }

  /** `-32603 internal_error`. */
  static internal(message: string): BridgeError {
    return BridgeError.of("internal_error", message);
  }

  /** Keeps `error`, the failure this one stands for, as `cause` (logs show it; the wire never does). */
  withCause(error: unknown): this {
    this.cause = error;
    return this;
  }

  /** The JSON-RPC `error` object: `{code, message, data: {code, ...data}}`. */
  toJson(): JsonObject {
    return { code: this.code, message: this.message, data: { code: this.dataCode, ...this.data } };
  }
}

/**
 * Maps any thrown value to a BridgeError at a boundary (a handler's result, a failed turn). Model backends map
 * their own failures to the model errors (`generation_failed`, `model_unavailable`, …) themselves, so whatever
 * else arrives here is a bug: `-32603 internal_error` (see {@link internalError}), never retried. An aborted
 * operation is `cancelled`; a stack overflow on deeply nested input is `invalid_params`. A BridgeError
 * whose code breaks §8 (a protocol code under another name, or a code of its own outside
 * {@link EXTENSION_ERROR_CODES}, or a `code` member in its `data`, which would replace `data.code`) is an
 * extension's bug too: `internal_error` naming the rule, its stack the one of where the error was made.
 *
 * @example
 * ```ts
 * import { BridgeError, toBridgeError } from "./errors.ts";
 * toBridgeError(new TypeError("x is undefined")).dataCode; // "internal_error"
 * toBridgeError(new DOMException("stop", "AbortError")).dataCode; // "cancelled"
 * toBridgeError(new BridgeError(-32000, "gate_offline", "Offline.")).dataCode; // "internal_error"
 * ```
 */
export function toBridgeError(error: unknown): BridgeError {
  if (error instanceof BridgeError) {
    const problem = codeProblem(error.code, error.dataCode) ?? dataCodeProblem(error);
    return problem === null ? error : misnumbered(error, problem);
  }
  if (error instanceof DOMException && error.name === "AbortError") return BridgeError.cancelled();
  if (error instanceof RangeError && /call stack/i.test(error.message)) {
    return BridgeError.invalidParams("The input nests too deeply.").withCause(error);
  }
  return internalError(error);
}

/** `internal_error` for a BridgeError whose code breaks §8: a TypeError naming `problem`, with its stack. */
function misnumbered(error: BridgeError, problem: string): BridgeError {
  const bug = new TypeError(problem, { cause: error });
  // The place that matters is where the extension made the error, not this conversion.
  const stack = error.stack ?? "";
  const at = stack.indexOf("\n");
  if (at !== -1) bug.stack = `TypeError: ${problem}${stack.slice(at)}`;
  return internalError(bug);
}

/**
 * `-32603 internal_error` for an unexpected throw: its message (never its stack) is the response's, and
 * `cause` keeps the original, so whoever answers with it can log the stack on stderr.
 *
 * @example
 * ```ts
 * import { internalError } from "./errors.ts";
 * const e = internalError(new TypeError("model.step is not a function"));
 * e.message; // "model.step is not a function"
 * e.cause instanceof TypeError; // true
 * ```
 */
export function internalError(error: unknown): BridgeError {
  const message = error instanceof Error ? error.message : String(error);
  return BridgeError.internal(message || "An internal error occurred.").withCause(error);
}

/** Host code that threw a value (`thrownByHost`): what the log line of its internal error names. */
const hostFaults = new WeakMap<object, string>();

/**
 * Marks `error`, thrown by host code the bridge called (a `modelFactory`, a host model's `step()`), as that
 * code's: when it is answered `-32603 internal_error`, {@link internalErrorReport} says the bug is in
 * `culprit` instead of asking for a report to this project. Returns what to rethrow: `error` itself, or for a
 * thrown value that is not an object the `internal_error` it would be answered with anyway.
 *
 * @example
 * ```ts
 * import { internalErrorReport, thrownByHost, toBridgeError } from "./errors.ts";
 * const thrown = thrownByHost(new Error("oops"), "the host's modelFactory");
 * internalErrorReport(toBridgeError(thrown), { where: "session/create" }); // "Internal error in 'session/create' (a bug in the host's modelFactory; fix it there): Error: oops\n    at …"
 * ```
 */
export function thrownByHost(error: unknown, culprit: string): unknown {
  const marked = typeof error === "object" && error !== null ? error : internalError(error);
  hostFaults.set(marked, culprit);
  return marked;
}

/** The host code `error` (or an error it was made from) was thrown by, if it was marked. */
function hostFaultOf(error: unknown): string | undefined {
  let e = error;
  for (let depth = 0; depth < 8 && typeof e === "object" && e !== null; depth++) {
    const culprit = hostFaults.get(e);
    if (culprit !== undefined) return culprit;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

/**
 * The log line (stderr) for an error about to be answered: for `-32603 internal_error`, where it happened (`at.where`),
 * whose bug it is, and the stack of what was thrown; null for every other error (those are answers, not bugs).
 * A bug is the project's ("please report it") unless the error was thrown by host code
 * ({@link thrownByHost}) or `at.hostCode` names the host's code that ran `at.where` (the handler of a method a host
 * added): then the line says the bug is there.
 *
 * @example
 * ```ts
 * import { internalError, internalErrorReport } from "./errors.ts";
 * internalErrorReport(internalError(new TypeError("oops")), { where: "npc/talk" }); // "Internal error in 'npc/talk' (a bug; please report it): TypeError: oops\n    at …"
 * internalErrorReport(internalError(new TypeError("oops")), { where: "quest/narrate", hostCode: "the host's extension QuestMethods" }); // "… (a bug in the host's extension QuestMethods; fix it there): …"
 * ```
 */
export function internalErrorReport(
  error: BridgeError,
  at: { where: string; hostCode?: string },
): string | null {
  const { where, hostCode } = at;
  if (error.code !== ERROR_CODES.internal_error) return null;
  const cause = error.cause ?? error;
  const detail = cause instanceof Error ? cause.stack ?? `${cause.name}: ${cause.message}` : String(cause);
  // A misnumbered BridgeError is the handler's author's to fix, not the bridge's to report.
  if (cause instanceof TypeError && cause.cause instanceof BridgeError) {
    return `Internal error in '${where}' (the handler's error code breaks PROTOCOL.md §8; fix it where the error is made): ${detail}`;
  }
  const culprit = hostFaultOf(error) ?? hostCode;
  const whose = culprit === undefined ? "a bug; please report it" : `a bug in ${culprit}; fix it there`;
  return `Internal error in '${where}' (${whose}): ${detail}`;
}
