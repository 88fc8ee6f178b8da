/**
 * One NPC on the bridge: persona, options, memory, client tools, an optional world, the conversation agent,
 * the per-NPC work queue and compaction (which the next queued request waits for).
 *
 * Prompts are built for the model's cache: the instructions depend on persona, options and tools only; the
 * state that changes reaches the model in the turn's prompt (`npc_context.ts`).
 *
 * Compaction costs a model call and, when turns leave the prompt, a prompt the cache no longer covers; so it
 * happens when it is needed, not as soon as `compactAfterTurns` is reached. Once that many turns (after any
 * summarized ones) are there, compaction is *due*. A due compaction runs when the prompt takes more than
 * {@link SUMMARIZE_AT_ROOM} of the context (in the background after a turn) or when a save needs it
 * ({@link Npc.prepareSave}: saves keep the summary and the recent turns). It asks the summary as the next message
 * of the conversation (the model's cache covers everything before it) and marks all but the
 * `keepRecentTurns` newest turns as summarized: saves and `turnCount` leave them out, but they stay in the
 * model's prompt until it takes more than {@link DROP_AT_ROOM} of the context; then they leave all at once
 * and the summary takes their place in the next prompt.
 * @module
 */
import { cloneJson, type JsonObject, type JsonValue } from "../../protocol/json.ts";
import type { ConversationEntry } from "../../protocol/transcript.ts";
import type { LanguageModel } from "../../models/language_model.ts";
import { Agent } from "../../agent/agent.ts";
import { compactionCut, summarizeAsContinuation } from "../../agent/compaction.ts";
import { exportTranscript } from "../../agent/transcript_codec.ts";
import type { AgentTool, ToolChoice, ToolPolicy } from "../../agent/types.ts";
import { BridgeError, toBridgeError } from "../../protocol/errors.ts";
import { compactJson } from "../../protocol/json.ts";
import { Operation, WorkQueue } from "../../util/work_queue.ts";
import { summarizeWorld, type WorldState } from "../world/mod.ts";
import {
  framePrompt,
  renderInstructions,
  secretSentence,
  secretVisibility,
  summaryRequest,
} from "./instructions.ts";
import { CHANGE_RELATIONSHIP_TOOL, REMEMBER_FACT_TOOL } from "./memory_tools.ts";
import { NpcContext, type NpcStateView } from "./npc_context.ts";
import { applyStage, memoryJson, MemoryStage, type NpcMemory } from "./npc_memory.ts";
import { type NpcOptions, optionsJson } from "./npc_options.ts";
import { type Persona, personaJson } from "./persona.ts";
import { replySchema, type ReplySettings } from "./reply_format.ts";
import type { ResponseSchema } from "../../models/language_model.ts";
import { composeTools } from "./npc_tools.ts";
import { utf8Length } from "../../util/text.ts";

/** The world an NPC uses. */
export interface NpcWorld {
  /** World id on the bridge. */
  id: string;
  /** The shared state (kept even when the world is deleted). */
  state: WorldState;
}

/** Everything an NPC is made of. */
export interface NpcInit {
  /** NPC id. */
  id: string;
  /** Who the NPC is. */
  persona: Persona;
  /** What it remembers. */
  memory: NpcMemory;
  /** Every option. */
  options: NpcOptions;
  /** Client tools, as parsed from their definitions. */
  clientTools: AgentTool[];
  /** The world, or null. */
  world: NpcWorld | null;
  /** The model of its turns, compaction and barks. */
  model: LanguageModel;
  /** Conversation to continue (a restored save). */
  entries?: ConversationEntry[];
}

/** A validated set of changes for {@link Npc.apply}. */
export interface NpcChanges {
  /** New persona. */
  persona: Persona;
  /** New options. */
  options: NpcOptions;
  /** New memory. */
  memory: NpcMemory;
  /** New client tools. */
  clientTools: AgentTool[];
}

/** Fallback lines used when `fallbackLines` has none. */
export const DEFAULT_FALLBACK_LINES = [
  "Let's talk about something else.",
  "I'd rather not speak of that.",
  "Hmm. Ask me something else.",
];

/** Version of the `npc/state` save format. */
export const STATE_VERSION = 1;

/**
 * Share of the context (after the room kept for the answer) that instructions, tools and history may take
 * (estimated at 3 bytes of UTF-8 per token: 3 characters of English, 1 of Japanese or Chinese) before a due compaction summarizes older turns, in the background
 * after a turn.
 */
export const SUMMARIZE_AT_ROOM = 0.5;
/** Share of the context past which the summarized turns leave the model's prompt (before the next turn). */
export const DROP_AT_ROOM = 0.6;
/** Least `maximumResponseTokens` of a compaction summary. */
export const SUMMARY_MIN_TOKENS = 256;

/**
 * An NPC.
 *
 * @example
 * ```ts
 * import { Npc } from "./npc.ts";
 * import { emptyMemory } from "./npc_memory.ts";
 * import { defaultOptions } from "./npc_options.ts";
 * import { parsePersona } from "./persona.ts";
 * import { ScriptedModel } from "../../models/scripted.ts";
 * const persona = parsePersona({ name: "Gorm", role: "the blacksmith" }, "persona").value;
 * const model = new ScriptedModel({ steps: [] });
 * const npc = new Npc({ id: "gorm", persona, memory: emptyMemory(), options: defaultOptions(120_000),
 *   clientTools: [], world: null, model });
 * npc.instructions(); // "You are Gorm, …"
 * ```
 */
export class Npc {
  /** NPC id. */
  readonly id: string;
  /** ISO 8601 creation time. */
  readonly createdAt: string = new Date().toISOString();
  /** Per-NPC order of talk, update, reset and settled state requests. */
  readonly queue: WorkQueue = new WorkQueue();
  /** The conversation. */
  readonly agent: Agent;
  /** The world, or null. */
  readonly world: NpcWorld | null;
  /** Who the NPC is. */
  persona: Persona;
  /** Every option. */
  options: NpcOptions;
  /** Committed memory. */
  memory: NpcMemory;
  /** Client tools (definitions as sent are in `definition`). */
  clientTools: AgentTool[];
  #stage: MemoryStage | null = null;
  #replySchema: ResponseSchema | null = null;
  #fallbackIndex = 0;
  #background: Promise<void> | null = null;
  #backgroundOp: Operation | null = null;
  /** What the model has been told about the state (see npc_context.ts). */
  readonly context: NpcContext = new NpcContext();
  /** The last entry a compaction summarized (still in the model's prompt until room is needed), or null. */
  #summarizedLast: ConversationEntry | null = null;
  readonly #lifetime = new AbortController();

  /** Builds an NPC; throws -32602 when its tools do not fit its options. */
  constructor(init: NpcInit) {
    this.id = init.id;
    this.persona = init.persona;
    this.options = init.options;
    this.memory = init.memory;
    this.clientTools = init.clientTools;
    this.world = init.world;
    const tools = this.composeTools(init.clientTools, init.options);
    this.agent = new Agent({
      model: init.model,
      tools,
      entries: init.entries ?? [],
      settings: { options: generationOptions(init.options) },
    });
  }

  /** Aborted when the NPC is deleted (ends barks). */
  get lifetimeSignal(): AbortSignal {
    return this.#lifetime.signal;
  }

  /**
   * Every tool the model sees for these client tools and options (validated; `toolsPath` as in
   * {@link composeTools}: null for the NPC's own client tools). A world tool whose options did
   * not change keeps the description the model has seen (the read tool's list of top-level keys is not
   * refreshed by an update of something else), so the tool list stays the same.
   */
  composeTools(
    clientTools: AgentTool[],
    options: NpcOptions,
    toolsPath: string | null = "tools",
  ): AgentTool[] {
    const tools = composeTools(clientTools, {
      world: this.world?.state ?? null,
      options,
      toolsPath,
      host: {
        memory: () => this.memory,
        stage: () => this.#stage,
      },
    });
    const current = this.agent?.tools;
    if (current === undefined || !sameWorldAccess(this.options, options)) return tools;
    return tools.map((tool) => {
      if (tool.execution !== "local") return tool;
      const before = current.find((t) => t.name === tool.name);
      return before === undefined || before.description === tool.description
        ? tool
        : { ...tool, description: before.description };
    });
  }

  /** Names of every tool the model sees. */
  get toolNames(): string[] {
    return this.agent.tools.map((t) => t.name);
  }

  /** Completed turns after the ones a compaction summarized (the turns a save keeps). */
  get turnCount(): number {
    return this.conversation().filter((e) => e.role === "user").length;
  }

  /** Entries at the start of the history that a compaction summarized (the model may still see them). */
  get summarizedEntries(): number {
    const last = this.#summarizedLast;
    return last === null ? 0 : this.agent.entries.indexOf(last) + 1;
  }

  /** The conversation after the summarized turns: what a save keeps and compaction counts. */
  conversation(): ConversationEntry[] {
    const summarized = this.summarizedEntries;
    return summarized === 0 ? this.agent.entries : this.agent.entries.slice(summarized);
  }

  /** True while a request is queued or running, or compaction runs. */
  get busy(): boolean {
    return this.queue.busy || this.#background !== null;
  }

  /** Queued and running requests plus a running compaction. */
  get pendingOperations(): number {
    return this.queue.pending + (this.#background !== null ? 1 : 0);
  }

  /**
   * The instructions (from persona, options and tools; never from memory, so they stay the same turn after
   * turn). Secrets appear here only when they are always in the prompt (`secretsUnlockAtRelationship: null`);
   * secrets unlocked by the relationship reach the model in the turn's prompt.
   */
  instructions(): string {
    const tools = this.agent.tools;
    const has = (name: string) => tools.some((t) => t.name === name);
    const memoryToolNames = [REMEMBER_FACT_TOOL, CHANGE_RELATIONSHIP_TOOL];
    return renderInstructions(this.persona, {
      maxSentences: this.persona.maxSentences,
      hasFactTools: tools.some((t) => !memoryToolNames.includes(t.name)),
      secrets: this.options.secretsUnlockAtRelationship === null ? "guarded" : "hidden",
      extraInstructions: this.options.extraInstructions,
      rememberFact: has(REMEMBER_FACT_TOOL),
      changeRelationship: has(CHANGE_RELATIONSHIP_TOOL),
      emotionTag: this.options.replyFormat === "text",
    });
  }

  /** What the model should know about the state now (see npc_context.ts). */
  stateView(): NpcStateView {
    const memory = this.memory;
    const unlocked = this.options.secretsUnlockAtRelationship !== null &&
      secretVisibility(memory.relationship, this.options.secretsUnlockAtRelationship) === "shareable";
    const paths = this.options.worldContextPaths;
    const world = this.world && paths.length > 0 ? summarizeWorld(this.world.state, paths) : "";
    const summary = memory.summary?.trim() ?? "";
    return {
      relationship: memory.relationship,
      showNeutral: this.agent.tools.some((t) => t.name === CHANGE_RELATIONSHIP_TOOL),
      facts: memory.facts,
      // While the summarized turns are still in the prompt, the model has them, not the summary.
      summary: summary === "" || this.summarizedEntries > 0 ? null : summary,
      secret: unlocked ? secretSentence(this.persona) : null,
      world: world === "" ? [] : world.split("\n"),
    };
  }

  /**
   * The tool policy of a turn: per-turn choice > grounding tool > the NPC's toolChoice; `none` without
   * tools. Throws -32011 for a per-turn tool the NPC lacks.
   */
  turnPolicy(override?: ToolChoice): ToolPolicy {
    const names = this.toolNames;
    let choice: ToolChoice;
    if (override !== undefined) {
      if (typeof override === "object" && !names.includes(override.tool)) {
        throw BridgeError.of(
          "invalid_request",
          `Tool '${override.tool}' is not available to ${this.persona.name}.`,
        );
      }
      choice = override;
    } else if (this.options.groundingTool !== null) choice = { tool: this.options.groundingTool };
    else choice = this.options.toolChoice;
    if (names.length === 0) choice = "none";
    return {
      choice,
      maxToolRounds: this.options.maxToolRounds,
      maxToolCalls: this.options.maxToolCalls,
      enabledTools: null,
      // Every request of an NPC whose turns are explicit shows respond_directly (the same tool list).
      showRespondDirectly: this.#usualChoice() === "explicit",
    };
  }

  /** The choice of the NPC's turns without a per-turn override. */
  #usualChoice(): ToolChoice {
    if (this.toolNames.length === 0) return "none";
    return this.options.groundingTool !== null
      ? { tool: this.options.groundingTool }
      : this.options.toolChoice;
  }

  /**
   * Brings the agent up to date before a turn: the instructions (the same text unless persona, options or
   * tools changed) and no context note (the state goes into the prompt). When the prompt takes more than
   * {@link DROP_AT_ROOM} of the context, a due compaction that has not run yet runs now, and the summarized
   * turns leave. Throws -32009 when `op` is cancelled meanwhile.
   */
  async prepareTurn(op: Operation): Promise<void> {
    this.agent.instructions = this.instructions();
    this.agent.contextNote = null;
    if (this.#roomUsed() <= DROP_AT_ROOM) return;
    if (this.summarizedEntries === 0 && this.compactionDue()) await this.#summarizeInQueue(op);
    const summarized = this.summarizedEntries;
    if (summarized === 0) return;
    this.agent.entries = this.agent.entries.slice(summarized);
    this.#summarizedLast = null;
  }

  /** Before a save: a due compaction runs (the save keeps the summary and the recent turns). */
  async prepareSave(op: Operation): Promise<void> {
    if (this.compactionDue()) await this.#summarizeInQueue(op);
  }

  /** The share of the context (after the answer's room) instructions, tools and history take, estimated. */
  #roomUsed(): number {
    const agent = this.agent;
    const budget = Math.max(1, agent.model.contextSize - agent.settings.reservedResponseTokens);
    const bytes = utf8Length(agent.instructions ?? "") + toolBytes(agent.tools) + agent.historyBytes();
    return bytes / 3 / budget;
  }

  /**
   * The tokens of the prompt every turn needs whatever the history (estimated like {@link #roomUsed}, at 3
   * bytes of UTF-8 a token): the instructions, the tools and the state a prompt carries in full (memory and
   * world context, as after a restore); `memory` is the memory block's share. Trimming and compaction shorten
   * the history only, so when this exceeds the model's context no turn fits.
   */
  promptEstimate(): { tokens: number; memory: number } {
    const state = new NpcContext().compose(this.stateView(), [], 0);
    const memoryBytes = utf8Length(
      framePrompt({ memory: state.memory, world: [], situation: null, line: "" }),
    );
    const stateBytes = utf8Length(
      framePrompt({ memory: state.memory, world: state.world, situation: null, line: "" }),
    );
    const bytes = utf8Length(this.instructions()) + toolBytes(this.agent.tools) + stateBytes;
    return { tokens: Math.ceil(bytes / 3), memory: Math.ceil(memoryBytes / 3) };
  }

  /** Settings of reply parsing and the reply schema. */
  replySettings(): ReplySettings {
    return {
      name: this.persona.name,
      emotions: this.options.emotions,
      defaultEmotion: this.persona.defaultEmotion,
      maxSentences: this.persona.maxSentences,
      playerOptionCount: this.options.playerOptionCount,
      canEndConversation: this.options.canEndConversation,
    };
  }

  /** The structured reply schema (cached until the next {@link apply}). */
  replySchema(): ResponseSchema {
    this.#replySchema ??= replySchema(this.replySettings());
    return this.#replySchema;
  }

  /** Starts a memory stage for a turn (memory tools write into it). */
  beginStage(): MemoryStage {
    this.#stage = new MemoryStage();
    return this.#stage;
  }

  /** Commits the running stage into the memory. */
  commitStage(): void {
    if (this.#stage && !this.#stage.empty) {
      this.memory = applyStage(this.memory, { stage: this.#stage, maxFacts: this.options.maxFacts });
    }
    this.#stage = null;
  }

  /** Drops the running stage. */
  discardStage(): void {
    this.#stage = null;
  }

  /** The next fallback line (rotating). */
  nextFallbackLine(): string {
    const configured = this.options.fallbackLines.map((l) => l.trim()).filter((l) => l !== "");
    const lines = configured.length > 0 ? configured : DEFAULT_FALLBACK_LINES;
    const line = lines[this.#fallbackIndex % lines.length];
    this.#fallbackIndex++;
    return line;
  }

  /** Replaces persona, options, memory and client tools (already validated; tools recomposed). */
  apply(changes: NpcChanges, tools: AgentTool[]): void {
    this.persona = changes.persona;
    this.options = changes.options;
    this.memory = changes.memory;
    this.clientTools = changes.clientTools;
    this.#replySchema = null;
    this.agent.tools = tools;
    this.agent.settings = { ...this.agent.settings, options: generationOptions(changes.options) };
  }

  /** Waits for background compaction; throws when `op` was cancelled meanwhile. */
  async settle(op: Operation): Promise<void> {
    while (this.#background) await this.#background;
    op.throwIfCancelled();
  }

  /** True when `compactAfterTurns` turns (after any summarized ones) are there: compaction is due. */
  compactionDue(): boolean {
    const every = this.options.compactAfterTurns;
    if (every <= 0) return false;
    const keep = Math.max(0, this.options.keepRecentTurns);
    return this.turnCount >= Math.max(every, keep + 1);
  }

  /** True when a successful turn should start compaction in the background: due, and the room runs low. */
  compactionWanted(): boolean {
    return this.compactionDue() && this.#roomUsed() > SUMMARIZE_AT_ROOM;
  }

  /**
   * Starts compaction in the background (see the module notes). The next queued request waits for it
   * ({@link settle}); cancelling the NPC stops it; failures are swallowed.
   */
  startCompaction(): void {
    if (this.#background) return;
    const op = new Operation();
    this.#backgroundOp = op;
    const run = async () => {
      try {
        await this.#summarize(op.signal, () => op.commit());
      } catch {
        // Compaction is best effort: the conversation just stays longer.
      } finally {
        this.#background = null;
        this.#backgroundOp = null;
      }
    };
    this.#background = run();
  }

  /** Compaction inside the NPC's queue operation `op`: failures are swallowed, a cancel is thrown. */
  async #summarizeInQueue(op: Operation): Promise<void> {
    try {
      await this.#summarize(op.signal, () => op.throwIfCancelled());
    } catch (error) {
      op.throwIfCancelled();
      if (toBridgeError(error).dataCode === "cancelled") throw error;
    }
  }

  /**
   * The model summarizes the conversation (asked as its next message) into `memory.summary`, and all but
   * the `keepRecentTurns` newest turns count as summarized. `commit` runs before anything changes.
   */
  async #summarize(signal: AbortSignal, commit: () => void): Promise<void> {
    const conversation = this.conversation();
    const cut = compactionCut(conversation, Math.max(0, this.options.keepRecentTurns));
    if (cut === null) return;
    const last = conversation[cut - 1];
    const summary = await summarizeAsContinuation(this.agent, {
      request: summaryRequest(this.persona.name),
      policy: this.turnPolicy(),
      minResponseTokens: SUMMARY_MIN_TOKENS,
      signal,
    });
    commit();
    if (this.agent.entries.includes(last)) this.#summarizedLast = last;
    if (summary !== "") this.memory = { ...this.memory, summary };
  }

  /** Cancels running and queued requests and compaction; returns how many requests were cancelled. */
  cancelAll(): number {
    this.#backgroundOp?.cancel();
    return this.queue.cancelAll();
  }

  /** Cancels everything and ends barks (the NPC is being deleted). */
  dispose(): void {
    this.cancelAll();
    this.#lifetime.abort();
  }

  /** The persona's JSON form. */
  personaJson(): JsonObject {
    return personaJson(this.persona);
  }

  /** The save state of `npc/state` (complete turns after the summarized ones: the summary stands for those). */
  stateJson(): JsonObject {
    const transcript = exportTranscript({
      instructions: this.instructions(),
      tools: this.agent.tools,
      entries: this.conversation(),
    });
    return {
      version: STATE_VERSION,
      persona: personaJson(this.persona),
      memory: memoryJson(this.memory),
      transcript,
      npc: this.id,
      options: optionsJson(this.options),
      tools: this.clientTools.map((t): JsonValue => cloneJson(t.definition ?? {})),
      world: this.world?.id ?? null,
    };
  }
}

/** UTF-8 length of the tools' names, descriptions and argument schemas (context estimates). */
function toolBytes(tools: readonly AgentTool[]): number {
  let bytes = 0;
  for (const t of tools) {
    bytes += t.name.length + utf8Length(t.description) + utf8Length(compactJson(t.jsonSchema));
  }
  return bytes;
}

/** True when both options give the world tools the same paths. */
function sameWorldAccess(a: NpcOptions, b: NpcOptions): boolean {
  return JSON.stringify([a.worldReadable, a.worldWritable]) ===
    JSON.stringify([b.worldReadable, b.worldWritable]);
}

/** Generation options from NPC options. */
export function generationOptions(o: NpcOptions): { temperature?: number; maximumResponseTokens?: number } {
  const out: { temperature?: number; maximumResponseTokens?: number } = {};
  if (o.temperature !== null) out.temperature = o.temperature;
  if (o.maximumResponseTokens !== null) out.maximumResponseTokens = o.maximumResponseTokens;
  return out;
}
