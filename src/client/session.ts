/**
 * `Session`: an agent session (`session/*`), a thin handle over the connection.
 * @module
 */
import type { JsonObject, JsonValue } from "../protocol/json.ts";
import { callbackProblem, paramsLossProblem, throwIfLossy } from "./checks.ts";
import type { Cancel, Connection, TurnOptions } from "./connection.ts";
import type { RespondParams } from "./methods.ts";
import { isFlatValue } from "./transport.ts";
import type { SchemaValue } from "./schema_value.ts";
import { TurnStream } from "./turn_stream.ts";
import type { JsonSchema, RespondResult, SessionEvent, ToolChoice, ToolRef, Transcript } from "./types.ts";

/**
 * Options of {@link Session.respond}. A callback that throws gets no more events, and the call rejects with its
 * error once the turn has ended (the turn runs to its end, and is kept in the history).
 *
 * @example
 * ```ts
 * import { Bridge } from "@open-apple-models/bridge";
 * await using bridge = await Bridge.open();
 * const guard = await bridge.createSession({ model: { type: "scripted", steps: [{ text: "Halt! Who goes there?" }] } });
 * let shown = "";
 * const result = await guard.respond("Hello", {
 *   onText: (_delta, text) => shown = text, // the whole answer so far
 *   timeoutMs: 30_000,
 * });
 * shown === result.text; // true
 * ```
 */
export interface RespondOptions extends TurnOptions {
  /**
   * Structured output: the answer is JSON matching it, in `structured` (typed from the schema when it is
   * written inline, or by `respond<T>`).
   */
  schema?: JsonSchema;
  /** Receives the text as it streams: the new piece, the whole text so far, and whether it was rewritten. */
  onText?: (delta: string, text: string, isReset: boolean) => void;
  /** Receives every event, in order. */
  onEvent?: (event: SessionEvent) => void;
  /** Stream events (default: on when a callback is given). */
  stream?: boolean;
  /** Per-turn override of the session's tool choice. */
  toolChoice?: ToolChoice;
  /** Per-turn override. */
  maxToolRounds?: number;
  /** Per-turn override. */
  maxToolCalls?: number;
  /** Per-turn override. */
  enabledTools?: readonly string[];
}

/** True for a `session/event` notification's event object (the bridge sends only the §7 types). */
function isEvent(value: JsonValue | undefined): value is JsonObject & SessionEvent {
  return typeof value === "object" && value !== null && !Array.isArray(value) &&
    typeof value.type === "string";
}

/**
 * An agent session with its own conversation. Create one with `bridge.createSession`.
 *
 * @example
 * ```ts
 * import { Bridge } from "@open-apple-models/bridge";
 * await using bridge = await Bridge.open();
 * const guard = await bridge.createSession({
 *   instructions: "You are a castle guard.",
 *   model: { type: "scripted", steps: [{ text: "Halt! Who goes there?" }] },
 * });
 * const shown: string[] = [];
 * // `text` is the whole answer so far; `delta` the new part, or the whole answer again when `isReset` says the
 * // model rewrote it.
 * const result = await guard.respond("Hello", { onText: (_delta, text) => shown.push(text) });
 * result.text; // "Halt! Who goes there?", also the last of `shown`
 * ```
 */
export class Session {
  /** The session's id. */
  readonly id: string;
  /** Warnings from `session/create`. */
  readonly warnings: readonly string[];
  readonly #c: Connection;
  /** What cancels its turn. */
  readonly #cancel: Cancel;

  /**
   * A handle for session `id` (it is not created here). Made by the client: get one from
   * `bridge.createSession`, or `bridge.session(id)` for an existing session (`Connection` is the client's own
   * link to the bridge, not part of the package's API).
   */
  constructor(connection: Connection, id: string, warnings: readonly string[] = []) {
    this.#c = connection;
    this.id = id;
    this.warnings = warnings;
    this.#cancel = { method: "session/cancel", params: { session: id } };
  }

  /**
   * Runs one turn; streams to `onText` / `onEvent` when given. For a schema turn, `structured` is typed from
   * a schema written inline (or held in an `as const` variable), as {@link SchemaValue} says; `T` names the
   * type instead (`respond<Omen>(…)`), for a schema using `$ref`. Without either it is any
   * {@link JsonValue}. A `NaN`, `Infinity`, `Map` or `Set` in the options sent (a schema, a numeric override)
   * is a TypeError naming it (JSON would send `null` or `{}`), and the turn is not sent.
   *
   * @example A schema turn whose answer is typed from its schema
   * ```ts
   * import { Bridge } from "@open-apple-models/bridge";
   * await using bridge = await Bridge.open();
   * const oracle = await bridge.createSession({ model: { type: "scripted", steps: [{ json: { omen: "rain" } }] } });
   * const { structured } = await oracle.respond("Any omens?", {
   *   schema: { type: "object", properties: { omen: { enum: ["rain", "sun"] } }, required: ["omen"] },
   * });
   * const omen: "rain" | "sun" | undefined = structured?.omen; // "rain"
   * ```
   */
  respond<T = never, const S extends JsonSchema = JsonSchema>(
    prompt: string,
    options: RespondOptions & { schema?: S } = {},
  ): Promise<RespondResult<[T] extends [never] ? SchemaValue<S> : T>> {
    // Checked before sending: a bad callback would fail after the turn, which would count all the same.
    const problem = callbackProblem(options, { names: ["onText", "onEvent"], where: "session.respond" });
    if (problem !== null) return Promise.reject(problem);
    const { onText, onEvent } = options;
    const watched = onText !== undefined || onEvent !== undefined;
    const stream = options.stream ?? watched;
    const { params, flat } = this.#params(prompt, options, stream);
    // Flat params hold nothing JSON would change: only a turn with an object (a schema…) is walked.
    const lossy = flat ? null : paramsLossProblem(params, "session.respond()");
    if (lossy !== null) return Promise.reject(lossy);
    return this.#c.turn<RespondResult<[T] extends [never] ? SchemaValue<S> : T>>(
      "session/respond",
      params,
      this.#cancel,
      options,
      watched
        ? (method, params) => {
          const event = params.event;
          if (method !== "session/event" || !isEvent(event)) return;
          onEvent?.(event);
          if (onText && event.type === "text") onText(event.delta, event.text, event.isReset);
        }
        : undefined,
      flat,
    );
  }

  /**
   * Runs one turn and yields its events as they arrive; `.result` is the turn's result (`structured` typed as
   * for {@link Session.respond}).
   */
  respondStream<T = never, const S extends JsonSchema = JsonSchema>(
    prompt: string,
    options: Omit<RespondOptions, "stream"> & { schema?: S } = {},
  ): TurnStream<SessionEvent, RespondResult<[T] extends [never] ? SchemaValue<S> : T>> {
    return new TurnStream((push) =>
      this.respond<T, S>(prompt, {
        ...options,
        stream: true,
        onEvent: (event) => {
          options.onEvent?.(event);
          push(event);
        },
      })
    );
  }

  /** The params, without undefined members: made here for this call, flat ones are handed over as they are. */
  #params(prompt: string, o: RespondOptions, stream: boolean): { params: RespondParams; flat: boolean } {
    const params: RespondParams = { session: this.id, prompt, stream };
    let flat = isFlatValue(prompt) && isFlatValue(stream) && o.schema === undefined &&
      o.enabledTools === undefined;
    if (o.schema !== undefined) params.schema = o.schema;
    if (o.toolChoice !== undefined) {
      params.toolChoice = o.toolChoice;
      flat &&= isFlatValue(o.toolChoice);
    }
    if (o.maxToolRounds !== undefined) {
      params.maxToolRounds = o.maxToolRounds;
      flat &&= isFlatValue(o.maxToolRounds);
    }
    if (o.maxToolCalls !== undefined) {
      params.maxToolCalls = o.maxToolCalls;
      flat &&= isFlatValue(o.maxToolCalls);
    }
    if (o.enabledTools !== undefined) params.enabledTools = o.enabledTools;
    return { params, flat };
  }

  /**
   * Cancels the running turn (its `respond` rejects with `-32009 cancelled`) and every queued operation;
   * returns how many were cancelled. From this call on, the turn's `onText` and `onEvent` are not called
   * again, also for the text already on its way (a turn that had already ended still gives its result), as
   * when its `signal` aborts.
   *
   * @example
   * ```ts
   * import { Bridge } from "@open-apple-models/bridge";
   * await using bridge = await Bridge.open();
   * const slow = { type: "scripted" as const, steps: [{ text: "The road north…", delayMs: 1000 }] };
   * const guide = await bridge.createSession({ instructions: "You are a guide.", model: slow });
   * let shown = "";
   * const answer = guide.respond("Which way?", { onText: (_delta, text) => shown = text }).catch(() => null);
   * await guide.cancel(); // the player walked away: nothing more is shown
   * await answer; // null: it was cancelled
   * shown; // "": the answer never started
   * ```
   */
  async cancel(): Promise<number> {
    const params = { session: this.id };
    return (await this.#c.endWork("session/cancel", { params, why: null })).cancelled;
  }

  /** Clears the conversation and context note (queued behind earlier turns). */
  async reset(): Promise<void> {
    await this.#c.request("session/reset", { session: this.id });
  }

  /** The transcript to save; pass it as `history` to `createSession` to resume. */
  async transcript(): Promise<Transcript> {
    return (await this.#c.request("session/transcript", { session: this.id })).transcript;
  }

  /** Replaces the instructions from the next turn. */
  async setInstructions(instructions: string | null): Promise<void> {
    await this.#c.request("session/setInstructions", { session: this.id, instructions });
  }

  /** Sets the context note (extra context the model gets with the next prompt, once) from the next turn. */
  async setContextNote(note: string | null): Promise<void> {
    await this.#c.request("session/setContextNote", { session: this.id, note });
  }

  /**
   * Replaces the tools from the next turn; returns the warnings. A `NaN`, `Infinity`, `Map` or `Set` in a
   * definition is a TypeError naming its path.
   */
  async setTools(tools: readonly ToolRef[]): Promise<string[]> {
    const params = { session: this.id, tools: this.#c.tools.definitions(tools) };
    throwIfLossy(params, "session.setTools()");
    return (await this.#c.request("session/setTools", params)).warnings;
  }

  /** Summarizes all but the most recent turns into the context note; returns the summary (or null). */
  async compact(
    options: { keepRecentTurns?: number; summaryInstructions?: string } = {},
  ): Promise<string | null> {
    const params = { session: this.id, ...options };
    throwIfLossy(params, "session.compact()");
    return (await this.#c.request("session/compact", params)).summary;
  }

  /**
   * Cancels the session's work and frees it. A running turn's `respond` rejects with `-32009 cancelled`,
   * whose message says it was cancelled when `session.delete()` deleted the session (or gives its result if
   * it had already ended), and from this call on its `onText` and `onEvent` are not
   * called again, as with {@link Session.cancel}.
   *
   * @example
   * ```ts
   * import { Bridge } from "@open-apple-models/bridge";
   * await using bridge = await Bridge.open();
   * const slow = { type: "scripted" as const, steps: [{ text: "The road north…", delayMs: 1000 }] };
   * const guide = await bridge.createSession({ instructions: "You are a guide.", model: slow });
   * let shown = "";
   * const answer = guide.respond("Which way?", { onText: (_delta, text) => shown = text }).catch(() => null);
   * await guide.delete(); // the level ends: nothing more is shown
   * await answer; // null: it was cancelled
   * shown; // "": the text never started
   * ```
   */
  async delete(): Promise<void> {
    await this.#c.endWork("session/delete", {
      params: { session: this.id },
      why: "session.delete() deleted the session.",
    });
  }
}
