/**
 * One NPC on the bridge: persona, options, memory, client tools, an optional world, the conversation agent,
 * the per-NPC work queue and the background compaction that the next queued request waits for.
 * @module
 */
import { cloneJson, type JsonObject, type JsonValue } from "../../protocol/json.ts";
import type { ConversationEntry } from "../../protocol/transcript.ts";
import type { LanguageModel } from "../../models/language_model.ts";
import { Agent } from "../../agent/agent.ts";
import { compactAgent } from "../../agent/compaction.ts";
import { exportTranscript } from "../../agent/transcript_codec.ts";
import type { AgentTool } from "../../agent/types.ts";
import { Operation, WorkQueue } from "../../util/work_queue.ts";
import type { WorldState } from "../world/mod.ts";
import { renderInstructions, secretVisibility, summaryInstructions } from "./instructions.ts";
import { CHANGE_RELATIONSHIP_TOOL, REMEMBER_FACT_TOOL } from "./memory_tools.ts";
import { applyStage, memoryJson, memoryNote, MemoryStage, type NpcMemory } from "./npc_memory.ts";
import { type NpcOptions, optionsJson } from "./npc_options.ts";
import { type Persona, personaJson } from "./persona.ts";
import { replySchema, type ReplySettings } from "./reply_format.ts";
import type { ResponseSchema } from "../../models/language_model.ts";
import { composeTools } from "./npc_tools.ts";

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

  /** Every tool the model sees for these client tools and options (validated). */
  composeTools(clientTools: AgentTool[], options: NpcOptions): AgentTool[] {
    return composeTools(clientTools, {
      world: this.world?.state ?? null,
      options: options,
      host: {
        memory: () => this.memory,
        stage: () => this.#stage,
      },
    });
  }

  /** Names of every tool the model sees. */
  get toolNames(): string[] {
    return this.agent.tools.map((t) => t.name);
  }

  /** Completed turns in the visible history. */
  get turnCount(): number {
    return this.agent.entries.filter((e) => e.role === "user").length;
  }

  /** True while a request is queued or running, or compaction runs. */
  get busy(): boolean {
    return this.queue.busy || this.#background !== null;
  }

  /** Queued and running requests plus a running compaction. */
  get pendingOperations(): number {
    return this.queue.pending + (this.#background !== null ? 1 : 0);
  }

  /** The instructions for the next turn (recomputed from persona, options, memory and tools). */
  instructions(): string {
    const tools = this.agent.tools;
    const has = (name: string) => tools.some((t) => t.name === name);
    const memoryToolNames = [REMEMBER_FACT_TOOL, CHANGE_RELATIONSHIP_TOOL];
    return renderInstructions(this.persona, {
      maxSentences: this.persona.maxSentences,
      hasFactTools: tools.some((t) => !memoryToolNames.includes(t.name)),
      secrets: secretVisibility(this.memory.relationship, this.options.secretsUnlockAtRelationship),
      extraInstructions: this.options.extraInstructions,
      rememberFact: has(REMEMBER_FACT_TOOL),
      changeRelationship: has(CHANGE_RELATIONSHIP_TOOL),
      emotionTag: this.options.replyFormat === "text",
    });
  }

  /** The memory note for the next turn, or null. */
  contextNote(): string | null {
    return memoryNote(this.memory, this.agent.tools.some((t) => t.name === CHANGE_RELATIONSHIP_TOOL));
  }

  /** Brings the agent's instructions and note up to date (before every turn). */
  prepareTurn(): void {
    this.agent.instructions = this.instructions();
    this.agent.contextNote = this.contextNote();
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

  /** True when a successful turn should be followed by compaction. */
  compactionDue(): boolean {
    const every = this.options.compactAfterTurns;
    if (every <= 0) return false;
    const keep = Math.max(0, this.options.keepRecentTurns);
    return this.turnCount >= Math.max(every, keep + 1);
  }

  /**
   * Starts background compaction: older turns are summarized into `memory.summary` and dropped. The next
   * queued request waits for it ({@link settle}); cancelling the NPC stops it; failures are swallowed.
   */
  startCompaction(): void {
    if (this.#background) return;
    const op = new Operation();
    this.#backgroundOp = op;
    const run = async () => {
      try {
        const summary = await compactAgent(this.agent, {
          keepRecentTurns: Math.max(0, this.options.keepRecentTurns),
          summaryInstructions: summaryInstructions(this.persona.name),
          labels: { user: "Player", assistant: this.persona.name },
          previousSummary: this.memory.summary,
          signal: op.signal,
          commit: () => op.commit(),
          storeInContextNote: false,
        });
        if (summary !== null && summary !== "") this.memory = { ...this.memory, summary };
      } catch {
        // Compaction is best effort: the conversation just stays longer.
      } finally {
        this.#background = null;
        this.#backgroundOp = null;
      }
    };
    this.#background = run();
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

  /** The save state of `npc/state` (complete turns only). */
  stateJson(): JsonObject {
    const transcript = exportTranscript({
      instructions: this.instructions(),
      tools: this.agent.tools,
      entries: this.agent.entries,
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

/** Generation options from NPC options. */
export function generationOptions(o: NpcOptions): { temperature?: number; maximumResponseTokens?: number } {
  const out: { temperature?: number; maximumResponseTokens?: number } = {};
  if (o.temperature !== null) out.temperature = o.temperature;
  if (o.maximumResponseTokens !== null) out.maximumResponseTokens = o.maximumResponseTokens;
  return out;
}
