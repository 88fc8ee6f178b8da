/**
 * Client tools as functions: a definition (name, description, JSON Schema) with an async handler. The
 * registry answers every `tool/call` itself: the handler's return value is the output, a throw is an error
 * output the model sees, and `tool/cancel` (a timeout, a cancelled turn) aborts the handler's `signal`.
 * @module
 */
import { isJsonObject, type JsonObject } from "../protocol/json.ts";
import { lossyJsonAt, requireFunction, shown } from "./checks.ts";
import type { RequestId } from "./messages.ts";
import type { Peer } from "./peer.ts";
import type { SchemaValue } from "./schema_value.ts";
import type { JsonSchema, ToolCall, ToolDefinition, ToolRef } from "./types.ts";

/**
 * What a tool handler knows about the call besides its arguments. A handler must not wait for its own NPC's
 * (or session's) queued work: `npc.state()`, `talk` or `update` of its NPC (`bridge.npc(ctx.npc)`) waits for
 * the turn that made the call, which waits for the handler, until the tool timeout. Save from a handler with
 * `npc.state({ settle: false })` (the completed turns).
 *
 * @example
 * ```ts
 * import { Bridge } from "@open-apple-models/bridge";
 * await using bridge = await Bridge.open();
 * bridge.tool({ name: "dig", description: "Dig for a while." }, async (_args, ctx) => {
 *   // Stop when the bridge no longer needs the answer (timeout, cancelled turn).
 *   while (!ctx.signal.aborted) {
 *     await new Promise((resolve) => setTimeout(resolve, 10));
 *     if (ctx.npc) return `${ctx.npc} found a coin.`;
 *   }
 *   return "stopped";
 * });
 * ```
 */
export interface ToolContext {
  /**
   * Aborted when the bridge no longer needs the output: the tool timed out, the turn was cancelled or
   * ended, or the bridge closed. The reason is a `BridgeError` whose message says which.
   */
  signal: AbortSignal;
  /** The call as the model made it (`id`, `name`, `arguments`). */
  call: ToolCall;
  /** The id of the request whose turn made the call (`session/respond`, `npc/talk`, …). */
  requestId: RequestId | undefined;
  /** The session's id, for session turns (`bridge.session(ctx.session)` is a handle of it). */
  session?: string;
  /**
   * The NPC's id (its `Npc.id`, not the handle), for NPC turns: tells NPCs that share a tool apart;
   * `bridge.npc(ctx.npc)` is a handle of it.
   */
  npc?: string;
  /** The decision's index, in `decideMany`. */
  index?: number;
  /** Every param of the `tool/call` (extensions add their own context fields). */
  params: JsonObject;
}

/**
 * A tool handler: gets the arguments and a {@link ToolContext}; returns the output (text or any JSON
 * value; nothing = `""`), or throws to give the model an error output with the error's message. A handler
 * may take less than `Args` (ignore members, or take a wider type), never more: given to `bridge.tool` with
 * an inline schema, a handler that needs a member the schema leaves optional does not compile.
 *
 * @example
 * ```ts
 * import { Bridge, type ToolHandler } from "@open-apple-models/bridge";
 * const ring: ToolHandler<{ times: number }> = ({ times }) => "Dong! ".repeat(times).trim();
 * await using bridge = await Bridge.open();
 * bridge.tool({
 *   name: "ring_bell",
 *   description: "Rings the bell.",
 *   parameters: { type: "object", properties: { times: { type: "integer" } }, required: ["times"] },
 * }, ring);
 * ```
 */
export type ToolHandler<Args> = (args: Args, context: ToolContext) => unknown;

/**
 * The handler `bridge.tool` takes for a tool whose `parameters` schema is `S`. For a schema written inline
 * it is a {@link ToolHandler} of the schema's value ({@link ToolArgs}): a handler that needs more than the
 * schema promises (a member it leaves optional, another type) does not compile. For a schema the compiler
 * cannot see (a `ToolDefinition` from a file, a widened const), the arguments are a JSON object, and a
 * handler may still name the type it expects (`({ gate }: { gate: string }) => …`): nothing checks it
 * either way (the bridge holds the model to the schema at run time).
 *
 * @example
 * ```ts
 * import { Bridge, type ToolDefinition } from "@open-apple-models/bridge";
 * await using bridge = await Bridge.open();
 * // Inline: `gate` is a string, and required.
 * bridge.tool({
 *   name: "open_gate",
 *   parameters: { type: "object", properties: { gate: { type: "string" } }, required: ["gate"] },
 * }, ({ gate }) => `${gate} gate opened`);
 * // Loaded: the handler says what it expects.
 * const loaded: ToolDefinition = { name: "ring_bell", parameters: { type: "object" } };
 * bridge.tool(loaded, ({ times }: { times?: number }) => "Dong! ".repeat(times ?? 1).trim());
 * ```
 */
export type ToolHandlerFor<S> = S extends { type: "object"; properties: object } ? ToolHandler<SchemaValue<S>>
  // A method's parameters are compared both ways: a handler's own argument type is accepted for a schema
  // the compiler cannot see.
  : { handler(args: JsonObject, context: ToolContext): unknown }["handler"];

/**
 * The type of a tool's arguments: from its `parameters` schema when that is written inline (an object
 * schema with `properties`), else any JSON object.
 *
 * @example
 * ```ts
 * import { type ToolArgs } from "@open-apple-models/bridge";
 * type Args = ToolArgs<{ type: "object"; properties: { gate: { type: "string" } }; required: ["gate"] }>;
 * const args: Args = { gate: "north" }; // { gate: string }
 * ```
 */
export type ToolArgs<S> = S extends { type: "object"; properties: object } ? SchemaValue<S> : JsonObject;

/**
 * A definition whose `parameters` may be written inline; `S` is the schema, kept literal for typing.
 *
 * @example
 * ```ts
 * import { Bridge, type ToolSpec } from "@open-apple-models/bridge";
 * const spec: ToolSpec = { name: "look", description: "Describe the room." };
 * await using bridge = await Bridge.open();
 * bridge.tool(spec, (args) => `Nothing unusual (${Object.keys(args).length} arguments).`);
 * ```
 */
export interface ToolSpec<S extends JsonSchema = JsonSchema> extends ToolDefinition {
  /** JSON Schema of the arguments (the handler's `args` are typed from it when written inline). */
  parameters?: S;
}

/**
 * A registered client tool: pass it in `tools` when creating a session or NPC.
 *
 * @example
 * ```ts
 * import { Bridge } from "@open-apple-models/bridge";
 * await using bridge = await Bridge.open();
 * const bell = bridge.tool({ name: "ring_bell", description: "Rings the bell." }, () => "Dong.");
 * bell.name; // "ring_bell"
 * await bridge.createSession({ tools: [bell], model: "scripted" });
 * ```
 */
export class ClientTool {
  /** The definition sent to the bridge. */
  readonly definition: ToolDefinition;

  /** A handle for `definition` (see `Bridge.tool`). */
  constructor(definition: ToolDefinition) {
    this.definition = definition;
  }

  /** The tool's name. */
  get name(): string {
    return this.definition.name;
  }
}

/** The message the model sees for a thrown value. */
/**
 * Whether a handler's throw is a bug rather than an answer: what JavaScript itself throws for a mistake in the
 * code (`TypeError`, `ReferenceError`, `RangeError`, `SyntaxError`). A plain `Error` is an answer the handler
 * means ("The powder is wet.").
 */
function isBugError(error: unknown): error is Error {
  return error instanceof TypeError || error instanceof ReferenceError || error instanceof RangeError ||
    error instanceof SyntaxError;
}

function errorText(error: unknown): string {
  if (error instanceof Error) return error.message || error.name;
  return String(error);
}

/**
 * The error output for a result JSON would change (see `lossyJsonAt`), or null: a Map or a Set, which JSON
 * writes as `{}`, a `NaN` or `Infinity`, which it writes as `null`, or a BigInt, which it cannot write. The
 * path reads as JavaScript:
 * `'output.tags[0].kinds'`.
 */
function lossyOutput(value: unknown): string | null {
  const found = lossyJsonAt(value);
  if (found === null) return null;
  const path = found.path.map((key) => typeof key === "number" ? `[${key}]` : `.${key}`).join("");
  const { lossy } = found;
  const what = typeof lossy === "bigint"
    ? `a BigInt (${lossy}n), which JSON cannot write (return Number(n) or String(n) instead)`
    : lossy instanceof Map
    ? "a Map, which JSON writes as {} (return Object.fromEntries(map) instead)"
    : lossy instanceof Set
    ? "a Set, which JSON writes as {} (return [...set] instead)"
    : `${lossy}, which JSON writes as null (return a finite number or null instead)`;
  return `The tool's result is not JSON: 'output${path}' is ${what}.`;
}

/**
 * The NPC or session whose work a request or a tool call is (its `npc` or `session` param), as a key and as
 * words (`NPC 'mira'`).
 */
export function workOf(params: object | undefined): { key: string; words: string } | null {
  if (params === undefined || params === null) return null;
  const { npc, session } = params as { npc?: unknown; session?: unknown };
  if (typeof npc === "string") return { key: `npc ${npc}`, words: `NPC '${npc}'` };
  if (typeof session === "string") return { key: `session ${session}`, words: `session '${session}'` };
  return null;
}

/** A call whose handler runs: whose work it is, and what of that work was sent meanwhile and waits for it. */
interface RunningCall {
  name: string;
  work: { key: string; words: string };
  /** The methods of the requests of the same NPC or session queued behind the turn, sent while it ran. */
  queued: { method: string }[];
}

/** The registered tools of one bridge, and the answering of `tool/call`. */
export class ToolRegistry {
  readonly #tools = new Map<string, { definition: ToolDefinition; handler: ToolHandler<never> }>();
  #onBug: ((message: string) => void) | null = null;
  /** Names called without a handler, each told to `onBug` once. */
  readonly #unhandled = new Set<string>();
  /** NPCs restored with the tools of their save (definitions, whose handlers the save cannot hold). */
  readonly #restored = new Set<string>();
  /** The calls whose handler runs, by the `tool/call` id. */
  readonly #running = new Map<RequestId, RunningCall>();

  /**
   * Notes a request of the NPC or session `key` that runs after its current turn (`state()`, `talk`, …),
   * sent now: if a handler of that turn's tool runs and times out while it waits, `onBug` says why (the
   * handler most likely waits for it). Returns what to call when the request settles, or null.
   */
  noteQueued(key: string, method: string): (() => void) | null {
    const marks: { call: RunningCall; mark: { method: string } }[] = [];
    for (const call of this.#running.values()) {
      if (call.work.key !== key) continue;
      const mark = { method };
      call.queued.push(mark);
      marks.push({ call, mark });
    }
    if (marks.length === 0) return null;
    return () => {
      for (const { call, mark } of marks) call.queued.splice(call.queued.indexOf(mark), 1);
    };
  }

  /** Registers (or replaces) a tool. */
  add<S extends JsonSchema>(definition: ToolSpec<S>, handler: ToolHandlerFor<S>): ClientTool {
    if (typeof definition?.name !== "string" || definition.name === "") {
      throw new TypeError("A tool needs a non-empty 'name'.");
    }
    requireFunction(handler, `The handler of tool '${definition.name}'`);
    const copy: ToolDefinition = { ...definition };
    this.#tools.set(copy.name, { definition: copy, handler });
    return new ClientTool(copy);
  }

  /**
   * Notes that NPC `npc` was restored, with the tools of its save (`fromSave`) or with tools given: a call of
   * one of the save's tools that has no handler then says that a save holds no handlers.
   */
  noteRestored(npc: string, fromSave: boolean): void {
    if (fromSave) this.#restored.add(npc);
    else this.#restored.delete(npc);
  }

  /** The handler registered for `name`, if any. */
  handlerOf(name: string): ToolHandler<never> | undefined {
    return this.#tools.get(name)?.handler;
  }

  /** The definitions for `refs` (handles, registered names or definitions). */
  definitions(refs: readonly ToolRef[]): ToolDefinition[] {
    const kinds = "handles from bridge.tool, registered names or definitions";
    if (!Array.isArray(refs)) throw new TypeError(`'tools' must be an array (${kinds}); got ${shown(refs)}.`);
    return refs.map((ref, i) => {
      if (typeof ref === "string") {
        const tool = this.#tools.get(ref);
        if (!tool) throw new TypeError(`No tool named '${ref}' is registered (use bridge.tool).`);
        return tool.definition;
      }
      if (typeof ref !== "object" || ref === null) {
        throw new TypeError(`'tools[${i}]' must be one of the ${kinds}; got ${shown(ref)}.`);
      }
      return "definition" in ref ? ref.definition : ref;
    });
  }

  /**
   * Answers the peer's `tool/call` requests and aborts handlers on `tool/cancel`. A handler that throws what
   * only a bug throws (see {@link isBugError}) is also told to `onBug`, with the stack: the model gets only
   * the message. So is, once per name, a call of a tool this client has no handler for (a definition passed
   * in `tools` without `bridge.tool`): the model gets an error output and nothing else would say why.
   */
  install(peer: Peer, options: { onBug?: (message: string) => void } = {}): void {
    this.#onBug = options.onBug ?? null;
    peer.setRequestHandler("tool/call", (params, request) => this.#call(params, request.signal, request.id));
    peer.onNotification("tool/cancel", (params) => {
      const id = params.id;
      if (typeof id === "string" || typeof id === "number") {
        const reason = typeof params.reason === "string" ? params.reason : undefined;
        const running = this.#running.get(id);
        if (running && running.queued.length > 0 && reason?.includes("timed out")) {
          const { name, work, queued } = running;
          this.#onBug?.(
            `Tool '${name}' timed out while '${queued[0].method}' of its own ${work.words}, sent while the ` +
              "handler ran, waited for the turn that made the call: a handler that waits for its own NPC's " +
              "(or session's) queued work (state(), talk, update) waits until the tool timeout. Inside a tool " +
              "handler, save with npc.state({ settle: false }), or do that work once the turn is over.",
          );
        }
        this.#running.delete(id); // the bridge no longer waits for it (a handler may never end)
        peer.cancelIncoming(id, reason);
      }
    });
  }

  async #call(params: JsonObject, signal: AbortSignal, id: RequestId): Promise<JsonObject> {
    const raw = isJsonObject(params.call) ? params.call : {};
    const call: ToolCall = {
      id: typeof raw.id === "string" ? raw.id : String(id),
      name: typeof raw.name === "string" ? raw.name : "",
      arguments: isJsonObject(raw.arguments) ? raw.arguments : {},
    };
    const tool = this.#tools.get(call.name);
    if (!tool) {
      if (!this.#unhandled.has(call.name)) {
        this.#unhandled.add(call.name);
        const restored = typeof params.npc === "string" && this.#restored.has(params.npc)
          ? `NPC '${params.npc}' was restored from a save, which holds its tools' definitions but not their ` +
            "handlers: register each with bridge.tool(definition, handler) in the bridge it is restored in."
          : "register it with bridge.tool(definition, handler) and pass the handle, or its name, in 'tools'.";
        this.#onBug?.(
          `Tool '${call.name}' was called, but this client has no handler for it, so the model got an error ` +
            `output: ${restored}`,
        );
      }
      return { output: `No handler for tool '${call.name}' in this client.`, isError: true };
    }
    const context: ToolContext = {
      signal,
      call,
      requestId: typeof params.requestId === "string" || typeof params.requestId === "number"
        ? params.requestId
        : undefined,
      params,
      ...(typeof params.session === "string" ? { session: params.session } : {}),
      ...(typeof params.npc === "string" ? { npc: params.npc } : {}),
      ...(typeof params.index === "number" ? { index: params.index } : {}),
    };
    let value: unknown;
    const work = workOf(params);
    if (work !== null) this.#running.set(id, { name: call.name, work, queued: [] });
    try {
      // The arguments follow the tool's schema (the model is held to it), which typed the handler.
      value = await tool.handler(call.arguments as never, context);
    } catch (error) {
      if (signal.aborted) throw error;
      if (isBugError(error)) {
        this.#onBug?.(
          `Tool '${call.name}' threw a ${error.name}; the model got its message as an error output. ${error.stack}`,
        );
      }
      return { output: errorText(error), isError: true };
    } finally {
      this.#running.delete(id);
    }
    if (value === undefined) return { output: "" };
    let json: string | undefined;
    try {
      json = JSON.stringify(value);
    } catch (error) {
      // A BigInt: say where it is, as for a NaN (a cycle has no one place to name).
      return {
        output: lossyOutput(value) ?? `The tool's result is not JSON: ${errorText(error)}`,
        isError: true,
      };
    }
    if (json === undefined) {
      return { output: `The tool's result is not JSON (${typeof value}).`, isError: true };
    }
    // JSON writes a Map or a Set as {} and NaN or Infinity as null: only a result with one can hold them.
    const lossy = json.includes("{}") || json.includes("null") ? lossyOutput(value) : null;
    if (lossy !== null) return { output: lossy, isError: true };
    return { output: JSON.parse(json) };
  }
}
