/**
 * The `session/*` methods: thin adapters from params to the agent, with per-session ordering.
 * @module
 */
import { BridgeError } from "../protocol/errors.ts";
import type { JsonObject, JsonValue } from "../protocol/json.ts";
import type { Params } from "../protocol/params.ts";
import { Agent } from "../agent/agent.ts";
import { compactAgent } from "../agent/compaction.ts";
import { exportTranscript, type ImportedTranscript, importTranscript } from "../agent/transcript_codec.ts";
import type { ToolPolicy, TurnInput, TurnResult } from "../agent/types.ts";
import type { LanguageModel, ModelAvailability, ResponseSchema } from "../models/language_model.ts";
import { availabilityOf, unavailableWarning } from "../models/availability.ts";
import { IdGenerator } from "../util/ids.ts";
import {
  checkObjectId,
  existsError,
  notFoundError,
  type ObjectKind,
  queueFullError,
} from "../util/object_ids.ts";
import { type Operation, Pending, WorkQueue } from "../util/work_queue.ts";
import type { BridgeExtension, MethodRegistry } from "../engine/extension.ts";
import type { DriveOptions, HandlerContext } from "../engine/context.ts";
import { turnResultJson } from "../agent/result_json.ts";
import { parsePolicy, parseSessionOptions } from "./session_options.ts";
import {
  convertForParam,
  type ParsedTools,
  parseToolDefinitions,
  placeToolWarnings,
  toolCountWarning,
  toolTimeoutMsOf,
} from "../agent/tool_definitions.ts";
import { modelSpecWarnings } from "../models/registry.ts";
import { freeFormWarnings } from "../schema/free_form.ts";
import { warningsFor } from "../schema/model_notes.ts";
import { withSchemaWarnings } from "../agent/schema_warnings.ts";

const CREATE_KEYS = ["session", "instructions", "tools", "options", "history", "model"] as const;
const RESPOND_KEYS = [
  "session",
  "prompt",
  "schema",
  "stream",
  "toolChoice",
  "maxToolRounds",
  "maxToolCalls",
  "enabledTools",
] as const;

/** Sessions, as their errors name them (`session_not_found`, `session_exists`). */
const SESSION_KIND: ObjectKind = { key: "session", noun: "session", article: "A" };

/**
 * One agent session on the bridge.
 *
 * @example
 * ```ts
 * import { BridgeEngine } from "@open-apple-models/bridge/engine";
 * const engine = new BridgeEngine();
 * const model = { type: "scripted", steps: [{ text: "Halt!" }] };
 * await engine.call("session/create", { session: "guard", model });
 * const guard = engine.sessions.get("guard");
 * guard?.modelKind; // "scripted"
 * guard?.policy.maxToolRounds; // 4
 * ```
 */
export class BridgeSession {
  /** Session id. */
  readonly id: string;
  /** The conversation. */
  readonly agent: Agent;
  /** Per-session order of turn-affecting operations. */
  readonly queue: WorkQueue = new WorkQueue();
  /** Model type name. */
  readonly modelKind: string;
  /** ISO 8601 creation time. */
  readonly createdAt: string = new Date().toISOString();
  /** Default tool policy for turns. */
  policy: ToolPolicy;
  /** Default client tool timeout (ms, null = none). */
  toolTimeoutMs: number | null;
  /** `drive` options of this session's streaming turns (made once). */
  readonly streamingDrive: DriveOptions;
  /** `drive` options of this session's quiet turns (made once). */
  readonly quietDrive: DriveOptions;
  /**
   * Set while `session/create` waits for the system model's availability: the session's queued work starts
   * after the create has answered, so none of its output can come before that response.
   */
  opening: Promise<void> | null = null;

  /** @internal */
  constructor(id: string, agent: Agent, modelKind: string, policy: ToolPolicy, toolTimeoutMs: number | null) {
    this.id = id;
    this.agent = agent;
    this.modelKind = modelKind;
    this.policy = policy;
    this.toolTimeoutMs = toolTimeoutMs;
    const context = { session: id };
    this.streamingDrive = { stream: true, context, eventMethod: "session/event" };
    this.quietDrive = { stream: false, context, eventMethod: "session/event" };
  }
}

/** The `session/respond` result of a finished turn. */
function respondResult(result: TurnResult, session: string, warnings: string[]): JsonObject {
  const out = turnResultJson(result, session);
  if (warnings.length > 0) out.warnings = warnings;
  return out;
}

/** What an absent `schema` param converts to (shared: most turns have none; never mutated). */
const NO_SCHEMA: { schema: null; warnings: string[] } = Object.freeze({
  schema: null,
  warnings: Object.freeze([]) as unknown as string[],
});

/**
 * The tools of `session/create`: its `tools`, else the ones a `history` was saved with (a definition that no
 * longer parses is left out with a warning, after the restored tools' warnings).
 */
function createTools(
  p: Params,
  from: { history: ImportedTranscript | null; toolTimeoutMs: number | null },
): ParsedTools {
  const { history, toolTimeoutMs } = from;
  if (p.has("tools")) {
    return parseToolDefinitions(p.get("tools"), { path: "tools", defaultTimeoutMs: toolTimeoutMs });
  }
  const saved = history?.tools ?? [];
  // Checked as one set, like sent tools (a repeated name fails); a definition that cannot be restored on its
  // own is left out with a warning, after the warnings of the restored tools.
  const skipped: string[] = [];
  const parsed = parseToolDefinitions(saved.map((def) => def.function as unknown as JsonValue), {
    path: "history.tools",
    defaultTimeoutMs: toolTimeoutMs,
    skipInvalid: (error, i) => {
      skipped.push(
        `${saved[i].function.name}: could not be restored from 'history' (${error.message}); send its ` +
          "definition in 'tools'.",
      );
    },
  });
  // The restored tools are the session's tools: warned about as when they were sent (the save may come from
  // another run of the game, or have been edited), as npc/restore does for a save's tools.
  return {
    tools: parsed.tools,
    warnings: [...parsed.warnings, ...skipped],
    warningsFor: (model) => [...parsed.warningsFor(model), ...skipped],
  };
}

/**
 * The `session/create` result of a session on the system model, with the "unavailable" warning when it is.
 * Known at once in most cases; otherwise answered once the plugin's check is done, and the session's queued
 * work waits for that answer (so none of its output comes first). The session exists either way: a failing
 * check must not turn this into an error response.
 */
function answerWithAvailability(
  session: BridgeSession,
  created: { model: LanguageModel; warnings: string[] },
): JsonValue | Pending<JsonValue> {
  const { model, warnings } = created;
  const result = (a: ModelAvailability): JsonObject => {
    const warning = unavailableWarning(a, model);
    if (warning !== null) warnings.push(warning);
    return { session: session.id, warnings };
  };
  const availability = availabilityOf(model);
  if (!(availability instanceof Promise)) return result(availability);
  const answer = new Pending<JsonValue>();
  let opened!: () => void;
  session.opening = new Promise<void>((resolve) => opened = resolve);
  availability.then((a) => {
    answer.resolve(result(a)); // the response is written here, synchronously
    session.opening = null;
    opened();
  });
  return answer;
}

/**
 * Converts a session/respond `schema` param for the session's model (`model`, its kind: an object without
 * properties is warned about when that model generates it as `{}`, and a `llama` model's warnings say what its
 * grammar enforces). `warnings` must not be mutated.
 */
function responseSchemaParam(p: Params, model: string): {
  schema: ResponseSchema | null;
  warnings: string[];
} {
  const schema = p.optionalObject("schema");
  if (schema === undefined) return NO_SCHEMA;
  const conversion = convertForParam(schema, { rootName: "Response", path: p.name("schema") });
  return {
    schema: { name: "Response", generationSchema: conversion.generationSchema, jsonSchema: schema },
    warnings: [
      ...warningsFor(conversion.warningNotes, { model }),
      ...freeFormWarnings(conversion.freeForm, { model, plainObjects: true }),
    ],
  };
}

/**
 * The session store and the `session/*` methods.
 *
 * @example
 * ```ts
 * import { BridgeEngine } from "@open-apple-models/bridge/engine";
 * const engine = new BridgeEngine();
 * await engine.call("session/create", { session: "guard", model: "scripted" });
 * engine.sessions.get("guard")?.id; // "guard"
 * ```
 */
export class SessionMethods implements BridgeExtension {
  readonly #sessions = new Map<string, BridgeSession>();
  readonly #ids = new IdGenerator("s");

  /** A session by id. */
  get(id: string): BridgeSession | undefined {
    return this.#sessions.get(id);
  }

  /** Number of sessions. */
  get size(): number {
    return this.#sessions.size;
  }

  /** Registers `session/*`. */
  register(registry: MethodRegistry): void {
    registry.register("session/create", (r) => this.#create(r));
    registry.register("session/respond", (r) => this.#respond(r));
    registry.register("session/cancel", (r) => this.#cancel(r));
    registry.register("session/reset", (r) => this.#reset(r));
    registry.register("session/delete", (r) => this.#delete(r));
    registry.register("session/list", () => this.#list());
    registry.register("session/transcript", (r) => this.#transcript(r));
    registry.register("session/setInstructions", (r) => this.#setInstructions(r));
    registry.register("session/setContextNote", (r) => this.#setContextNote(r));
    registry.register("session/setTools", (r) => this.#setTools(r));
    registry.register("session/compact", (r) => this.#compact(r));
  }

  /** Cancels and removes every session. */
  shutdown(): void {
    const sessions = [...this.#sessions.values()];
    this.#sessions.clear();
    for (const s of sessions) s.queue.cancelAll();
  }

  /**
   * The session named by the request; `keys`, the method's params, are named in the error of a missing one
   * (`session/respond` and `session/create` check theirs with warnings).
   */
  #lookup(r: HandlerContext, keys?: readonly string[]): BridgeSession {
    if (keys !== undefined) r.params.expectKeys(keys);
    const id = r.params.string("session");
    const session = this.#sessions.get(id);
    if (!session) throw notFoundError(SESSION_KIND, id);
    return session;
  }

  #schedule(
    r: HandlerContext,
    session: BridgeSession,
    work: (op: Operation) => Promise<JsonValue> | JsonValue,
  ): Pending<JsonValue> {
    const limit = r.settings.maxQueuedOperations;
    if (session.queue.pending >= limit) throw queueFullError(SESSION_KIND, { id: session.id, limit });
    const opening = session.opening;
    return session.queue.enqueue(opening === null ? work : (op) => opening.then(() => work(op))).outcome;
  }

  #create(r: HandlerContext): JsonValue | Pending<JsonValue> {
    const p = r.params;
    const warnings = p.unknownKeys(CREATE_KEYS);
    const requested = p.optionalString("session");
    if (requested !== undefined) checkObjectId(requested, "session");
    const options = parseSessionOptions(
      p.optionalParams("options"),
      toolTimeoutMsOf(r.settings.toolTimeoutSeconds),
    );
    warnings.push(...options.warnings);
    const historyValue = p.get("history");
    const history = historyValue === undefined ? null : importTranscript(historyValue, "history");
    if (history !== null && history.entries.at(-1)?.role === "user") {
      // A transcript read during a turn ends with its prompt: resumed as it is, the next turn's prompt would
      // follow it unanswered (NPC restores drop such a turn too).
      history.entries.pop();
      warnings.push(
        "The last prompt in 'history' was never answered (the transcript was read while its turn ran); it " +
          "was left out. Send it again with session/respond.",
      );
    }
    const created = createTools(p, { history, toolTimeoutMs: options.toolTimeoutMs });
    // Worded for the model once it is known (reading it first would change which error a request with a bad
    // tool and a bad model gets).
    const toolWarningsFor = placeToolWarnings(warnings, created);
    const tools = created.tools;
    const choice = options.policy.choice;
    if (typeof choice === "object" && !tools.some((t) => t.name === choice.tool)) {
      throw BridgeError.invalidParams(
        `'options.toolChoice' names tool '${choice.tool}', which is not in 'tools'.`,
      );
    }
    const countWarning = toolCountWarning(tools.length);
    if (countWarning) warnings.push(countWarning);
    const spec = r.parseModel(p.get("model"));
    warnings.push(...modelSpecWarnings(spec));
    const model = r.createModel(spec);
    toolWarningsFor(model.kind);
    const instructions = p.has("instructions")
      ? p.optionalString("instructions") ?? null
      : history?.instructions ?? null;
    if (requested !== undefined && this.#sessions.has(requested)) {
      throw existsError({ kind: SESSION_KIND, id: requested });
    }
    const limit = r.settings.maxSessions;
    if (this.#sessions.size >= limit) {
      throw BridgeError.of(
        "session_limit",
        `The session limit (${limit}) is reached; delete a session first.`,
        {
          limit,
        },
      );
    }
    const id = requested ?? this.#ids.next((x) => this.#sessions.has(x));
    const agent = new Agent({
      model,
      instructions,
      tools,
      entries: history?.entries ?? [],
      settings: options.settings,
    });
    const session = new BridgeSession(id, agent, model.kind, options.policy, options.toolTimeoutMs);
    this.#sessions.set(id, session);
    if (spec.type !== "system") return { session: id, warnings };
    return answerWithAvailability(session, { model, warnings });
  }

  #respond(r: HandlerContext): Pending<JsonValue> {
    const p = r.params;
    const warnings = p.unknownKeys(RESPOND_KEYS);
    const session = this.#lookup(r);
    const prompt = p.string("prompt");
    const { schema, warnings: schemaWarnings } = responseSchemaParam(p, session.modelKind);
    warnings.push(...schemaWarnings);
    const stream = p.optionalBool("stream") ?? false;
    const input: TurnInput = { prompt, schema, policy: parsePolicy(p, session.policy), stream };
    return this.#schedule(r, session, (op) => {
      const choice = input.policy.choice;
      if (typeof choice === "object" && !session.agent.tools.some((t) => t.name === choice.tool)) {
        throw BridgeError.invalidParams(
          `'toolChoice' names tool '${choice.tool}', which session '${session.id}' does not have.`,
        );
      }
      // A turn that needs no waiting (scripted) finishes right here, without a promise per layer. An invalid
      // answer's error names the schema's warnings, which the failed request cannot return.
      let result;
      try {
        result = r.drive(
          (sink) => session.agent.runTurnNow(input, sink, op.signal, () => op.commit()),
          stream ? session.streamingDrive : session.quietDrive,
        );
      } catch (error) {
        throw withSchemaWarnings(error, schemaWarnings);
      }
      if (!(result instanceof Promise)) return respondResult(result, session.id, warnings);
      const done = result.then((r) => respondResult(r, session.id, warnings));
      // Most turns have no schema warnings: no rejection handler for them.
      return schemaWarnings.length === 0 ? done : done.catch((error) => {
        throw withSchemaWarnings(error, schemaWarnings);
      });
    });
  }

  #cancel(r: HandlerContext): JsonValue {
    const session = this.#lookup(r, ["session"]);
    return { session: session.id, cancelled: session.queue.cancelAll() };
  }

  #reset(r: HandlerContext): Pending<JsonValue> {
    const session = this.#lookup(r, ["session"]);
    return this.#schedule(r, session, (op) => {
      op.commit();
      session.agent.reset();
      return { session: session.id };
    });
  }

  #delete(r: HandlerContext): JsonValue {
    const session = this.#lookup(r, ["session"]);
    this.#sessions.delete(session.id);
    session.queue.cancelAll();
    return { session: session.id, deleted: true };
  }

  #list(): JsonValue {
    const sessions: JsonValue[] = [];
    for (const s of this.#sessions.values()) {
      const entry: JsonObject = { session: s.id, model: s.modelKind };
      if (s.agent.instructions !== null) entry.instructions = s.agent.instructions;
      entry.tools = s.agent.tools.map((t) => t.name);
      entry.busy = s.queue.busy;
      entry.pendingOperations = s.queue.pending;
      entry.entries = s.agent.entries.length;
      entry.createdAt = s.createdAt;
      sessions.push(entry);
    }
    return { sessions };
  }

  #transcript(r: HandlerContext): JsonValue {
    const session = this.#lookup(r, ["session"]);
    const a = session.agent;
    return {
      session: session.id,
      transcript: exportTranscript({
        instructions: a.instructions,
        tools: a.tools,
        entries: [...a.entries, ...a.inProgress],
      }),
    };
  }

  #setInstructions(r: HandlerContext): Pending<JsonValue> {
    const session = this.#lookup(r, ["session", "instructions"]);
    if (!r.params.has("instructions")) {
      throw r.params.missingParameter("instructions");
    }
    const instructions = r.params.optionalString("instructions") ?? null;
    return this.#schedule(r, session, (op) => {
      op.commit();
      session.agent.instructions = instructions;
      return { session: session.id };
    });
  }

  #setContextNote(r: HandlerContext): Pending<JsonValue> {
    const session = this.#lookup(r, ["session", "note"]);
    if (!r.params.has("note")) throw r.params.missingParameter("note");
    const note = r.params.optionalString("note") ?? null;
    return this.#schedule(r, session, (op) => {
      op.commit();
      session.agent.contextNote = note;
      return { session: session.id };
    });
  }

  #setTools(r: HandlerContext): Pending<JsonValue> {
    const session = this.#lookup(r, ["session", "tools"]);
    const parsed = parseToolDefinitions(r.params.array("tools"), {
      path: "tools",
      defaultTimeoutMs: session.toolTimeoutMs,
    });
    const warnings = parsed.warningsFor(session.modelKind);
    const countWarning = toolCountWarning(parsed.tools.length);
    if (countWarning) warnings.push(countWarning);
    return this.#schedule(r, session, (op) => {
      op.commit();
      session.agent.tools = parsed.tools;
      return { session: session.id, warnings };
    });
  }

  #compact(r: HandlerContext): Pending<JsonValue> {
    const session = this.#lookup(r, ["session", "keepRecentTurns", "summaryInstructions"]);
    const keep = r.params.optionalInteger("keepRecentTurns", { min: 0 }) ?? 2;
    const summaryInstructions = r.params.optionalString("summaryInstructions") ?? null;
    return this.#schedule(r, session, async (op) => {
      const summary = await compactAgent(session.agent, {
        keepRecentTurns: keep,
        summaryInstructions,
        signal: op.signal,
        commit: () => op.commit(),
      });
      return { session: session.id, summary };
    });
  }
}
