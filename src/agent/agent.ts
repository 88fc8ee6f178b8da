/**
 * The agent: one conversation with instructions, a context note, tools and a model. `runTurn` runs the
 * tool loop of one turn (steering each step), retries transient failures and commits the turn to the
 * history only when it succeeds.
 * @module
 */
import { BridgeError, toBridgeError } from "../protocol/errors.ts";
import { compactJson, type JsonValue } from "../protocol/json.ts";
import {
  type ConversationEntry,
  isToolCallsEntry,
  type PromptEntry,
  type ResponseEntry,
} from "../protocol/transcript.ts";
import type {
  GenerationOptions,
  LanguageModel,
  StepRequest,
  StepResult,
  StepTool,
  StepUsage,
} from "../models/language_model.ts";
import { ScriptedModel } from "../models/scripted.ts";
import { hostModelType, hostStep } from "../models/host_models.ts";
import { orderBySchema } from "../schema/order.ts";
import { NO_ASSETS, NO_OPTIONS } from "./shared_values.ts";
import { abortableSleep } from "../util/sleep.ts";
import { retryDecision, variedOptions } from "./retry_policy.ts";
import { ContextNoteDelivery, withContextBlock } from "./context_note.ts";
import { offeredTools, planStep, RESPOND_DIRECTLY, type StepPlan, type TurnProgress } from "./step_policy.ts";
import { TextTracker } from "./text_tracker.ts";
import { type BatchResult, runToolBatch } from "./tool_runtime.ts";
import { needsTrim, trimHistory, type TrimResult } from "./trim.ts";
import { entryBytes, entryLength, estimateTokens, historyLength } from "./entry_text.ts";
import { historyCut, MAX_HISTORY_CHARS, MAX_HISTORY_ENTRIES } from "./history_bound.ts";
import {
  type AgentSettings,
  type AgentTool,
  DEFAULT_SETTINGS,
  type StepInfo,
  type TurnInput,
  type TurnResult,
  type TurnSink,
  type Usage,
} from "./types.ts";

export { RETRY_BASE_DELAY_MS } from "./retry_policy.ts";
/**
 * Most model steps in one turn. Rounds of unknown or over-budget tool calls finish in microtasks, so a
 * model that never stops calling tools would otherwise starve the event loop.
 */
export const MAX_TURN_STEPS = 256;
/** Tool rounds a model may still return on steps where tools were disallowed before the turn fails. */
export const MAX_DISALLOWED_TOOL_ROUNDS = 2;

/** A value now, or a promise of it. */
type MaybePromise<T> = T | Promise<T>;

/**
 * Options of a new agent.
 *
 * @example
 * ```ts
 * import { Agent, type AgentInit, ScriptedModel } from "@open-apple-models/bridge/engine";
 * const init: AgentInit = {
 *   model: new ScriptedModel({ steps: [{ text: "Halt!" }] }),
 *   instructions: "You are the guard of the north gate.",
 *   contextNote: "It is night.",
 *   settings: { maxAttempts: 1 },
 * };
 * const guard = new Agent(init);
 * ```
 */
export interface AgentInit {
  /** The model backend. */
  model: LanguageModel;
  /** System instructions. */
  instructions?: string | null;
  /** Extra context for the model; it enters the next prompt when it changed (see {@link Agent.contextNote}). */
  contextNote?: string | null;
  /** Tools offered to the model. */
  tools?: AgentTool[];
  /** Conversation to start from. */
  entries?: ConversationEntry[];
  /** Generation and retry settings. */
  settings?: Partial<AgentSettings>;
}

function toStepTool(tool: AgentTool): StepTool {
  return {
    name: tool.name,
    description: tool.description,
    parameters: tool.generationSchema,
    jsonSchema: tool.jsonSchema,
  };
}

/** Removes respond_directly calls and outputs from entries about to be committed. */
function stripRespondDirectly(entries: ConversationEntry[]): ConversationEntry[] {
  const out: ConversationEntry[] = [];
  for (const entry of entries) {
    if (isToolCallsEntry(entry)) {
      const calls = entry.toolCalls.filter((c) => c.name !== RESPOND_DIRECTLY);
      if (calls.length > 0) {
        out.push(calls.length === entry.toolCalls.length ? entry : { ...entry, toolCalls: calls });
      }
    } else if (entry.role === "tool" && entry.toolName === RESPOND_DIRECTLY) {
      continue;
    } else out.push(entry);
  }
  return out;
}

/** One turn being run: its arguments and the state shared between its attempts. */
interface TurnRun {
  input: TurnInput;
  sink: TurnSink;
  signal: AbortSignal;
  commit: (() => void) | undefined;
  /** Attempt number, from 1. */
  attempt: number;
  /** Generation options of this attempt (varied after an invalid answer, see retry_policy.ts). */
  options: GenerationOptions;
  /** The context-note block this turn puts ahead of the prompt (see context_note.ts), or null. */
  noteBlock: string | null;
  /** The prompt text the model sees: the note block, then the user's prompt. */
  prompt: string;
  /** True once a tool call of this attempt was admitted (no retry then). */
  admitted: boolean;
  /** Text shown so far (made on first use; quiet runs never need it). */
  tracker: TextTracker | null;
  /** The answer entry of the attempt that succeeded. */
  response: ResponseEntry | null;
}

/** One attempt of a turn in progress (its progress fields are the step policy's `TurnProgress`). */
interface Attempt extends TurnProgress {
  run: TurnRun;
  prompt: PromptEntry;
  /** Tool-calls and tool-output entries of this attempt so far (a shared empty array before the first). */
  turn: ConversationEntry[];
  records: TurnResult["toolCalls"];
  steps: StepInfo[];
  usage: Usage;
  /** Tool rounds returned on steps where tools were disallowed. */
  disallowedRounds: number;
  /** The tools every step of this attempt shows (see `StepPlan.offered`), and their step form. */
  offered: AgentTool[];
  offeredSteps: StepTool[];
  instructions: string | null;
  onText: ((snapshot: string) => void) | undefined;
  onPartial: ((value: JsonValue) => void) | undefined;
}

/** Shared empty values (never mutated): a quiet tool-less turn allocates no empty arrays for them. */
const NO_ENTRIES: ConversationEntry[] = Object.freeze([]) as unknown as ConversationEntry[];
const NO_STEP_TOOLS: StepTool[] = Object.freeze([]) as unknown as StepTool[];
const NO_TOOLS: AgentTool[] = Object.freeze([]) as unknown as AgentTool[];
const NO_STEPS: StepInfo[] = Object.freeze([]) as unknown as StepInfo[];

/** The step form of the callable `tools`: the same objects as in the offered list (so backends can compare). */
function callableSteps(tools: AgentTool[], offered: AgentTool[], offeredSteps: StepTool[]): StepTool[] {
  if (tools.length === 0) return NO_STEP_TOOLS;
  if (tools.length === offered.length && tools.every((t, i) => t === offered[i])) return offeredSteps;
  return tools.map((t) => {
    const i = offered.indexOf(t);
    return i >= 0 ? offeredSteps[i] : toStepTool(t);
  });
}

/**
 * An agent with a conversation.
 *
 * @example
 * ```ts
 * import { Agent, ScriptedModel } from "@open-apple-models/bridge/engine";
 * const agent = new Agent({ model: new ScriptedModel({ steps: [{ text: "Hmph." }] }) });
 * const result = await agent.runTurn(
 *   { prompt: "Hello", schema: null, policy: { choice: "auto", maxToolRounds: 4, maxToolCalls: 12, enabledTools: null }, stream: false },
 *   { event: () => {}, callClientTool: () => Promise.resolve({ output: "", isError: false }) },
 *   new AbortController().signal,
 * );
 * result.text; // "Hmph."
 * ```
 */
export class Agent {
  /** The model backend. */
  model: LanguageModel;
  /** System instructions. */
  instructions: string | null;
  /**
   * Extra context (world facts, quest state, a summary). It is not appended to the instructions (that would
   * change the start of every prompt): it enters the next turn's prompt when it changed since the history
   * the model sees last carried it (see context_note.ts).
   */
  contextNote: string | null;
  /** Tools offered to the model. */
  tools: AgentTool[];
  /** The committed conversation (no instructions entry). */
  entries: ConversationEntry[];
  /** Generation and retry settings. */
  settings: AgentSettings;
  /** Most committed entries; past it the oldest whole turns are dropped (see history_bound.ts). */
  maxEntries: number = MAX_HISTORY_ENTRIES;
  /** Most characters of committed text; past it the oldest whole turns are dropped. */
  maxChars: number = MAX_HISTORY_CHARS;
  /** Entries dropped so far by the history bound. */
  droppedEntries = 0;
  /**
   * Entries at the start of {@link entries} that the latest model step did not see (history trimming, see
   * trim.ts); 0 when it saw all of them. Whoever relies on the model still seeing an older entry checks it.
   */
  hiddenByTrim = 0;
  /** Which context note the visible history carries (made when a note is first set). */
  #notes: ContextNoteDelivery | null = null;
  /** Entries of the turn in progress (for reading a transcript during a turn), without respond_directly. */
  #currentPrompt: PromptEntry | null = null;
  #currentTurn: ConversationEntry[] = NO_ENTRIES;
  /** The array `#lengthSum` measures, and the text length of each of its entries measured so far. */
  #lengthOf: ConversationEntry[] | null = null;
  #lengths: number[] = [];
  #lengthSum = 0;
  /**
   * The UTF-8 length of the first entries of `#lengthOf` (context estimates), and their sum: measured only when
   * asked for ({@link historyBytes}), since most turns never need it.
   */
  #bytes: number[] = [];
  #byteSum = 0;

  /** Entries of the turn in progress (prompt, tool calls and outputs so far), without respond_directly. */
  get inProgress(): ConversationEntry[] {
    const prompt = this.#currentPrompt;
    return prompt ? stripRespondDirectly([prompt, ...this.#currentTurn]) : [];
  }

  /** Creates an agent. */
  constructor(init: AgentInit) {
    this.model = init.model;
    this.instructions = init.instructions ?? null;
    this.contextNote = init.contextNote ?? null;
    this.tools = init.tools ?? [];
    this.entries = init.entries ?? [];
    this.settings = { ...DEFAULT_SETTINGS, ...init.settings };
  }

  /**
   * Runs one turn. `commit` is called right before the turn is appended to the history; if it throws
   * (the operation was cancelled) nothing is appended. One turn at a time: a turn started before the last one
   * settled breaks the conversation, so a method set runs an agent's turns on a `WorkQueue` (as
   * examples/quest_extension.ts does), passing the operation's `signal` and `commit`.
   */
  runTurn(
    input: TurnInput,
    sink: TurnSink,
    signal: AbortSignal,
    commit?: () => void,
  ): Promise<TurnResult> {
    try {
      return Promise.resolve(this.runTurnNow(input, sink, signal, commit));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /**
   * {@link runTurn} without the promise when the turn needs no waiting: with a model that answers at once
   * (the scripted model) the whole turn runs synchronously and its result (or error, thrown) comes back
   * directly; otherwise a promise of it.
   */
  runTurnNow(
    input: TurnInput,
    sink: TurnSink,
    signal: AbortSignal,
    commit?: () => void,
  ): TurnResult | Promise<TurnResult> {
    const note = this.contextNote;
    const noteBlock = note === null && this.#notes === null
      ? null
      : (this.#notes ??= new ContextNoteDelivery()).block(note, this.entries, this.hiddenByTrim);
    return this.#run({
      input,
      sink,
      signal,
      commit,
      attempt: 1,
      options: this.settings.options,
      noteBlock,
      prompt: withContextBlock(noteBlock, input.prompt),
      admitted: false,
      tracker: null,
      response: null,
    });
  }

  /** Runs an attempt of the turn; commits it, or retries, or fails. Synchronous when nothing waits. */
  #run(run: TurnRun): MaybePromise<TurnResult> {
    run.admitted = false;
    let outcome: MaybePromise<TurnResult>;
    try {
      outcome = this.#attempt(run);
    } catch (error) {
      return this.#failed(run, error);
    }
    if (outcome instanceof Promise) {
      return outcome.then((result) => this.#commit(run, result), (error) => this.#failed(run, error));
    }
    return this.#commit(run, outcome);
  }

  /** Appends a successful attempt to the history (unless the turn was cancelled meanwhile). */
  #commit(run: TurnRun, result: TurnResult): MaybePromise<TurnResult> {
    try {
      if (run.signal.aborted) throw BridgeError.turnCancelled();
      run.commit?.();
    } catch (error) {
      return this.#failed(run, error);
    }
    const prompt = this.#currentPrompt!;
    const turn = this.#currentTurn;
    this.#currentPrompt = null;
    this.#currentTurn = NO_ENTRIES;
    // prompt + answer (the common case) have nothing to strip
    if (turn.length === 0) this.entries.push(prompt, run.response!);
    else this.entries.push(...stripRespondDirectly([prompt, ...turn, run.response!]));
    if (run.noteBlock !== null) this.#notes!.delivered(this.contextNote, prompt);
    this.#bound();
    return result;
  }

  /** A failed attempt: cancelled, final, or retried after a delay (never once a tool ran). */
  #failed(run: TurnRun, error: unknown): Promise<TurnResult> {
    this.#currentPrompt = null;
    this.#currentTurn = NO_ENTRIES;
    if (run.signal.aborted) throw BridgeError.turnCancelled();
    const e = toBridgeError(error);
    const retry = retryDecision(e, {
      attempt: run.attempt,
      maxAttempts: this.settings.maxAttempts,
      admitted: run.admitted,
    });
    if (!retry.retry) throw e;
    run.attempt++;
    if (retry.vary) run.options = variedOptions(run.options, run.attempt);
    return abortableSleep(retry.delayMs, run.signal).then(() => {
      run.tracker?.resetNext();
      return this.#run(run);
    });
  }

  /**
   * One attempt: model steps until an answer, running each round of tool calls in between. It goes on
   * synchronously while nothing waits, so a scripted turn runs to its first real wait (a client tool, a delay)
   * inside the call that started it — its events and `tool/call`s come before anything read after its
   * request — and costs no promise per step; from the first promise on, it goes on when that settles. (Plain
   * methods, not a generator: making and resuming one cost a sixth of the agent's time on a scripted turn.)
   */
  #attempt(run: TurnRun): MaybePromise<TurnResult> {
    return this.#stepFrom(this.#newAttempt(run), 0);
  }

  /** Step `index` of attempt `a` and the steps after it. */
  #stepFrom(a: Attempt, index: number): MaybePromise<TurnResult> {
    const plan = planStep({ policy: a.run.input.policy, tools: this.tools, progress: a, offered: a.offered });
    if (this.entries.length > 0 && needsTrim(this.model, this.settings)) {
      return this.#trim(a, plan).then((trimmed) => this.#modelStep(a, index, plan, trimmed));
    }
    return this.#modelStep(a, index, plan, null);
  }

  /** The model's step `index`: only the scripted model answers at once (its step needs no promise). */
  #modelStep(
    a: Attempt,
    index: number,
    plan: StepPlan,
    trimmed: TrimResult | null,
  ): MaybePromise<TurnResult> {
    const request = this.#stepRequest(a, index, plan, trimmed);
    const model = this.model;
    let result: MaybePromise<StepResult>;
    if (model instanceof ScriptedModel) result = model.stepNow(request);
    else {
      const hostType = hostModelType(model);
      result = hostType === undefined ? model.step(request) : hostStep({ model, type: hostType }, request);
    }
    if (result instanceof Promise) return result.then((r) => this.#afterStep(a, index, plan, trimmed, r));
    return this.#afterStep(a, index, plan, trimmed, result);
  }

  /** The answer, or the round of tool calls and the next step. */
  #afterStep(
    a: Attempt,
    index: number,
    plan: StepPlan,
    trimmed: TrimResult | null,
    result: StepResult,
  ): MaybePromise<TurnResult> {
    this.#stepUsage(a, index, trimmed, result);
    if (result.kind !== "toolCalls") return this.#finish(a, result);
    this.#checkToolRound(a, index, plan);
    return this.#toolBatch(a, result).then((batch) => {
      this.#addBatch(a, batch);
      return this.#stepFrom(a, index + 1);
    });
  }

  /** A new attempt of `run` (its prompt entry, and nothing done yet). */
  #newAttempt(run: TurnRun): Attempt {
    const input = run.input;
    // Ids stay "" until a transcript export or a native model needs them (see assignMissingIds).
    const prompt: PromptEntry = {
      id: "",
      role: "user",
      contents: [{ type: "text", id: "", text: run.prompt }],
      options: NO_OPTIONS,
    };
    if (input.schema) prompt.responseFormat = { name: input.schema.name, schema: input.schema.jsonSchema };
    const quiet = run.sink.quiet === true;
    // Text events only: a quiet run (nobody streams) needs no tracker.
    const tracker = quiet ? null : (run.tracker ??= new TextTracker());
    const sink = run.sink;
    const attempt: Attempt = {
      run,
      prompt,
      turn: NO_ENTRIES,
      records: [],
      steps: NO_STEPS,
      usage: { inputTokens: 0, cachedInputTokens: 0, outputTokens: 0, totalTokens: 0 },
      rounds: 0,
      calls: 0,
      respondedDirectly: false,
      disallowedRounds: 0,
      offered: NO_TOOLS,
      offeredSteps: NO_STEP_TOOLS,
      instructions: this.instructions === "" ? null : this.instructions,
      onText: tracker === null ? undefined : (snapshot: string) => {
        const u = tracker.update(snapshot);
        if (u) sink.event({ type: "text", ...u });
      },
      onPartial: quiet ? undefined : (value: JsonValue) => sink.event({ type: "partial", value }),
    };
    const offered = offeredTools(input.policy, this.tools);
    if (offered.length > 0) {
      attempt.offered = offered;
      attempt.offeredSteps = offered.map(toStepTool);
    }
    return attempt;
  }

  /** The history trimmed for the model (a model that trims history, with trimming on). */
  #trim(a: Attempt, plan: StepPlan): Promise<TrimResult> {
    return trimHistory({
      model: this.model,
      settings: this.settings,
      instructions: a.instructions,
      tools: plan.tools,
      entries: this.entries,
      entriesBytes: this.historyBytes(),
    });
  }

  /** The history step `index` shows the model: the committed (or trimmed) one, then this turn's entries. */
  #stepHistory(a: Attempt, index: number, trimmed: TrimResult | null): ConversationEntry[] {
    const base = trimmed === null ? this.entries : trimmed.history;
    return index === 0 ? base : [...base, a.prompt, ...a.turn];
  }

  /** Adds one step's usage to the attempt's (estimated when the backend reports none). */
  #stepUsage(a: Attempt, index: number, trimmed: TrimResult | null, result: StepResult): void {
    if (a.run.signal.aborted) throw BridgeError.turnCancelled();
    if (result.usage !== null) {
      addStepUsage(a.usage, result.usage);
      return;
    }
    // Measured as the committed part (kept up to date incrementally) plus this turn's entries: measuring
    // the whole step history again made every turn cost as much as the conversation so far.
    const base = trimmed === null ? this.entries : trimmed.history;
    const baseChars = base === this.entries ? this.#entriesLength() : historyLength(base);
    const chars = index === 0 ? baseChars : baseChars + entryLength(a.prompt) + historyLength(a.turn);
    this.#estimateUsage(a.usage, a.instructions, chars, index === 0 ? a.run.prompt : "", result);
  }

  /** Fails the attempt when a round of tool calls is not allowed here. */
  #checkToolRound(a: Attempt, index: number, plan: StepPlan): void {
    if (plan.mode === "disallowed" && ++a.disallowedRounds > MAX_DISALLOWED_TOOL_ROUNDS) {
      throw BridgeError.of(
        "generation_failed",
        "The model kept calling tools after tools were disabled for this turn.",
      );
    }
    if (index + 1 >= MAX_TURN_STEPS) {
      throw BridgeError.of(
        "generation_failed",
        `The turn reached the limit of ${MAX_TURN_STEPS} model steps.`,
      );
    }
  }

  /**
   * Runs a step's tool calls. Only the tools the turn offers can run: a call of a tool that `enabledTools`
   * leaves out gets "There is no tool named …" like an unknown one (a backend that does not restrict its calls,
   * such as the scripted model, must not reach the engine with it).
   */
  #toolBatch(a: Attempt, result: StepResult & { kind: "toolCalls" }): Promise<BatchResult> {
    const run = a.run;
    return runToolBatch(result.calls, {
      tools: a.offered,
      sink: run.sink,
      signal: run.signal,
      callsSoFar: a.calls,
      maxToolCalls: run.input.policy.maxToolCalls,
      onAdmitted: () => run.admitted = true,
    });
  }

  /** Adds a finished round of tool calls to the attempt. */
  #addBatch(a: Attempt, batch: BatchResult): void {
    a.records.push(...batch.records);
    if (a.turn === NO_ENTRIES) a.turn = this.#currentTurn = [...batch.entries];
    else a.turn.push(...batch.entries);
    a.rounds++;
    a.calls += batch.admitted;
    if (batch.onlyRespondDirectly && a.rounds === 1) a.respondedDirectly = true;
  }

  /** Records step `index` (its `modelStep` event) and builds the model's request for it. */
  #stepRequest(
    a: Attempt,
    index: number,
    plan: StepPlan,
    trimmed: TrimResult | null,
  ): StepRequest {
    const run = a.run;
    const input = run.input;
    const step: StepInfo = {
      index,
      completedToolRounds: a.rounds,
      toolCallingMode: plan.mode,
      enabledTools: plan.tools.length === 0
        ? [] // fresh, not a shared frozen one: JSON.stringify leaves its fast path on frozen arrays
        : plan.tools.filter((t) => t.name !== RESPOND_DIRECTLY).map((t) => t.name),
      trimmedEntries: trimmed === null ? 0 : trimmed.trimmedEntries,
    };
    // A one-element literal on the first step: pushing onto [] would reserve room for 17.
    if (index === 0) a.steps = [step];
    else a.steps.push(step);
    if (!run.sink.quiet) run.sink.event({ type: "modelStep", step });
    this.#currentPrompt = a.prompt;
    this.#currentTurn = a.turn;
    this.hiddenByTrim = step.trimmedEntries;
    return {
      instructions: a.instructions,
      tools: callableSteps(plan.tools, a.offered, a.offeredSteps),
      offeredTools: a.offeredSteps,
      toolCallingMode: plan.mode,
      history: this.#stepHistory(a, index, trimmed),
      prompt: index === 0 ? run.prompt : "",
      responseSchema: input.schema,
      options: run.options,
      stream: input.stream,
      signal: run.signal,
      onText: a.onText,
      onPartial: a.onPartial,
      attempt: run.attempt,
    };
  }

  #finish(a: Attempt, result: Extract<StepResult, { kind: "text" | "structured" }>): TurnResult {
    const input = a.run.input;
    const sink = a.run.sink;
    const tracker = a.run.tracker;
    const quiet = sink.quiet === true;
    let structured: JsonValue | undefined;
    if (input.schema) {
      let value: JsonValue;
      if (result.kind === "structured") value = result.value;
      else {
        try {
          value = JSON.parse(result.text);
        } catch {
          throw BridgeError.of("generation_failed", "The model's answer is not valid JSON for the schema.");
        }
      }
      const ordered = orderBySchema(value, input.schema.jsonSchema);
      structured = ordered;
      if (!quiet) sink.event({ type: "partial", value: ordered });
    }
    const text = structured !== undefined ? compactJson(structured) : result.text;
    if (structured === undefined && tracker !== null) {
      const u = tracker.update(text);
      if (u) sink.event({ type: "text", ...u });
    }
    const response: ResponseEntry = {
      id: "",
      role: "response",
      contents: structured !== undefined
        ? [{
          type: "structure",
          id: "",
          structure: { source: input.schema!.name, content: structured },
        }]
        : [{ type: "text", id: "", text }],
      assets: NO_ASSETS,
    };
    const usage = a.usage;
    usage.totalTokens = usage.inputTokens + usage.outputTokens;
    const out: TurnResult = { text, toolCalls: a.records, usage, steps: a.steps };
    if (structured !== undefined) out.structured = structured;
    if (result.cutOff !== undefined) out.cutOff = result.cutOff;
    a.run.response = response;
    return out;
  }

  /** Usage estimated from text lengths, for a backend that reports none (about 4 characters per token). */
  #estimateUsage(
    usage: Usage,
    instructions: string | null,
    historyChars: number,
    prompt: string,
    result: StepResult,
  ): void {
    const input = (instructions ?? "").length + prompt.length + historyChars;
    usage.inputTokens += Math.ceil(input / 4);
    const out = result.kind === "toolCalls" ? compactJson(result.calls) : result.text;
    usage.outputTokens += estimateTokens(out);
  }

  /** Drops the oldest whole turns when the history is past its bounds. */
  #bound(): void {
    const total = this.#entriesLength();
    const entries = this.entries;
    if (entries.length <= this.maxEntries && total <= this.maxChars) return;
    const lengths = this.#lengths;
    const cut = historyCut(entries, {
      total,
      lengthAt: (i) => lengths[i],
      maxEntries: this.maxEntries,
      maxChars: this.maxChars,
    });
    if (cut === null) return;
    this.droppedEntries += cut.start;
    this.entries = entries.slice(cut.start);
    // The kept entries' lengths are known: the next usage estimate need not measure them again.
    this.#lengthOf = this.entries;
    this.#lengths = lengths.slice(cut.start);
    this.#lengthSum = cut.chars;
    const bytes = this.#bytes;
    const dropped = Math.min(cut.start, bytes.length);
    for (let i = 0; i < dropped; i++) this.#byteSum -= bytes[i];
    this.#bytes = bytes.slice(dropped);
  }

  /** Text length of the committed history (kept up to date incrementally: cheap on every turn). */
  historyChars(): number {
    return this.#entriesLength();
  }

  /**
   * UTF-8 length of the committed history's text, kept up to date like {@link historyChars}: context estimates
   * divide it by 3, so Japanese or Chinese (about a token a character) is not taken for a third of its size.
   */
  historyBytes(): number {
    this.#entriesLength();
    const entries = this.entries;
    const bytes = this.#bytes;
    for (let i = bytes.length; i < entries.length; i++) {
      const n = entryBytes(entries[i]);
      bytes.push(n);
      this.#byteSum += n;
    }
    return this.#byteSum;
  }

  /**
   * Text length of the committed history, kept up to date incrementally with each entry's length (the
   * history only grows between resets and bounds; a new array is measured again).
   */
  #entriesLength(): number {
    const entries = this.entries;
    let lengths = this.#lengths;
    if (entries !== this.#lengthOf || lengths.length > entries.length) {
      this.#lengthOf = entries;
      lengths = this.#lengths = [];
      this.#lengthSum = 0;
      this.#bytes = [];
      this.#byteSum = 0;
    }
    for (let i = lengths.length; i < entries.length; i++) {
      const n = entryLength(entries[i]);
      lengths.push(n);
      this.#lengthSum += n;
    }
    return this.#lengthSum;
  }

  /** Removes every conversation entry and the context note. */
  reset(): void {
    this.entries = [];
    this.contextNote = null;
  }
}

/** Adds the usage a backend reported for one step to the turn's. */
function addStepUsage(usage: Usage, step: StepUsage): void {
  usage.inputTokens += step.inputTokens;
  usage.cachedInputTokens += step.cachedInputTokens;
  usage.outputTokens += step.outputTokens;
}
