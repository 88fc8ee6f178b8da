/**
 * `Npc`: a non-player character (`npc/*`), a thin handle over the connection.
 * @module
 */
import type { JsonObject, JsonValue } from "../protocol/json.ts";
import type { Cancel, Connection, TurnOptions } from "./connection.ts";
import type { Emotion, NpcEvent, NpcMemory, NpcOptions, NpcReply, NpcState, Persona } from "./game_types.ts";
import { TurnStream } from "./turn_stream.ts";
import type { ParamsOf } from "./methods.ts";
import { callbackProblem, paramsLossProblem, shown, throwIfLossy } from "./checks.ts";
import type { JsonInput } from "./json_input.ts";
import { isFlatValue } from "./transport.ts";
import type { Model, ToolChoice, ToolRef, WaitOptions } from "./types.ts";

/**
 * Options of {@link Npc.talk}. A callback that throws gets no more events, and the call rejects with its
 * error once the turn has ended (the turn runs to its end, and is kept in the history).
 *
 * @example
 * ```ts
 * import { Bridge } from "@open-apple-models/bridge";
 * await using bridge = await Bridge.open();
 * const gorm = await bridge.createNpc({ name: "Gorm" }, {
 *   options: { replyFormat: "text" },
 *   model: { type: "scripted", steps: [{ text: "[proud] Finest steel in the valley.", chunks: 4 }] },
 * });
 * let portrait = "neutral";
 * let shown = "";
 * await gorm.talk("Nice sword.", {
 *   context: "The player holds 60 gold.",
 *   onEmotion: (emotion) => portrait = emotion,
 *   onLine: (_delta, line) => shown = line, // typewriter
 * });
 * [portrait, shown]; // ["proud", "Finest steel in the valley."]
 * ```
 */
export interface TalkOptions<C = JsonValue> extends TurnOptions {
  /**
   * What is happening right now ("The player just paid 45 gold.", or facts as JSON, an interface's included:
   * `C`, checked by {@link JsonInput}); this turn only. A `NaN` or `Infinity` in it (JSON would send `null`),
   * a `Map` or a `Set` (JSON would send `{}`) is a TypeError naming its path, and nothing is sent.
   */
  context?: C;
  /**
   * Receives the line as it streams (typewriter): the new piece, the whole line so far, and whether the
   * line was replaced (then `delta` is the whole new line). A line is replaced when the bridge changes what it
   * already streamed (quotes around the whole line kept after all, a retry): a typewriter that only appends
   * `delta` would print the new line straight after the old one, so show it again in full when `isReset`
   * (`(delta, _line, isReset) => say(isReset ? "\n" + delta : delta)`), or redraw `line` each time.
   */
  onLine?: (delta: string, line: string, isReset: boolean) => void;
  /** Receives the emotion as soon as the model has chosen it (a later one replaces it). */
  onEmotion?: (emotion: Emotion) => void;
  /** Receives every event, in order. */
  onEvent?: (event: NpcEvent) => void;
  /** Stream events (default: on when a callback is given). */
  stream?: boolean;
  /** Per-turn tool choice. */
  toolChoice?: ToolChoice;
}

/**
 * Options of {@link Npc.restore} and `bridge.restoreNpc`.
 *
 * @example
 * ```ts
 * import { Bridge } from "@open-apple-models/bridge";
 * await using bridge = await Bridge.open();
 * const gorm = await bridge.createNpc({ name: "Gorm" }, { npc: "gorm", model: "scripted" });
 * const save = await gorm.state();
 * const copy = await bridge.restoreNpc(save, { npc: "gorm-2", world: null, model: "scripted" });
 * copy.id; // "gorm-2"
 * ```
 */
export interface RestoreOptions {
  /** The id (default: the saved one). */
  npc?: string;
  /** Client tools (default: the saved definitions). */
  tools?: readonly ToolRef[];
  /** Options (default: the saved ones). */
  options?: NpcOptions;
  /** The world (default: the saved one; `null` for none). */
  world?: string | { readonly id: string } | null;
  /** The model: it is not part of the save (default `"system"`, or the model the handle was made with). */
  model?: Model;
}

function isEvent(value: JsonValue | undefined): value is JsonObject & NpcEvent {
  return typeof value === "object" && value !== null && !Array.isArray(value) &&
    typeof value.type === "string";
}

/**
 * The world id of a handle or id. Anything else is a TypeError: an object without an `id` (most likely a
 * world seed, such as a persona file's `world`) would otherwise be dropped and the NPC made without a world.
 */
export function worldId(
  world: string | { readonly id: string } | null | undefined,
): string | null | undefined {
  if (world === null || world === undefined || typeof world === "string") return world;
  if (typeof world === "object" && typeof world.id === "string") return world.id;
  throw new TypeError(
    `'world' must be a World (from bridge.createWorld) or a world id; got ${shown(world)}. ` +
      "A world seed (such as a persona file's 'world') is created first: world: await bridge.createWorld(seed).",
  );
}

/**
 * A non-player character: a persona, a conversation, a memory, client tools and an optional world.
 * Create one with `bridge.createNpc`.
 *
 * @example
 * ```ts
 * import { Bridge } from "@open-apple-models/bridge";
 * await using bridge = await Bridge.open();
 * const gorm = await bridge.createNpc({ name: "Gorm", role: "the village blacksmith" }, {
 *   options: { playerOptionCount: 0, canEndConversation: false },
 *   model: { type: "scripted", steps: [{ json: { emotion: "proud", line: "Finest steel in the valley." } }] },
 * });
 * let shown = "";
 * const reply = await gorm.talk("Nice sword.", { onLine: (_delta, line) => shown = line }); // the line so far
 * reply.emotion; // "proud"
 * ```
 */
export class Npc {
  /** The NPC's id. */
  readonly id: string;
  /** Every tool the model sees (client tools and built-in world and memory tools). */
  readonly tools: readonly string[];
  /** Warnings from creating or restoring it. */
  readonly warnings: readonly string[];
  readonly #c: Connection;
  readonly #model: Model | undefined;
  /** What cancels its turn. */
  readonly #cancel: Cancel;

  /**
   * A handle for NPC `id` (it is not created here). Made by the client: get one from `bridge.createNpc`,
   * `bridge.restoreNpc`, or `bridge.npc(id)` for an existing NPC (`Connection` is the client's own link to
   * the bridge, not part of the package's API).
   */
  constructor(
    connection: Connection,
    id: string,
    created: { tools?: readonly string[]; warnings?: readonly string[]; model?: Model } = {},
  ) {
    this.#c = connection;
    this.id = id;
    this.tools = created.tools ?? [];
    this.warnings = created.warnings ?? [];
    this.#model = created.model;
    this.#cancel = { method: "npc/cancel", params: { npc: id } };
  }

  /** One dialogue turn: the NPC may call tools, then replies with an emotion, a line and player options. */
  talk<C = JsonValue>(
    line: string,
    options: TalkOptions<C> & { context?: JsonInput<NoInfer<C>> } = {},
  ): Promise<NpcReply> {
    // Checked before sending: a bad callback would fail after the turn, which would count all the same.
    const problem = callbackProblem(options, {
      names: ["onLine", "onEmotion", "onEvent"],
      where: "npc.talk",
    });
    if (problem !== null) return Promise.reject(problem);
    const { onLine, onEmotion, onEvent } = options;
    const watched = onLine !== undefined || onEmotion !== undefined || onEvent !== undefined;
    const stream = options.stream ?? watched;
    let shown = "";
    // Without undefined members: made here for this call, flat ones are handed over as they are.
    const { context, toolChoice } = options;
    const params: ParamsOf<"npc/talk"> = { npc: this.id, line };
    if (context !== undefined) params.context = context as string | JsonValue;
    params.stream = stream;
    if (toolChoice !== undefined) params.toolChoice = toolChoice;
    const flat = isFlatValue(line) && isFlatValue(stream) &&
      (context === undefined || isFlatValue(context)) &&
      (toolChoice === undefined || isFlatValue(toolChoice));
    // Flat params hold nothing JSON would change: only a context (or tool choice) object is walked.
    const lossy = flat ? null : paramsLossProblem(params, "npc.talk()");
    if (lossy !== null) return Promise.reject(lossy);
    return this.#c.turn<NpcReply>(
      "npc/talk",
      params,
      this.#cancel,
      options,
      watched
        ? (method, params) => {
          const event = params.event;
          if (method !== "npc/event" || !isEvent(event)) return;
          onEvent?.(event);
          if (event.type === "emotion") onEmotion?.(event.emotion);
          else if (event.type === "lineDelta") {
            shown += event.delta;
            onLine?.(event.delta, shown, false);
          } else if (event.type === "lineReset") {
            shown = event.line;
            onLine?.(event.line, shown, true);
          }
        }
        : undefined,
      flat,
    );
  }

  /** One dialogue turn whose events are yielded as they arrive; `.result` is the reply. */
  talkStream<C = JsonValue>(
    line: string,
    options: Omit<TalkOptions<C>, "stream"> & { context?: JsonInput<NoInfer<C>> } = {},
  ): TurnStream<NpcEvent, NpcReply> {
    return new TurnStream((push) =>
      this.talk<C>(line, {
        ...options,
        stream: true,
        onEvent: (event) => {
          options.onEvent?.(event);
          push(event);
        },
      })
    );
  }

  /**
   * A short ambient line (no history, memory or tools; runs even while a turn is in progress). `situation`
   * is text or facts as JSON, an interface's included (checked by {@link JsonInput}; `undefined` sends
   * none). A `NaN`, `Infinity`, `Map` or `Set` in `situation` is a TypeError (JSON would send `null` or `{}`).
   *
   * @example
   * ```ts
   * import { Bridge } from "@open-apple-models/bridge";
   * await using bridge = await Bridge.open();
   * const gorm = await bridge.createNpc({ name: "Gorm" }, { model: { type: "scripted", steps: [{ text: "Rain again." }] } });
   * await gorm.bark({ weather: "rain" }); // "Rain again."
   * ```
   */
  bark(): Promise<string>;
  /**
   * A short ambient line about `situation`: text or facts as JSON, an interface's included (checked by
   * {@link JsonInput}; `undefined` sends none). A `NaN`, `Infinity`, `Map` or `Set` in it is a TypeError.
   * `wait` gives up on it: the protocol has no cancel for a bark, so when `signal` aborts (`-32009
   * cancelled`) or `timeoutMs` passes (`-32024 timeout`) the promise rejects at once, and the bridge
   * finishes the bark and its answer is ignored ({@link WaitOptions}): a game that moved on shows none.
   *
   * @example
   * ```ts
   * import { Bridge, BridgeError } from "@open-apple-models/bridge";
   * await using bridge = await Bridge.open();
   * const slow = { type: "scripted" as const, steps: [{ text: "Rain again.", delayMs: 50 }] };
   * const gorm = await bridge.createNpc({ name: "Gorm" }, { model: slow });
   * const line = await gorm.bark("The player walks past.", { timeoutMs: 5 })
   *   .catch((e) => e instanceof BridgeError && e.dataCode === "timeout" ? null : Promise.reject(e));
   * line; // null: the player has walked on
   * ```
   */
  bark<S = JsonValue>(
    situation: S & (S extends undefined ? S : JsonInput<S>),
    wait?: WaitOptions,
  ): Promise<string>;
  async bark(situation?: unknown, wait: WaitOptions = {}): Promise<string> {
    const params = { npc: this.id, situation: situation as string | JsonValue | undefined };
    throwIfLossy(params, "npc.bark()");
    const { signal, timeoutMs } = wait;
    const options = signal === undefined && timeoutMs === undefined ? undefined : { signal, timeoutMs };
    return (await this.#c.request("npc/bark", params, options)).line;
  }

  /**
   * The save state; with `settle` (default) it waits for earlier requests and runs a compaction that is due
   * first (so the save holds the summary and the recent turns).
   */
  async state(options: { settle?: boolean } = {}): Promise<NpcState> {
    return (await this.#c.request("npc/state", { npc: this.id, settle: options.settle })).state;
  }

  /**
   * Replaces this NPC with a save (`npc/delete`, then `npc/restore` under this id). The model is not
   * saved: it defaults to the one this handle was created with. When the bridge refuses the save (say a
   * field edited by hand), the promise rejects with its error and the NPC is put back as it was before the
   * call (its completed turns, memory, tools and world; a turn that was running is cancelled). A `NaN`,
   * `Infinity`, `Map` or `Set` in the save is a TypeError naming its path, before anything is sent.
   *
   * A turn running when it is called rejects with `-32009 cancelled` (or gives its reply if it had already
   * ended), and from this call on its `onLine`, `onEmotion` and `onEvent` are not called again, as with
   * {@link Npc.cancel}: the old NPC's words are not shown over the loaded one.
   *
   * @example
   * ```ts
   * import { Bridge } from "@open-apple-models/bridge";
   * await using bridge = await Bridge.open();
   * const bram = await bridge.createNpc({ name: "Bram" }, { model: "scripted" });
   * const save = await bram.state();
   * let shown = "";
   * const talk = bram.talk("Tell me.", { onLine: (_delta, line) => shown = line }).catch(() => null);
   * await bram.restore(save); // the player loads the save: the story stops where it was
   * await talk; // null, or the reply when it had ended already
   * ```
   */
  async restore(state: NpcState, options: Omit<RestoreOptions, "npc"> = {}): Promise<Npc> {
    // Checked before the delete: a world or tool the client refuses must not cost the NPC.
    const params = restoreParams(
      this.#c,
      { model: this.#model, ...options, npc: this.id, state },
      "npc.restore()",
    );
    // Pipelined in order: the NPC as it is now (answered at once), the delete, the restore.
    const current = this.#c.request("npc/state", { npc: this.id, settle: false });
    current.catch(() => {});
    // The running turn is cancelled with the delete: its callbacks get nothing more, its error says why.
    this.#c.endWork("npc/delete", {
      params: { npc: this.id },
      why: "npc.restore() replaced the NPC (it deletes it first).",
    }).catch(() => {});
    try {
      return await sendRestore(this.#c, params);
    } catch (error) {
      // A refused save must not cost the NPC: put back the one that was deleted for it.
      const previous = await current.then((result) => result.state, () => null);
      if (previous !== null) {
        await this.#c.request("npc/restore", { state: previous, npc: this.id, model: this.#model })
          .catch(() => {});
      }
      throw error;
    }
  }

  /**
   * Merge patches for the persona, options and memory; `tools` replaces the client tools. Returns warnings.
   * A `NaN`, `Infinity`, `Map` or `Set` in them is a TypeError naming its path (JSON would send `null` or
   * `{}`), and nothing is sent.
   */
  async update(
    changes: {
      persona?: Partial<Persona>;
      options?: NpcOptions;
      memory?: NpcMemory;
      tools?: readonly ToolRef[];
    },
  ): Promise<string[]> {
    const params = { npc: this.id, ...changes, tools: this.#c.definitions(changes.tools) };
    throwIfLossy(params, "npc.update()");
    return (await this.#c.request("npc/update", params)).warnings;
  }

  /** Clears the conversation (and the memory with `clearMemory`). */
  async reset(options: { clearMemory?: boolean } = {}): Promise<void> {
    await this.#c.request("npc/reset", { npc: this.id, clearMemory: options.clearMemory });
  }

  /**
   * Cancels the running turn (its `talk` rejects with `-32009 cancelled`) and every queued request; returns
   * how many were cancelled. From this call on, the turn's `onLine`, `onEmotion` and `onEvent` are not called
   * again, also for the rest of a line already on its way (a turn that had already ended still gives its
   * reply), as when its `signal` aborts.
   *
   * @example
   * ```ts
   * import { Bridge } from "@open-apple-models/bridge";
   * await using bridge = await Bridge.open();
   * const story = { type: "scripted" as const, steps: [{ text: "[calm] A long story…", delayMs: 1000 }] };
   * const bram = await bridge.createNpc({ name: "Bram" }, { model: story });
   * let shown = "";
   * const talk = bram.talk("Tell me.", { onLine: (_delta, line) => shown = line }).catch(() => null);
   * await bram.cancel(); // the player walked away: nothing more is shown
   * await talk; // null: it was cancelled
   * shown; // "": the line never started
   * ```
   */
  async cancel(): Promise<number> {
    const params = { npc: this.id };
    return (await this.#c.endWork("npc/cancel", { params, why: null })).cancelled;
  }

  /**
   * Cancels its work and frees it. A running turn's `talk` rejects with `-32009 cancelled`, whose message
   * says it was cancelled when `npc.delete()` deleted the NPC (or gives its reply if it had already ended),
   * and from this call on its `onLine`, `onEmotion` and `onEvent` are not called again, as with
   * {@link Npc.cancel}.
   *
   * @example
   * ```ts
   * import { Bridge } from "@open-apple-models/bridge";
   * await using bridge = await Bridge.open();
   * const story = { type: "scripted" as const, steps: [{ text: "[calm] A long story…", delayMs: 1000 }] };
   * const bram = await bridge.createNpc({ name: "Bram" }, { model: story });
   * let shown = "";
   * const talk = bram.talk("Tell me.", { onLine: (_delta, line) => shown = line }).catch(() => null);
   * await bram.delete(); // Bram dies mid-sentence: nothing more is shown
   * await talk; // null: it was cancelled
   * shown; // "": the line never started
   * ```
   */
  async delete(): Promise<void> {
    await this.#c.endWork("npc/delete", { params: { npc: this.id }, why: "npc.delete() deleted the NPC." });
  }
}

/** `npc/restore` from a save made with {@link Npc.state}. */
export async function restoreNpc(
  connection: Connection,
  request: RestoreOptions & { state: NpcState },
): Promise<Npc> {
  return await sendRestore(connection, restoreParams(connection, request, "bridge.restoreNpc()"));
}

/**
 * The `npc/restore` params of a request (throws a TypeError for a world or tool reference it cannot use, or
 * for what JSON would change in the save or options, naming `where`).
 */
function restoreParams(
  connection: Connection,
  request: RestoreOptions & { state: NpcState },
  where: string,
): ParamsOf<"npc/restore"> {
  const { state, ...options } = request;
  const params = {
    state,
    npc: options.npc,
    tools: connection.definitions(options.tools),
    options: options.options,
    world: worldId(options.world),
    model: options.model,
  };
  throwIfLossy(params, where);
  return params;
}

/** Sends `npc/restore`; the handle keeps the model for its own restores. */
async function sendRestore(connection: Connection, params: ParamsOf<"npc/restore">): Promise<Npc> {
  const result = await connection.request("npc/restore", params);
  connection.tools.noteRestored(result.npc, params.tools === undefined);
  const { tools, warnings } = result;
  return new Npc(connection, result.npc, { tools, warnings, model: params.model });
}
