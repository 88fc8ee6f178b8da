/**
 * The `npc/*` methods (§6 NPCs): thin adapters from params to {@link Npc}, with per-NPC ordering.
 * @module
 */
import { BridgeError } from "../../protocol/errors.ts";
import { compactJson, isJsonObject, type JsonObject, type JsonValue } from "../../protocol/json.ts";
import { Params, showValue } from "../../protocol/params.ts";
import { type ConversationEntry, isResponseEntry } from "../../protocol/transcript.ts";
import { importTranscript } from "../../agent/transcript_codec.ts";
import type { AgentTool, ToolChoice } from "../../agent/types.ts";
import { IdGenerator } from "../../util/ids.ts";
import {
  checkObjectId,
  existsError,
  limitReachedError,
  notFoundError,
  queueFullError,
} from "../../util/object_ids.ts";
import { NPC_KIND, npcNotFound, WORLD_KIND } from "../game_kinds.ts";
import { type Operation, Pending } from "../../util/work_queue.ts";
import type { LanguageModel, ModelAvailability } from "../../models/language_model.ts";
import { availabilityOf, unavailableWarning } from "../../models/availability.ts";
import type { MethodRegistry } from "../../engine/extension.ts";
import type { HandlerContext } from "../../engine/context.ts";
import {
  parseToolChoice,
  parseToolDefinitions,
  placeToolWarnings,
  toolCountWarning,
  toolTimeoutMsOf,
} from "../../agent/tool_definitions.ts";
import type { GameContext } from "../game_context.ts";
import { mergePatch } from "./merge_patch.ts";
import { jsonTextHint } from "../world/json_text.ts";
import { Npc, type NpcInit, type NpcWorld } from "./npc.ts";
import { composeTools, scriptToolWarnings } from "./npc_tools.ts";
import { emptyMemory, memoryJson, parseMemory } from "./npc_memory.ts";
import {
  type NpcOptions,
  optionsJson,
  parseNpcOptions,
  WORLD_PATH_KEYS,
  worldPathWarnings,
} from "./npc_options.ts";
import { runBark, runTalk, type TalkHost } from "./npc_turn.ts";
import { parsePersona, personaJson } from "./persona.ts";
import { modelSpecWarnings } from "../../models/registry.ts";

/** Most NPCs on one bridge. */
export const MAX_NPCS = 128;
/** Notification method of NPC turn events. */
export const NPC_EVENT = "npc/event";

const CREATE_KEYS = ["npc", "persona", "tools", "world", "memory", "options", "model"] as const;
const RESTORE_KEYS = ["state", "npc", "tools", "options", "world", "model"] as const;
/** Members of an `npc/state` save (the `state` of its result). */
const STATE_KEYS = [
  "version",
  "persona",
  "memory",
  "transcript",
  "npc",
  "options",
  "tools",
  "world",
] as const;
/** Members of a whole `npc/state` result passed as `state`. */
const STATE_RESULT_KEYS = ["npc", "state"] as const;
const TALK_KEYS = ["npc", "line", "context", "stream", "toolChoice"] as const;
const UPDATE_KEYS = ["npc", "persona", "options", "memory", "tools"] as const;
const BARK_KEYS = ["npc", "situation"] as const;

/** Where the pieces of a new NPC come from (`npc/create` params or a save). */
interface NpcSource {
  id: string | undefined;
  persona: JsonValue | undefined;
  personaPath: string;
  memory: JsonValue | undefined;
  memoryPath: string;
  options: JsonValue | undefined;
  optionsPath: string;
  tools: JsonValue | undefined;
  toolsPath: string;
  world: string | null;
  /** A saved world that no longer exists is dropped with a warning instead of failing. */
  worldFromSave: boolean;
  entries: ConversationEntry[];
  model: JsonValue | undefined;
  /** What the error of an id in use says to do (a save loaded twice can be restored anyway). */
  existsHint?: string;
}

/** The hint of `npc/restore` under an id in use. */
const RESTORE_EXISTS_HINT =
  "delete it first (npc/delete) to replace it with the save, or pass another 'npc' to restore a copy";

function objectAt(value: JsonValue | undefined, path: string): JsonObject | undefined {
  if (value === undefined || value === null) return undefined;
  if (!isJsonObject(value)) {
    throw BridgeError.invalidParams(`Parameter '${path}' must be an object; got ${showValue(value)}.`);
  }
  return value;
}

/** A warning when world options are set for an NPC without a world (they do nothing then), else none. */
function worldOptionsWarning(options: NpcOptions, path: string): string[] {
  const set = (["worldWritable", "worldContextPaths"] as const).filter((k) => options[k].length > 0);
  if (set.length === 0) return [];
  const named = set.map((k) => `'${path}.${k}'`).join(" and ");
  return [
    `${named} ${
      set.length === 1 ? "has" : "have"
    } no effect without 'world'. Pass 'world' (a world/create id) ` +
    "to give the NPC one.",
  ];
}

/** The parts of a new NPC its source gives (each with its warnings), checked in this order. */
type NpcParts = Pick<NpcInit, "persona" | "options" | "memory" | "clientTools">;

/**
 * Parses the persona, options, memory and tools of a source; their warnings go to `to.warnings` (the tools'
 * worded for no model known: `toolWarningsFor` words them for the NPC's model, in their place).
 */
function parseParts(
  source: NpcSource,
  to: { warnings: string[]; toolTimeoutSeconds: number },
): { parts: NpcParts; toolWarningsFor: (model: string) => void } {
  const { warnings } = to;
  const persona = parsePersona(source.persona, source.personaPath);
  warnings.push(...persona.warnings);
  const options = parseNpcOptions(objectAt(source.options, source.optionsPath), {
    path: source.optionsPath,
    defaultTimeoutMs: toolTimeoutMsOf(to.toolTimeoutSeconds),
  });
  warnings.push(...options.warnings);
  const memory = parseMemory(objectAt(source.memory, source.memoryPath), source.memoryPath);
  warnings.push(...memory.warnings);
  const tools = parseToolDefinitions(source.tools, {
    path: source.toolsPath,
    defaultTimeoutMs: options.value.toolTimeoutMs,
  });
  const toolWarningsFor = placeToolWarnings(warnings, tools);
  return {
    parts: { persona: persona.value, options: options.value, memory: memory.value, clientTools: tools.tools },
    toolWarningsFor,
  };
}

/** Checks the whole tool set the model would see (names unique, the options' tools exist); warns past five. */
function checkToolSet(
  parts: NpcParts,
  context: { world: NpcWorld | null; warnings: string[]; optionsPath: string; toolsPath: string },
): void {
  const toolNames = composeTools(parts.clientTools, {
    world: context.world?.state ?? null,
    options: parts.options,
    optionsPath: context.optionsPath,
    toolsPath: context.toolsPath,
    host: {
      memory: () => parts.memory,
      stage: () => null,
    },
  }).map((t) => t.name);
  const countWarning = toolCountWarning(toolNames.length);
  if (countWarning) context.warnings.push(countWarning);
}

/**
 * A warning when the prompt every turn of `npc` needs (instructions, tools, memory: {@link Npc.promptEstimate})
 * is estimated larger than its model's whole context, else null. `memoryPath` names the memory as sent.
 */
function contextWarning(npc: Npc, memoryPath: string): string | null {
  const size = npc.agent.model.contextSize;
  const estimate = npc.promptEstimate();
  if (estimate.tokens <= size) return null;
  return `The NPC's prompt takes about ${estimate.tokens} tokens (estimated; ${estimate.memory} of them ` +
    `'${memoryPath}'), more than the model's ${size}-token context: its turns will not fit. ` +
    (estimate.memory * 2 >= estimate.tokens
      ? "Keep fewer or shorter facts."
      : "Shorten the persona, the tools or the memory.");
}

/**
 * A warning when the memory holds more facts than `options.maxFacts`, else null: they are trimmed only when a
 * turn changes the memory, so until then the model sees them all. `paths` name the memory and options as sent.
 */
function factsOverLimitWarning(
  npc: { memory: { facts: string[] }; options: { maxFacts: number } },
  paths: { memory: string; options: string },
): string | null {
  const count = npc.memory.facts.length;
  const max = npc.options.maxFacts;
  if (count <= max) return null;
  const dropped = count - max;
  return `'${paths.memory}' holds ${count} facts, more than '${paths.options}.maxFacts' (${max}): the model ` +
    `sees all of them until a memory tool next changes the memory in a turn, which drops the oldest ${dropped}. ` +
    "Send the facts to keep in npc/update 'memory.facts' to drop the others now.";
}

/** The conversation up to its last answer (drops a trailing unanswered prompt or tool round). */
function completeTurns(entries: ConversationEntry[]): ConversationEntry[] {
  for (let i = entries.length - 1; i >= 0; i--) {
    if (isResponseEntry(entries[i])) return entries.slice(0, i + 1);
  }
  return [];
}

/** Text of a `context`/`situation` param: strings as they are, other JSON compact. */
function situationParam(p: Params, key: string): string | null {
  const value = p.get(key);
  if (value === undefined) return null;
  return typeof value === "string" ? value : compactJson(value);
}

/**
 * The host of an `npc/talk` turn: client tools through {@link HandlerContext.drive} (`tool/call` params
 * `{npc, requestId, call}`), events as `npc/event` notifications `{npc, requestId, event}`.
 */
function talkHost(r: HandlerContext, npc: string): TalkHost {
  return {
    drive: (run) => r.drive(run, { stream: false, context: { npc }, eventMethod: NPC_EVENT }),
    // Each event is made for its notification (and shares nothing with the turn while r.handsOver).
    onNpcEvent: (event) => r.notify(NPC_EVENT, r.handOver({ npc, requestId: r.requestId, event })),
    handsOver: r.handsOver,
    handOver: (value) => r.handOver(value),
  };
}

/**
 * The `npc/*` method set of the game extension.
 *
 * @example
 * ```ts
 * import { BridgeEngine } from "../../composition.ts";
 * const engine = new BridgeEngine();
 * await engine.call("npc/create", { npc: "gorm", persona: { name: "Gorm" }, model: "scripted" });
 * ```
 */
export class NpcMethods {
  readonly #npcs = new Map<string, Npc>();
  /**
   * NPCs whose create or restore waits for the system model's availability: their queued work (and barks)
   * start after that response, so none of their output can come before it.
   */
  readonly #opening = new Map<Npc, Promise<void>>();
  readonly #ids = new IdGenerator("npc");
  #game!: GameContext;

  /** Number of NPCs. */
  get size(): number {
    return this.#npcs.size;
  }

  /** An NPC by id. */
  get(id: string): Npc | undefined {
    return this.#npcs.get(id);
  }

  /** Registers `npc/*` and lets decisions look up personas. */
  register(registry: MethodRegistry, game: GameContext): void {
    this.#game = game;
    game.npcPersona = (id) => this.#npcs.get(id)?.personaJson();
    game.npcNotFound = (id) => npcNotFound(id, this.#personaNames());
    registry.register("npc/create", (r) => this.#create(r));
    registry.register("npc/restore", (r) => this.#restore(r));
    registry.register("npc/talk", (r) => this.#talk(r));
    registry.register("npc/bark", (r) => this.#bark(r));
    registry.register("npc/state", (r) => this.#state(r));
    registry.register("npc/update", (r) => this.#update(r));
    registry.register("npc/reset", (r) => this.#reset(r));
    registry.register("npc/cancel", (r) => this.#cancel(r));
    registry.register("npc/delete", (r) => this.#delete(r));
    registry.register("npc/list", () => this.#list());
  }

  /** Cancels every NPC's work and removes all NPCs. */
  shutdown(): void {
    const npcs = [...this.#npcs.values()];
    this.#npcs.clear();
    for (const npc of npcs) {
      npc.dispose();
      this.#releaseWorld(npc);
    }
  }

  /**
   * The NPC named by the request; `keys`, the method's params, are named in the error of a missing one (the
   * methods with `warnings` check theirs with them).
   */
  #lookup(r: HandlerContext, keys?: readonly string[]): Npc {
    if (keys !== undefined) r.params.expectKeys(keys);
    const id = r.params.string("npc");
    const npc = this.#npcs.get(id);
    if (!npc) throw npcNotFound(id, this.#personaNames());
    return npc;
  }

  /** Each NPC's id and persona name. */
  *#personaNames(): Iterable<[string, string]> {
    for (const [id, npc] of this.#npcs) yield [id, npc.persona.name];
  }

  #schedule<T extends JsonValue>(
    r: HandlerContext,
    npc: Npc,
    work: (op: Operation) => Promise<T>,
  ): Promise<T> {
    const limit = r.settings.maxQueuedOperations;
    if (npc.queue.pending >= limit) throw queueFullError(NPC_KIND, { id: npc.id, limit });
    const opening = this.#opening.get(npc);
    return npc.queue.schedule(opening === undefined ? work : (op) => opening.then(() => work(op))).promise;
  }

  #releaseWorld(npc: Npc): void {
    if (!npc.world) return;
    const entry = this.#game.worlds.get(npc.world.id);
    if (entry && entry.world === npc.world.state) entry.npcCount = Math.max(0, entry.npcCount - 1);
  }

  /**
   * Validates a source and adds the NPC. Returns the create/restore result (maybe after an availability check).
   * The order of the checks is the wire contract's (the first error wins): the id, the persona, the options,
   * the memory, the tools, the world, the model, the tool set, an id in use, the limit.
   */
  #build(r: HandlerContext, source: NpcSource, warnings: string[]): JsonValue | Pending<JsonValue> {
    if (source.id !== undefined) checkObjectId(source.id, "npc");
    const { parts, toolWarningsFor } = parseParts(source, {
      warnings,
      toolTimeoutSeconds: r.settings.toolTimeoutSeconds,
    });
    const world = this.#worldOf(source, warnings);
    if (world === null && source.world === null) {
      warnings.push(...worldOptionsWarning(parts.options, source.optionsPath));
    }
    if (world !== null) {
      warnings.push(
        ...worldPathWarnings(parts.options, { world: world.state, id: world.id, path: source.optionsPath }),
      );
    }
    const spec = r.parseModel(source.model);
    const model = r.createModel(spec);
    toolWarningsFor(model.kind);
    // Validate the tool set before the id and limit checks (a failed create must not use up an id).
    checkToolSet(parts, { world, warnings, optionsPath: source.optionsPath, toolsPath: source.toolsPath });
    warnings.push(...modelSpecWarnings(spec));
    const id = this.#newId(source.id, source.existsHint);
    const npc = this.#add({ ...parts, id, world, model, entries: source.entries });
    if ("script" in spec) {
      warnings.push(
        ...scriptToolWarnings(spec.script, { toolNames: npc.toolNames, optionsPath: source.optionsPath }),
      );
    }
    // Read when answering: the system model's context size is known once its availability is.
    const overLimit = factsOverLimitWarning(parts, {
      memory: source.memoryPath,
      options: source.optionsPath,
    });
    if (overLimit !== null) warnings.push(overLimit);
    const result = () => {
      const tooBig = contextWarning(npc, source.memoryPath);
      if (tooBig !== null) warnings.push(tooBig);
      return { npc: id, tools: npc.toolNames, warnings };
    };
    if (spec.type !== "system") return result();
    return this.#afterAvailability(npc, model, (a) => {
      const warning = unavailableWarning(a, model);
      if (warning !== null) warnings.push(warning);
      return result();
    });
  }

  /** The world the source names: a missing one is not found (-32052), or a warning for a saved one. */
  #worldOf(source: NpcSource, warnings: string[]): NpcWorld | null {
    if (source.world === null) return null;
    const entry = this.#game.worlds.get(source.world);
    if (entry) return { id: entry.id, state: entry.world };
    if (!source.worldFromSave) throw notFoundError(WORLD_KIND, source.world);
    warnings.push(
      `The saved world '${source.world}' does not exist; the NPC was restored without a world. ` +
        `Pass 'world' to attach one.`,
    );
    return null;
  }

  /** The id of a new NPC: the one asked for unless in use, else a generated one; none past the limit. */
  #newId(asked: string | undefined, existsHint?: string): string {
    if (asked !== undefined && this.#npcs.has(asked)) {
      throw existsError({ kind: NPC_KIND, id: asked, hint: existsHint });
    }
    if (this.#npcs.size >= MAX_NPCS) throw limitReachedError(MAX_NPCS, "NPCs");
    return asked ?? this.#ids.next((x) => this.#npcs.has(x));
  }

  /** Makes the NPC and adds it (its world counts it). */
  #add(init: NpcInit): Npc {
    const npc = new Npc(init);
    this.#npcs.set(init.id, npc);
    if (init.world) {
      const entry = this.#game.worlds.get(init.world.id);
      if (entry) entry.npcCount++;
    }
    return npc;
  }

  /**
   * The answer `answer` makes of the system model's availability (`model`, the NPC's): at once when it is known, else once the
   * check is done, and the NPC's work waits for that answer.
   */
  #afterAvailability(
    npc: Npc,
    model: LanguageModel,
    answer: (a: ModelAvailability) => JsonValue,
  ): JsonValue | Pending<JsonValue> {
    const availability = availabilityOf(model);
    if (!(availability instanceof Promise)) return answer(availability);
    const pending = new Pending<JsonValue>();
    let opened!: () => void;
    this.#opening.set(npc, new Promise<void>((resolve) => opened = resolve));
    availability.then((a) => {
      pending.resolve(answer(a)); // the response is written here, synchronously
      this.#opening.delete(npc);
      opened();
    });
    return pending;
  }

  #create(r: HandlerContext): JsonValue | Pending<JsonValue> {
    const p = r.params;
    const warnings = p.unknownKeys(CREATE_KEYS);
    // Absent, it is most often sent under another name (`personna`): the error names it.
    if (p.get("persona") === undefined) throw p.missingParameter("persona");
    return this.#build(r, {
      id: p.optionalString("npc"),
      persona: p.get("persona"),
      personaPath: "persona",
      memory: p.get("memory"),
      memoryPath: "memory",
      options: p.get("options"),
      optionsPath: "options",
      tools: p.get("tools"),
      toolsPath: "tools",
      world: p.optionalString("world") ?? null,
      worldFromSave: false,
      entries: [],
      model: p.get("model"),
    }, warnings);
  }

  #restore(r: HandlerContext): JsonValue | Pending<JsonValue> {
    const p = r.params;
    const warnings = p.unknownKeys(RESTORE_KEYS);
    let state = withJsonTextHint(() => p.optionalObject("state"), p.get("state"));
    if (state === undefined) throw p.missingParameter("state");
    let path = "state";
    if (!Object.hasOwn(state, "persona") && isJsonObject(state.state)) {
      warnings.push(...new Params(state, "state.").unknownKeys(STATE_RESULT_KEYS));
      state = state.state;
      path = "state.state";
    }
    // A member the save does not have is most often a hand edit's typo ('transcipt'): what it held is lost.
    warnings.push(...new Params(state, `${path}.`).unknownKeys(STATE_KEYS));
    const saved = (key: string): JsonValue | undefined =>
      Object.hasOwn(state, key) && state[key] !== null ? state[key] : undefined;
    const version = saved("version");
    if (version !== undefined && version !== 1) {
      // A later save format is a newer bridge's: say so, since nothing in this save can be fixed by hand.
      throw BridgeError.invalidParams(
        typeof version === "number" && Number.isInteger(version) && version > 1
          ? `'${path}.version' is ${version}: the save was made by a newer bridge, and this one reads saves of ` +
            `version 1. Restore it with the bridge that made it, or a newer one than this.`
          : `'${path}.version' must be 1, as npc/state writes it; got ${showValue(version)}.`,
      );
    }
    const transcript = saved("transcript");
    const entries = transcript === undefined
      ? []
      : completeTurns(importTranscript(transcript, `${path}.transcript`).entries);
    let id: string | undefined;
    if (p.has("npc")) id = p.optionalString("npc");
    else {
      const savedId = saved("npc");
      if (savedId !== undefined && typeof savedId !== "string") {
        throw BridgeError.invalidParams(
          `Parameter '${path}.npc' must be a string; got ${showValue(savedId)}.`,
        );
      }
      id = savedId;
    }
    let world: string | null;
    if (p.has("world")) world = p.optionalString("world") ?? null;
    else {
      const savedWorld = saved("world");
      if (savedWorld !== undefined && typeof savedWorld !== "string") {
        throw BridgeError.invalidParams(
          `Parameter '${path}.world' must be a string; got ${showValue(savedWorld)}.`,
        );
      }
      world = savedWorld ?? null;
    }
    return this.#build(r, {
      id,
      persona: saved("persona"),
      personaPath: `${path}.persona`,
      memory: saved("memory"),
      memoryPath: `${path}.memory`,
      options: p.has("options") ? p.get("options") : saved("options"),
      optionsPath: p.has("options") ? "options" : `${path}.options`,
      tools: p.has("tools") ? p.get("tools") : saved("tools"),
      toolsPath: p.has("tools") ? "tools" : `${path}.tools`,
      world,
      worldFromSave: !p.has("world"),
      entries,
      model: p.get("model"),
      existsHint: RESTORE_EXISTS_HINT,
    }, warnings);
  }

  #talk(r: HandlerContext): Promise<JsonValue> {
    const p = r.params;
    const warnings = p.unknownKeys(TALK_KEYS);
    const npc = this.#lookup(r);
    const line = p.string("line");
    const situation = situationParam(p, "context");
    const stream = p.optionalBool("stream") ?? false;
    const choiceValue = p.get("toolChoice");
    const toolChoice: ToolChoice | undefined = choiceValue === undefined
      ? undefined
      : parseToolChoice(choiceValue, "toolChoice");
    return this.#schedule(
      r,
      npc,
      (op) =>
        runTalk(npc, {
          host: talkHost(r, npc.id),
          input: { line, situation, stream, warnings, ...(toolChoice ? { toolChoice } : {}) },
          op: op,
        }),
    );
  }

  #bark(r: HandlerContext): Promise<JsonValue> {
    const p = r.params;
    const warnings = p.unknownKeys(BARK_KEYS);
    const npc = this.#lookup(r);
    const situation = situationParam(p, "situation");
    const signal = AbortSignal.any([r.signal, npc.lifetimeSignal]);
    // Start on the next macrotask (after the create's answer, if that still waits), so a turn that arrived
    // earlier reaches the model first.
    return (this.#opening.get(npc) ?? Promise.resolve())
      .then(() => new Promise((resolve) => setTimeout(resolve, 0)))
      .then(() => runBark(npc, { situation, signal }))
      .then((result) => warnings.length > 0 ? { ...result, warnings } : result);
  }

  #state(r: HandlerContext): JsonValue | Promise<JsonValue> {
    const npc = this.#lookup(r, ["npc", "settle"]);
    const settle = r.params.optionalBool("settle") ?? true;
    if (!settle) return { npc: npc.id, state: npc.stateJson() };
    return this.#schedule(r, npc, async (op) => {
      await npc.settle(op);
      await npc.prepareSave(op);
      return { npc: npc.id, state: npc.stateJson() };
    });
  }

  #update(r: HandlerContext): Promise<JsonValue> {
    const p = r.params;
    const warnings = p.unknownKeys(UPDATE_KEYS);
    const npc = this.#lookup(r);
    const personaPatch = p.optionalObject("persona");
    const optionsPatch = p.optionalObject("options");
    const memoryPatch = p.optionalObject("memory");
    const toolsValue: JsonValue | undefined = p.has("tools") ? p.get("tools") ?? [] : undefined;
    return this.#schedule(r, npc, async (op) => {
      await npc.settle(op);
      const out = [...warnings];
      const persona = personaPatch
        ? parsePersona(mergePatch(personaJson(npc.persona), personaPatch), "persona")
        : { value: npc.persona, warnings: [] };
      out.push(...persona.warnings);
      const options = optionsPatch
        ? parseNpcOptions(mergePatch(optionsJson(npc.options), optionsPatch) as JsonObject, {
          path: "options",
          defaultTimeoutMs: toolTimeoutMsOf(r.settings.toolTimeoutSeconds),
        })
        : { value: npc.options, warnings: [] };
      out.push(...options.warnings);
      // The world paths this update sets (the others were warned about when they were set).
      const pathKeys = WORLD_PATH_KEYS.filter((k) =>
        optionsPatch?.[k] !== undefined && optionsPatch[k] !== null
      );
      if (npc.world && pathKeys.length > 0) {
        out.push(
          ...worldPathWarnings(options.value, {
            world: npc.world.state,
            id: npc.world.id,
            path: "options",
            keys: pathKeys,
          }),
        );
      }
      const memory = memoryPatch
        ? parseMemory(mergePatch(memoryJson(npc.memory), memoryPatch) as JsonObject, "memory")
        : { value: npc.memory, warnings: [] };
      out.push(...memory.warnings);
      let clientTools: AgentTool[] = npc.clientTools;
      if (toolsValue !== undefined) {
        const parsed = parseToolDefinitions(toolsValue, {
          path: "tools",
          defaultTimeoutMs: options.value.toolTimeoutMs,
        });
        clientTools = parsed.tools;
        out.push(...parsed.warningsFor(npc.agent.model.kind));
      } else if (options.value.toolTimeoutMs !== npc.options.toolTimeoutMs) {
        const definitions = npc.clientTools.map((t): JsonValue => t.definition ?? {});
        clientTools =
          parseToolDefinitions(definitions, { path: "tools", defaultTimeoutMs: options.value.toolTimeoutMs })
            .tools;
      }
      // Without 'tools' in this update, a clash is with the NPC's own client tools: the options name it.
      const tools = npc.composeTools(clientTools, options.value, toolsValue === undefined ? null : "tools");
      const countWarning = toolCountWarning(tools.length);
      if (countWarning) out.push(countWarning);
      op.commit();
      npc.apply(
        { persona: persona.value, options: options.value, memory: memory.value, clientTools },
        tools,
      );
      // Said when this update lowers maxFacts or sets the facts (not again on every later update).
      if (optionsPatch?.maxFacts !== undefined || memoryPatch?.facts !== undefined) {
        const overLimit = factsOverLimitWarning(npc, { memory: "memory", options: "options" });
        if (overLimit !== null) out.push(overLimit);
      }
      const tooBig = contextWarning(npc, "memory");
      if (tooBig !== null) out.push(tooBig);
      return { npc: npc.id, warnings: out };
    });
  }

  #reset(r: HandlerContext): Promise<JsonValue> {
    const npc = this.#lookup(r, ["npc", "clearMemory"]);
    const clearMemory = r.params.optionalBool("clearMemory") ?? false;
    return this.#schedule(r, npc, async (op) => {
      await npc.settle(op);
      op.commit();
      npc.agent.reset();
      if (clearMemory) npc.memory = emptyMemory();
      return { npc: npc.id };
    });
  }

  #cancel(r: HandlerContext): JsonValue {
    const npc = this.#lookup(r, ["npc"]);
    return { npc: npc.id, cancelled: npc.cancelAll() };
  }

  #delete(r: HandlerContext): JsonValue {
    const npc = this.#lookup(r, ["npc"]);
    this.#npcs.delete(npc.id);
    npc.dispose();
    this.#releaseWorld(npc);
    return { npc: npc.id, deleted: true };
  }

  #list(): JsonValue {
    const npcs: JsonValue[] = [];
    for (const npc of this.#npcs.values()) {
      npcs.push({
        npc: npc.id,
        name: npc.persona.name,
        role: npc.persona.role,
        world: npc.world?.id ?? null,
        model: npc.agent.model.kind,
        tools: npc.clientTools.map((t) => t.name),
        turnCount: npc.turnCount,
        relationship: npc.memory.relationship,
        busy: npc.busy,
        pendingOperations: npc.pendingOperations,
        createdAt: npc.createdAt,
      });
    }
    return { npcs };
  }
}

/** `read()`, whose BridgeError gets {@link jsonTextHint}'s advice when `value` is a JSON object's text. */
function withJsonTextHint<T>(read: () => T, value: JsonValue | undefined): T {
  try {
    return read();
  } catch (error) {
    const hint = jsonTextHint(value);
    if (hint === "" || !(error instanceof BridgeError)) throw error;
    throw BridgeError.invalidParams(error.message + hint);
  }
}
