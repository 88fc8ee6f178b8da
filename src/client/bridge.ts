/**
 * `Bridge`: the typed client. Opened in-process (an engine in this process) or over a spawned `oam stdio`
 * (any transport, in fact); the same classes behave the same way over both.
 * @module
 */
import { BridgeError } from "../protocol/errors.ts";
import type { WaitOptions } from "./types.ts";
import type { JsonObject, JsonValue } from "../protocol/json.ts";
import { PROTOCOL_VERSION, SERVER_INFO } from "../protocol/version.ts";
import { idProblem, lossyJsonProblem, shown, throwIfLossy } from "./checks.ts";
import { Connection } from "./connection.ts";
import type {
  Decision,
  DecisionDetails,
  DecisionOption,
  DecisionRequest,
  DecisionSettings,
  NpcInfo,
  NpcMemory,
  NpcOptions,
  NpcState,
  Persona,
  WorldInfo,
} from "./game_types.ts";
import { type EngineFactory, InProcessTransport } from "./in_process.ts";
import type { JsonInput, JsonObjectInput } from "./json_input.ts";
import type { JsonRpcErrorObject } from "./messages.ts";
import type { BridgeNotifications, DecisionParams, MethodName, ParamsOf, ResultOf } from "./methods.ts";
import { Npc, restoreNpc, type RestoreOptions, worldId } from "./npc.ts";
import { errorFromResponse, type NotificationHandler, type RequestOptions } from "./peer.ts";
import { Session } from "./session.ts";
import { StdioTransport, type StdioTransportOptions } from "./stdio.ts";
import type { SchemaValue } from "./schema_value.ts";
import type { ClientTool, ToolHandlerFor, ToolSpec } from "./tools.ts";
import type { ConnectionEnd, Transport } from "./transport.ts";
import type {
  InitializeResult,
  JsonSchema,
  Model,
  ModelAvailability,
  SessionInfo,
  SessionOptions,
  ToolRef,
  Transcript,
} from "./types.ts";
import { World } from "./world.ts";

/**
 * Options of every way to open a bridge.
 *
 * @example
 * ```ts
 * import { Bridge } from "@open-apple-models/bridge";
 * const warnings: string[] = [];
 * await using bridge = await Bridge.open({
 *   clientName: "my-game",
 *   onWarning: (warning, method) => warnings.push(`${method}: ${warning}`),
 * });
 * ```
 */
export interface BridgeOptions {
  /** `client.name` sent with `initialize` (default `"typescript"`). */
  clientName?: string;
  /**
   * Receives every warning a result carries (unknown parameters, unenforceable schema keywords, a scripted
   * reply the NPC could not use fully…), and a tool handler's bug (`method` "tool/call": it threw a
   * `TypeError`, `ReferenceError`, `RangeError` or `SyntaxError`; the warning holds the stack, the model got
   * the message). Default: printed to stderr. A throw from it does not fail the call that warned (its
   * result, such as a created NPC's handle, is still returned): the error goes to `onError`.
   */
  onWarning?: (warning: string, method: string) => void;
  /**
   * Receives errors thrown by notification listeners, world callbacks and `onWarning` (default:
   * `reportError`, which ends a Deno program unless an `"error"` listener on `globalThis` prevents it). An
   * error it throws itself goes to `reportError` too, once; it never fails the call that warned.
   */
  onError?: (error: Error) => void;
}

/**
 * Options of {@link Bridge.open}.
 *
 * @example
 * ```ts
 * import { Bridge } from "@open-apple-models/bridge";
 * import { BridgeEngine } from "@open-apple-models/bridge/engine";
 * await using bridge = await Bridge.open({
 *   engine: (send, onShutdown) => new BridgeEngine({ maxSessions: 8, onShutdown }, send),
 * });
 * ```
 */
export interface OpenOptions extends BridgeOptions {
  /**
   * Makes the engine (default: `BridgeEngine` with every default). Use it to configure the engine, e.g.
   * `(send, onShutdown) => new BridgeEngine({ toolTimeoutSeconds: 30, onShutdown }, send)`.
   */
  engine?: EngineFactory;
}

/**
 * Options of {@link Bridge.spawn}.
 *
 * @example
 * ```ts
 * import { Bridge } from "@open-apple-models/bridge";
 * // A compiled bridge next to the game, quiet logs.
 * const open = () => Bridge.spawn({ command: ["./oam", "stdio", "--log-level", "error"], stderr: "null" });
 * typeof open; // "function"
 * ```
 */
export interface SpawnOptions extends BridgeOptions, StdioTransportOptions {}

/**
 * Options of {@link Bridge.createSession}.
 *
 * @example
 * ```ts
 * import { Bridge } from "@open-apple-models/bridge";
 * await using bridge = await Bridge.open();
 * const guard = await bridge.createSession({
 *   session: "guard",
 *   instructions: "You are a castle guard. Reply in one sentence.",
 *   options: { toolChoice: "auto" },
 *   model: { type: "scripted", steps: [{ text: "Halt!" }] },
 * });
 * guard.warnings; // []
 * ```
 */
export interface CreateSessionOptions {
  /** The id (default generated: `s1`, `s2`, …). */
  session?: string;
  /** System instructions (persona, rules). */
  instructions?: string;
  /** Client tools: handles from {@link Bridge.tool}, registered names or definitions. */
  tools?: readonly ToolRef[];
  /** Defaults of each turn. */
  options?: SessionOptions;
  /** A saved transcript to resume. */
  history?: Transcript;
  /** The model (default `"system"`). */
  model?: Model;
}

/**
 * Options of {@link Bridge.createNpc}.
 *
 * @example
 * ```ts
 * import { Bridge } from "@open-apple-models/bridge";
 * await using bridge = await Bridge.open();
 * const village = await bridge.createWorld({ player: { gold: 60 } });
 * const gorm = await bridge.createNpc({ name: "Gorm" }, {
 *   npc: "gorm",
 *   world: village,
 *   memory: { facts: ["Aria likes axes."] },
 *   options: { worldWritable: ["player.gold"] },
 *   model: "scripted",
 * });
 * gorm.tools; // ["read_world_state", "update_world_state"]
 * ```
 */
export interface CreateNpcOptions {
  /** The id (default generated: `npc1`, …). */
  npc?: string;
  /** Client tools: handles from {@link Bridge.tool}, registered names or definitions. */
  tools?: readonly ToolRef[];
  /** A world (handle or id): adds the built-in world tools. */
  world?: World | string;
  /** Initial memory. */
  memory?: NpcMemory;
  /** NPC options. */
  options?: NpcOptions;
  /** The model (default `"system"`). Kept by the handle for {@link Npc.restore}. */
  model?: Model;
}

/** A decision's `actor` as sent: an NPC handle (an object with an `id` and no `name`) becomes its id. */
function actorParam(actor: NonNullable<DecisionRequest["actor"]>): Persona | string {
  if (typeof actor === "object" && actor !== null && !("name" in actor) && typeof actor.id === "string") {
    return actor.id;
  }
  return actor as Persona | string;
}

/**
 * What `decideMany` shares between its decisions: the engine settings, the wait options and `maxConcurrency`.
 * The bridge reads them only beside `requests` (one model per call, spec §6); inside a request it would warn
 * and drop them, so a request's `model` would leave its decision on the default model.
 */
const SHARED_DECISION_SETTINGS = [
  "model",
  "instructions",
  "temperature",
  "maxToolRounds",
  "toolTimeoutSeconds",
  "maxConcurrency",
  "timeoutMs",
  "signal",
] as const;

/** The TypeError message for the first shared setting given inside a request of `decideMany`, or null. */
function sharedSettingInRequest(requests: readonly unknown[]): string | null {
  for (const [index, request] of requests.entries()) {
    if (typeof request !== "object" || request === null) continue;
    const key = SHARED_DECISION_SETTINGS.find((k) => Object.hasOwn(request, k));
    if (key === undefined) continue;
    const scripted = key === "model"
      ? " A scripted model there plays one step per decision, in request order."
      : "";
    return `bridge.decideMany(): 'requests[${index}].${key}' is not read per decision: one decideMany call ` +
      `shares its settings among its decisions, so pass it beside the requests: bridge.decideMany(requests, ` +
      `{ ${key} }).${scripted} For a different one per decision, call bridge.decide for each.`;
  }
  return null;
}

/**
 * The TypeError message for a whole persona file (from `loadPersona`) passed where its `persona` goes: an
 * object with no `name` but a `persona` object. The bridge would say the persona's name is missing, of a file
 * that has one.
 */
function wholePersonaFile(persona: unknown): string | null {
  if (typeof persona !== "object" || persona === null || "name" in persona) return null;
  const inner = (persona as { persona?: unknown }).persona;
  if (typeof inner !== "object" || inner === null) return null;
  const name = (inner as { name?: unknown }).name;
  const named = typeof name === "string" ? ` named ${shown(name)}` : "";
  return `bridge.createNpc(): the persona has no 'name' but a 'persona'${named}: it looks like a ` +
    `whole persona file. Pass its parts: bridge.createNpc(file.persona, { npc: file.npc, options: file.options, tools: ` +
    `file.tools, memory: file.memory, model: modelFromArgs(Deno.args, file) }).`;
}

/** The wait options of `options`, and the rest (what is sent). */
function splitWait<T extends WaitOptions>(
  options: T,
): [Omit<T, keyof WaitOptions>, RequestOptions | undefined] {
  const { signal, timeoutMs, ...rest } = options;
  return [rest, signal === undefined && timeoutMs === undefined ? undefined : { signal, timeoutMs }];
}

/**
 * Options of {@link Bridge.generate}: the engine settings of a decision but `maxToolRounds` (`content/generate`
 * has no such limit).
 *
 * @example
 * ```ts
 * import { Bridge } from "@open-apple-models/bridge";
 * await using bridge = await Bridge.open();
 * const rumor = await bridge.generate<{ rumor: string }>(
 *   { type: "object", properties: { rumor: { type: "string" } }, required: ["rumor"] },
 *   "A rumor for the tavern.",
 *   { context: { town: "Ashford" }, model: { type: "scripted", steps: [{ json: { rumor: "The mill is haunted." } }] } },
 * );
 * rumor.rumor; // "The mill is haunted."
 * ```
 */
export interface GenerateOptions<C = JsonValue> extends Omit<DecisionSettings, "maxToolRounds">, WaitOptions {
  /**
   * Facts for the generation: any JSON value, an interface's included (`C`; `bridge.generate` checks it
   * with {@link JsonInput}); a `NaN` or `Infinity` in them is a TypeError when it runs, as in `decide`.
   */
  context?: C;
  /** Client tools. */
  tools?: readonly ToolRef[];
}

/**
 * A decision of `decideMany` that failed while it ran (the others are unaffected; an invalid request
 * rejects the whole call instead, see {@link Bridge.decideMany}).
 *
 * @example
 * ```ts
 * import { Bridge } from "@open-apple-models/bridge";
 * await using bridge = await Bridge.open();
 * const [fight, talk] = await bridge.decideMany([
 *   { situation: "A troll charges.", options: ["fight", "run"] },
 *   { situation: "The troll wants to talk.", options: ["listen", "leave"] },
 * ], {
 *   model: {
 *     type: "scripted", // one step per decision, in order: the second one is blocked
 *     steps: [{ json: { reasoning: "Cornered.", choice: "fight", confidence: 60 } }, { error: "guardrail_violation" }],
 *   },
 * });
 * if (!("error" in fight)) fight.optionID; // "fight"
 * if ("error" in talk) talk.error.dataCode; // "guardrail_violation"
 * ```
 */
export interface DecisionFailure {
  /** Why it failed. */
  error: BridgeError;
}

/** `end` without its `error`. */
function withoutError(end: ConnectionEnd): ConnectionEnd {
  const { error: _error, ...rest } = end;
  return rest;
}

function printWarning(warning: string, method: string): void {
  // Warnings go to stderr (never stdout); a script can route them with `onWarning`.
  // deno-lint-ignore no-console
  console.warn(`warning (${method}): ${warning}`);
}

/**
 * A connection to the bridge with typed methods. `initialize` is done when it opens; `close()` (or
 * `await using`) shuts the bridge down.
 *
 * Tools are functions: {@link Bridge.tool} registers one, and the bridge's `tool/call`s are answered by it
 * (its return value is the output, a throw is an error output, `tool/cancel` aborts its signal).
 *
 * @example A shopkeeper with one client tool
 * ```ts
 * import { Bridge } from "@open-apple-models/bridge";
 *
 * await using bridge = await Bridge.open(); // in-process; Bridge.spawn() runs `oam stdio` instead
 * const stock = bridge.tool({
 *   name: "check_stock",
 *   description: "How many of an item the shop has.",
 *   parameters: { type: "object", properties: { item: { type: "string" } }, required: ["item"] },
 * }, ({ item }) => ({ item, count: item === "ale" ? 3 : 0 }));
 * const mira = await bridge.createNpc({ name: "Mira", role: "the innkeeper" }, {
 *   tools: [stock],
 *   options: { groundingTool: "check_stock", playerOptionCount: 0 },
 *   model: {
 *     type: "scripted",
 *     steps: [
 *       { toolCalls: [{ name: "check_stock", arguments: { item: "ale" } }] },
 *       { json: { emotion: "happy", line: "Three ales left!", ends_conversation: false } },
 *     ],
 *   },
 * });
 * const reply = await mira.talk("Any ale?");
 * reply.line; // "Three ales left!"
 * ```
 */
export class Bridge implements AsyncDisposable {
  /** The `initialize` result: server, capabilities (`methods` includes extensions'), model availability. */
  readonly server: InitializeResult;
  readonly #c: Connection;
  #closing: Promise<void> | null = null;
  /** True when close() was called while the connection was open (it ends it by asking for a shutdown). */
  #closedHere = false;

  private constructor(connection: Connection, server: InitializeResult) {
    this.#c = connection;
    this.server = server;
  }

  /** Opens a bridge running in this process (no child process). */
  static open(options: OpenOptions = {}): Promise<Bridge> {
    return Bridge.connect(new InProcessTransport(options.engine), options);
  }

  /**
   * Spawns `oam stdio` and opens a bridge over it. Which command: `options.command`, else
   * `OAM_BRIDGE_COMMAND`, `OAM_BRIDGE_PATH` (a compiled `oam`), else `oam stdio` from `PATH`.
   * Needs `--allow-run` (and `--allow-env` to read those variables). An `oam` from the package:
   * `deno install -g -n oam --allow-read --allow-env --allow-ffi jsr:@open-apple-models/bridge/cli`.
   */
  static spawn(options: SpawnOptions = {}): Promise<Bridge> {
    return Bridge.connect(new StdioTransport(options), options);
  }

  /** Opens a bridge over any transport: starts it, sends `initialize` and checks the protocol version. */
  static async connect(transport: Transport, options: BridgeOptions = {}): Promise<Bridge> {
    const connection = new Connection(transport, {
      onWarning: options.onWarning ?? printWarning,
      ...(options.onError ? { onError: options.onError } : {}),
    });
    const peer = connection.peer;
    try {
      await peer.start();
      const server = await connection.request("initialize", {
        client: { name: options.clientName ?? "typescript", version: SERVER_INFO.version },
        protocolVersion: PROTOCOL_VERSION,
      });
      const major = String(server.protocolVersion).split(".")[0];
      if (major !== PROTOCOL_VERSION.split(".")[0]) {
        throw BridgeError.of(
          "invalid_request",
          `The bridge speaks protocol ${server.protocolVersion}; this client speaks ${PROTOCOL_VERSION}.`,
        );
      }
      return new Bridge(connection, server);
    } catch (error) {
      await peer.close();
      throw error;
    }
  }

  /** Methods the bridge serves (extensions' included). */
  get methods(): readonly string[] {
    return this.server.capabilities.methods;
  }

  /** True once the bridge is closed (by `close()` or because it stopped). */
  get closed(): boolean {
    return this.#c.peer.closed;
  }

  /** Resolves when the bridge is closed ({@link Bridge.closeInfo} then says why). */
  get done(): Promise<void> {
    return this.#c.peer.done;
  }

  /**
   * Why the bridge closed, once it has (when {@link Bridge.done} resolves); null while it is open. `by` is
   * `"client"` (`close()`), `"server"` (the server is stopping, close code 1001; the bridge process exited…)
   * or `"network"` (the connection broke, code 1006); a WebSocket also gives its close `code` and `reason`.
   * See {@link ConnectionEnd}.
   *
   * @example Reconnecting a browser game when the server restarts
   * ```ts
   * import { Bridge, WebSocketTransport } from "@open-apple-models/bridge";
   * async function connect(url = "ws://127.0.0.1:1976/rpc"): Promise<Bridge> {
   *   const bridge = await Bridge.connect(new WebSocketTransport(url));
   *   bridge.done.then(() => {
   *     const { by, code, reason } = bridge.closeInfo!;
   *     if (by === "client") return; // this game closed it
   *     console.warn(`Bridge lost (${by}, code ${code}: ${reason}); reconnecting.`);
   *     setTimeout(() => void connect(url), 1000);
   *   });
   *   return bridge;
   * }
   * ```
   */
  get closeInfo(): ConnectionEnd | null {
    const end = this.#c.peer.closeInfo;
    // close() sends `shutdown` first, so the bridge closes the connection: still this side's doing.
    if (end === null || !this.#closedHere || end.by === "client") return end;
    return withoutError({ ...end, by: "client" });
  }

  /** The system model's availability now. */
  availability(): Promise<ModelAvailability> {
    return this.#c.request("model/availability", {});
  }

  /** Health check. */
  async ping(): Promise<void> {
    await this.#c.request("ping", {});
  }

  /**
   * Registers a client tool: a definition with its JSON Schema, and a handler `(args, ctx) => output`.
   * Written inline, the schema types `args`, and a handler that needs more than it promises (a member the
   * schema leaves optional, another type) does not compile (see {@link ToolHandlerFor}). A definition held in a
   * variable keeps its types with `as const`; without it `args` are any JSON values (`item.toUpperCase()` does
   * not compile: "Property 'toUpperCase' does not exist on type 'string | number | …'"). Returns a handle to
   * pass in `tools`. Registering a name again replaces the handler for every NPC, session and decision that
   * has the tool (one handler per name; `ctx.npc` tells NPCs apart), with a warning when it is another one.
   */
  tool<const S extends JsonSchema>(
    definition: ToolSpec<S>,
    handler: ToolHandlerFor<S>,
  ): ClientTool {
    const previous = typeof definition?.name === "string"
      ? this.#c.tools.handlerOf(definition.name)
      : undefined;
    const tool = this.#c.tools.add(definition, handler);
    if (previous !== undefined && previous !== handler) {
      // Two persona files with the same tool, each registered with its own handler: the last one answers all.
      this.#c.warn(
        `Tool '${definition.name}' already had a handler; the new one answers every call of it from now on, ` +
          "whichever NPC, session or decision makes it (one handler per name: to answer each NPC its own way, " +
          "look at ctx.npc in one handler).",
        "bridge.tool",
      );
    }
    return tool;
  }

  /**
   * Creates an agent session. A `NaN`, `Infinity`, `Map` or `Set` in the options (JSON would send `null` or
   * `{}`) is a TypeError naming its path, and nothing is sent.
   */
  async createSession(options: CreateSessionOptions = {}): Promise<Session> {
    const params = { ...options, tools: this.#c.definitions(options.tools) };
    throwIfLossy(params, "bridge.createSession()");
    const result = await this.#c.request("session/create", params);
    return new Session(this.#c, result.session, result.warnings);
  }

  /** A handle for an existing session, by its id (a handle or anything but a string is a TypeError). */
  session(id: string): Session {
    const problem = idProblem(id, { where: "bridge.session()", noun: "session", example: "s1" });
    if (problem !== null) throw problem;
    return new Session(this.#c, id);
  }

  /** Every session. */
  async listSessions(): Promise<SessionInfo[]> {
    return (await this.#c.request("session/list", {})).sessions;
  }

  /**
   * Creates an NPC from a persona. A `NaN`, `Infinity`, `Map` or `Set` in the persona or the options (memory,
   * options, model) is a TypeError naming its path (JSON would send `null` or `{}`), and nothing is sent.
   */
  async createNpc(persona: Persona, options: CreateNpcOptions = {}): Promise<Npc> {
    const file = wholePersonaFile(persona);
    if (file !== null) throw new TypeError(file);
    const params = {
      ...options,
      persona,
      tools: this.#c.definitions(options.tools),
      world: worldId(options.world) ?? undefined,
    };
    throwIfLossy(params, "bridge.createNpc()");
    const result = await this.#c.request("npc/create", params);
    return new Npc(this.#c, result.npc, {
      tools: result.tools,
      warnings: result.warnings,
      model: options.model,
    });
  }

  /**
   * Rebuilds an NPC from a save ({@link Npc.state}); send `model` again unless it is the system model. A
   * `NaN`, `Infinity`, `Map` or `Set` in the save (a field edited by the game) is a TypeError naming its path.
   * After a restart, create the save's world first (`bridge.createWorld(savedState, { world: save.world })`),
   * and give the saved client tools their handlers again with `bridge.tool` before the NPC's next turn: a save
   * holds the tools' definitions, not their handlers (a call of one without a handler is an error output the
   * model sees, and a warning).
   */
  restoreNpc(state: NpcState, options: RestoreOptions = {}): Promise<Npc> {
    return restoreNpc(this.#c, { ...options, state });
  }

  /**
   * A handle for an existing NPC, by its id (`"bram"`, not its persona's name `Bram`). A persona, a handle or
   * anything but a string is a TypeError saying what to pass.
   */
  npc(id: string): Npc {
    const problem = idProblem(id, { where: "bridge.npc()", noun: "NPC", example: "bram" });
    if (problem !== null) throw problem;
    return new Npc(this.#c, id);
  }

  /** Every NPC. */
  async listNpcs(): Promise<NpcInfo[]> {
    return (await this.#c.request("npc/list", {})).npcs;
  }

  /**
   * Creates a world with an initial state (an object, default `{}`; an array, or a `bigint`, `Map` or `Set`
   * in it, does not compile, see {@link JsonObjectInput}; a `NaN` or `Infinity` in it is a TypeError, since
   * JSON would send `null`, and so is a `Map` or a `Set`, which JSON sends as `{}`). `options.world` picks the
   * id (default `w1`, `w2`, …): an id where the state goes (`createWorld("village")`) does not compile, and is
   * a TypeError saying where it goes when it runs.
   */
  async createWorld<T extends object | string = JsonObject>(
    // A string is given a type no value has (its one key's type is `never`), named by the mistake: `deno check`
    // shows the name as the error, and nothing, not even a string of those words, compiles in its place.
    state?: T extends string ? {
        readonly "createWorld takes the state first, the id in its options: createWorld(state, { world: id })":
          never;
      }
      : T & JsonObjectInput<T>,
    options: { world?: string } = {},
  ): Promise<World> {
    if (typeof state === "string") {
      throw new TypeError(
        `bridge.createWorld(${
          JSON.stringify(state)
        }): the world's state comes first, its id in the options: ` +
          `createWorld({ … }, { world: ${JSON.stringify(state)} }).`,
      );
    }
    const initial: object = state ?? {};
    const problem = lossyJsonProblem(initial, { where: "bridge.createWorld()", what: "state" });
    if (problem !== null) throw problem;
    const result = await this.#c.request<{ world: string }>("world/create", {
      world: options.world,
      state: initial,
    });
    return new World(this.#c, result.world);
  }

  /** A handle for an existing world, by its id (a handle, a state or anything but a string is a TypeError). */
  world(id: string): World {
    const problem = idProblem(id, { where: "bridge.world()", noun: "world", example: "village" });
    if (problem !== null) throw problem;
    return new World(this.#c, id);
  }

  /** Every world. */
  async listWorlds(): Promise<WorldInfo[]> {
    return (await this.#c.request("world/list", {})).worlds;
  }

  /**
   * Picks one of `options` (ids, or `{id, description}`); `optionID` is typed as one of the ids. With a
   * single option the answer comes at once without a model call. A `NaN`, `Infinity`, `Map` or `Set` in the
   * situation, `context` or settings is a TypeError naming its path (`bridge.decide(): the context's 'hp' is
   * NaN, …`; JSON would send `null` or `{}`), and nothing is sent; so it is in `decideMany` and `generate`.
   *
   * @example
   * ```ts
   * import { Bridge } from "@open-apple-models/bridge";
   * await using bridge = await Bridge.open();
   * const offer = await bridge.decide("The player offers 5 gold for the sword.", [
   *   { id: "sell", description: "take the 5 gold" },
   *   "haggle",
   *   "refuse",
   * ], {
   *   actor: { name: "Greta", personality: "A stubborn smith." },
   *   context: { swordPrice: 8, playerGold: 6 },
   *   fallbackOptionID: "refuse", // if guardrails block the decision
   *   model: { type: "scripted", steps: [{ json: { reasoning: "Too low.", choice: "haggle", confidence: 75 } }] },
   * });
   * const answer: "sell" | "haggle" | "refuse" = offer.optionID; // "haggle", typed from the options
   * [answer, offer.confidence, offer.isFallback]; // ["haggle", 75, false]
   * ```
   */
  async decide<const Id extends string, C = JsonValue>(
    situation: string | JsonValue,
    options: readonly DecisionOption<Id>[],
    details: DecisionDetails<Id, C> & { context?: JsonInput<NoInfer<C>> } & DecisionSettings & WaitOptions =
      {},
  ): Promise<Decision<Id>> {
    const [sent, wait] = splitWait(details);
    // `context` is JSON (JsonInput checked it); the walk below finds a NaN the types cannot.
    const params = this.#decision({ ...sent, situation, options } as DecisionRequest);
    throwIfLossy(params, "bridge.decide()");
    return await this.#c.request<Decision<Id>>("decision/decide", params, wait);
  }

  /**
   * Independent decisions with shared settings, in request order; each result's `optionID` is typed as one of
   * its own request's ids (in the example, `"fight" | "run"`, then `"listen" | "leave"`), and a
   * `fallbackOptionID` outside the options does not compile. A decision that fails while it runs (a
   * guardrail block without a fallback, an invalid answer) is a {@link DecisionFailure} in its place and does
   * not affect the others. A request the bridge refuses before any model call (duplicate or missing option
   * ids, a `fallbackOptionID` outside the options, an unknown NPC `actor`) rejects the whole call, its message
   * naming it (`'requests[7].options'`) and `error.data.index` holding its index (7), and no decision runs.
   * The `model` and the other settings are the call's, in `settings`: one model plays every decision (the
   * protocol has none per decision), and a request that holds one is a TypeError before anything is sent.
   *
   * @example
   * ```ts
   * import { Bridge } from "@open-apple-models/bridge";
   * await using bridge = await Bridge.open();
   * const [troll, stranger] = await bridge.decideMany([
   *   { situation: "A troll charges.", options: ["fight", "run"] },
   *   { situation: "A stranger waves.", options: ["listen", "leave"], fallbackOptionID: "leave" },
   * ], {
   *   model: {
   *     type: "scripted", // one step per decision, in order
   *     steps: [
   *       { json: { reasoning: "Cornered.", choice: "fight", confidence: 60 } },
   *       { json: { reasoning: "Curious.", choice: "listen", confidence: 70 } },
   *     ],
   *   },
   * });
   * const first: "fight" | "run" | null = "error" in troll ? null : troll.optionID; // "fight"
   * const second: "listen" | "leave" | null = "error" in stranger ? null : stranger.optionID; // "listen"
   * ```
   */
  async decideMany<const Id extends string, const R extends readonly DecisionRequest<Id>[]>(
    requests: R & readonly DecisionRequest<Id>[],
    settings: DecisionSettings & WaitOptions & { maxConcurrency?: number } = {},
  ): Promise<
    { -readonly [K in keyof R]: Decision<R[K] extends DecisionRequest<infer I> ? I : Id> | DecisionFailure }
  > {
    if (!Array.isArray(requests)) {
      throw new TypeError(`'requests' must be an array of {situation, options}; got ${shown(requests)}.`);
    }
    const misplaced = sharedSettingInRequest(requests);
    if (misplaced !== null) throw new TypeError(misplaced);
    type Results = { results: (Decision<Id> | { error: JsonRpcErrorObject })[] };
    const [sent, wait] = splitWait(settings);
    const params = { ...sent, requests: requests.map((r) => this.#decision(r)) };
    throwIfLossy(params, "bridge.decideMany()");
    const { results } = await this.#c.request<Results>("decision/decideMany", params, wait);
    const out: (Decision<Id> | DecisionFailure)[] = [];
    for (const r of results) {
      if ("error" in r) out.push({ error: errorFromResponse(r.error) });
      else out.push(r);
    }
    // In request order: each decision's optionID is one of its own request's ids.
    return out as {
      -readonly [K in keyof R]: Decision<R[K] extends DecisionRequest<infer I> ? I : Id> | DecisionFailure;
    };
  }

  #decision(r: DecisionRequest & DecisionSettings): DecisionParams {
    const { actor, ...rest } = r;
    const params: DecisionParams = { ...rest, tools: this.#c.definitions(r.tools) };
    if (actor !== undefined) params.actor = actorParam(actor);
    return params;
  }

  /**
   * Generates JSON matching `schema` (keys in schema order). The result is typed from a schema written
   * inline ({@link SchemaValue}: `required` members, string enums, arrays, nested objects); `T` names the
   * type you expect instead (`generate<Quest>(questSchema, …)`), for a schema using `$ref`. A schema held in a
   * variable keeps its types with `as const`; without it TypeScript widens `"object"` to `string`, and the
   * result is a type named by the fix, which a {@link JsonValue} takes but no member access does:
   * `quest.title` does not compile ("Property 'title' does not exist on type '{ readonly "generate's schema
   * has widened types: write it inline, add 'as const' to its variable, or name the result's type:
   * generate<Quest>(schema, prompt)": never; }'"). A schema declared as a {@link JsonSchema} gives any JSON value.
   *
   * @example
   * ```ts
   * import { Bridge } from "@open-apple-models/bridge";
   * await using bridge = await Bridge.open();
   * const questSchema = {
   *   type: "object",
   *   properties: { title: { type: "string" }, gold: { type: "integer", minimum: 10 } },
   *   required: ["title", "gold"],
   * } as const; // keeps "object", "string" and the required names for the result's type
   * const quest = await bridge.generate(questSchema, "A side quest for the tavern.", {
   *   model: { type: "scripted", steps: [{ json: { title: "The Missing Cask", gold: 40 } }] },
   * });
   * const title: string = quest.title; // "The Missing Cask"
   * quest.gold + 5; // 45
   * ```
   */
  async generate<T = never, const S extends JsonSchema = JsonSchema, C = JsonValue>(
    schema: S,
    prompt: string,
    options: GenerateOptions<C> & { context?: JsonInput<NoInfer<C>> } = {},
  ): Promise<
    [T] extends [never]
      // A schema whose `type` TypeScript widened to `string` (a variable without `as const`) gives a type no
      // value has, named by the fix, so that the first use of a member says what to do.
      ? S extends { type: infer W } ? string extends W ? {
            readonly "generate's schema has widened types: write it inline, add 'as const' to its variable, or name the result's type: generate<Quest>(schema, prompt)":
              never;
          }
        : SchemaValue<S>
      : SchemaValue<S>
      : T
  > {
    const [sent, wait] = splitWait(options);
    const params = { ...sent, prompt, schema, tools: this.#c.definitions(options.tools) };
    throwIfLossy(params, "bridge.generate()");
    // The content is the schema's (the bridge checks it): the type the signature gives it.
    const result = await this.#c.request<{ content: never }>("content/generate", params, wait);
    return result.content;
  }

  /**
   * Calls a protocol method: its params and result are typed from `BridgeMethods` (`"npc/list"` gives
   * `{npcs}`), so a misspelled or missing param does not compile. Params may be left out when they are all
   * optional (`request("shutdown")`). An `npc/cancel`, `npc/delete`, `session/cancel` or `session/delete` sent
   * here does what `cancel()` and `delete()` do: from the call on, the running turn of the NPC or session it
   * names calls its `onLine`/`onText`/`onEvent` no more, and after a delete its `-32009` says why.
   *
   * @example
   * ```ts
   * import { Bridge } from "@open-apple-models/bridge";
   * await using bridge = await Bridge.open();
   * const { npcs } = await bridge.request("npc/list", {});
   * npcs.length; // 0
   * ```
   */
  request<M extends MethodName>(
    method: M,
    // The params may be left out when every member is optional.
    ...args: Record<never, never> extends ParamsOf<M> ? [params?: ParamsOf<M>, options?: RequestOptions]
      : [params: ParamsOf<M>, options?: RequestOptions]
  ): Promise<ResultOf<M>>;
  /**
   * Calls a method the protocol does not define (an extension's, e.g. `"quest/narrate"`); `T` is the result
   * type you expect (not checked). The protocol's own methods are typed by the other overload: leave `T` out
   * for them. Given a `T`, a call is taken by this overload whatever its method (TypeScript cannot see the
   * method's name once a type argument is written), so neither its params nor its result are checked:
   * `request<{ text: string }>("npc/talk", …)` compiles. To name the result of a protocol method, annotate
   * the variable instead, which is checked: `const reply: NpcReply = await bridge.request("npc/talk", …)`
   * (or `ResultOf<"npc/talk">`).
   *
   * @example
   * ```ts
   * import { Bridge, BridgeError } from "@open-apple-models/bridge";
   * await using bridge = await Bridge.open();
   * const error = await bridge.request<{ text: string }>("quest/narrate", { quest: "crypt" }).catch((e) => e);
   * (error as BridgeError).dataCode; // "method_not_found": no extension serves it here
   * ```
   */
  request<T = JsonValue, const M extends string = string>(
    // A protocol method whose params the overload above refused is not taken here: the editor says why.
    method: M extends MethodName
      ? `'${M}' is a protocol method: its params must be BridgeMethods['${M}']['params']`
      : M,
    params?: object,
    options?: RequestOptions,
  ): Promise<T>;
  request(method: string, params?: object, options?: RequestOptions): Promise<unknown> {
    return this.#c.request(method, params, options);
  }

  /**
   * Sends a notification: a request without an id, which the bridge never answers (so a mistake in it is
   * never reported). For a protocol method (`session/cancel`, `npc/cancel`, …) the params are typed from
   * `BridgeMethods`, as for {@link Bridge.request}, and a misspelled one does not compile. A notification of
   * `npc/cancel`, `npc/delete`, `session/cancel` or `session/delete` ends the work as a request of it does: the
   * callbacks of that NPC's or session's turns get nothing more from the call on, and a delete's `-32009` says
   * "… when an 'npc/delete' notification deleted the NPC."
   *
   * @example
   * ```ts
   * import { Bridge } from "@open-apple-models/bridge";
   * await using bridge = await Bridge.open();
   * const guard = await bridge.createSession({ model: "scripted" });
   * await bridge.notify("session/cancel", { session: guard.id }); // cancels its turn and queued work
   * ```
   */
  notify<M extends MethodName>(
    method: M,
    ...params: Record<never, never> extends ParamsOf<M> ? [params?: ParamsOf<M>] : [params: ParamsOf<M>]
  ): Promise<void>;
  /** Sends a notification of a method the protocol does not define (an extension's, e.g. `"quest/cancel"`). */
  notify<const M extends string>(
    method: M extends MethodName
      ? `'${M}' is a protocol method: its params must be BridgeMethods['${M}']['params']`
      : M,
    params?: JsonObject,
  ): Promise<void>;
  notify(method: string, params?: object): Promise<void> {
    // npc/cancel, npc/delete, session/cancel, session/delete silence the turns they end, as a request of them.
    return this.#c.notify(method, params);
  }

  /**
   * Calls `handler` for every notification `method`. Returns a function that removes it. The bridge's own
   * notifications (`world/changed`, `session/event`, `npc/event`, `tool/cancel`) give `params` their
   * {@link BridgeNotifications} type.
   */
  onNotification<M extends keyof BridgeNotifications>(
    method: M,
    handler: (params: BridgeNotifications[M], method: M) => void,
  ): () => void;
  /** Calls `handler` for every notification `method` (an extension's; `"*"`: all). Returns its remover. */
  onNotification(method: string, handler: NotificationHandler): () => void;
  onNotification(method: string, handler: (params: never, method: never) => void): () => void {
    return this.#c.peer.onNotification(method, handler as NotificationHandler);
  }

  /**
   * Shuts the bridge down: `shutdown` cancels every turn (each gets its `-32009` answer) and pending tool
   * call, then the transport closes. Over a WebSocket or in process, close() waits up to 5 s for the
   * `shutdown` answer first; a spawned bridge gets the end of its input right after the `shutdown` (it
   * answers both, then exits), a stopped one (SIGSTOP) is continued, and one that has not exited after the
   * transport's `exitTimeoutMs` (3 s) gets SIGTERM, then SIGKILL.
   * Calls still pending after that reject with `-32023 shut_down`.
   */
  close(): Promise<void> {
    if (this.#closing === null && !this.#c.peer.closed) {
      this.#closedHere = true;
      this.#c.closingHere();
    }
    this.#closing ??= (async () => {
      const peer = this.#c.peer;
      if (!peer.closed) {
        const shutdown = peer.request("shutdown", {}, { timeoutMs: 5000 }).catch(() => {
          // closing anyway
        });
        // A spawned bridge reads the end of its input after the shutdown and answers it before it exits: no
        // need to wait for the answer first (a stopped or busy one would keep close() waiting 5 s).
        if (!this.#c.transport.drainsOnClose) await shutdown;
      }
      await peer.close();
    })();
    return this.#closing;
  }

  /** {@link Bridge.close}, for `await using`. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}
