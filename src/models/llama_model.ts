/**
 * The in-process GGUF backend (`{"type": "llama", "path": …}`): one {@link LanguageModel} step = one
 * `LlamaChat.generateResponse` of node-llama-cpp on a pooled context sequence.
 *
 * - Each model instance (one per session, NPC or one-off use) gets its sequence back when it is free, and
 *   node-llama-cpp evaluates only the tokens after the prefix already in that sequence's KV cache
 *   (`forRequest()` views, one per `oam serve` completion, share their instance's sequences).
 * - Tool calls use node-llama-cpp's function calling: a grammar admits only the step's tools and their
 *   argument schemas; `required` forces a call, `disallowed` offers none (see `llama_tools.ts`).
 * - Structured answers are generated under a JSON-Schema grammar; when tools may be called first, the
 *   model gets the tools, and as soon as it starts writing text instead, that text is dropped and the
 *   answer is generated under the grammar.
 * - Every call and answer is still validated against the client's JSON Schema; an invalid one is
 *   generated once more with different sampling, then the step fails with `generation_failed` (with the
 *   options' `reportCutOff`, set by `oam serve`, one the token limit cut off fails at once with a
 *   `CutOffAnswer` holding what was written).
 * - A prompt that does not fit the context fails with `context_size_exceeded` (no silent context shift).
 * @module
 */
import { BridgeError } from "../protocol/errors.ts";
import { compactJson, type JsonValue } from "../protocol/json.ts";
import { orderBySchema } from "../schema/order.ts";
import type {
  ChatFunctions,
  ChatItem,
  ChatResponse,
  GenerateOptions,
  LlamaChat,
  LlamaContextSequence,
  TokenMeter,
} from "./llama_api.ts";
import type { LlamaModelConfig } from "./llama_config.ts";
import { chatHistory, RawMemory } from "./llama_history.ts";
import { type LlamaRuntime, openLlamaRuntime } from "./llama_runtime.ts";
import { responseGrammarPlan } from "./llama_schema.ts";
import { callPrefix, chatFunctions, DocumentedTools, stepChatWrapper, toolCallBias } from "./llama_tools.ts";
import type {
  LanguageModel,
  ModelAvailability,
  StepRequest,
  StepResult,
  StepToolCall,
  StepUsage,
} from "./language_model.ts";
import { CutOffAnswer, type CutOffWritten, type CutToolCall } from "./cut_off.ts";
import { parsePartialJson } from "./openai_partial_json.ts";
import { checkStructured, checkToolCalls } from "./openai_validate.ts";
import { newCallId } from "../util/ids.ts";
import { endSentence } from "../util/text.ts";
import { isForGood } from "./for_good.ts";

/** Attempts per step when an answer fails validation (the second one samples differently). */
export const LLAMA_STEP_ATTEMPTS = 2;
/** Temperature used when sampling is top-k/top-p without a temperature. */
const DEFAULT_SAMPLING_TEMPERATURE = 0.8;

/**
 * A result, or why the answer was unusable (and whether the retry should leave the tools undocumented, and
 * what was written when the token limit cut the answer off).
 */
type Interpretation = { result: StepResult } | {
  problem: string;
  hideTools?: boolean;
  cutOff?: CutOffWritten;
};

/** One attempt of a step as {@link LlamaModel}'s free answer reads it. */
interface FreeStep {
  runtime: LlamaRuntime;
  chat: LlamaChat;
  history: ChatItem[];
  request: StepRequest;
  base: GenerateOptions;
  guard: StepGuard;
  attempt: number;
  /** The tools the prompt documents (undefined: none shown, e.g. hidden after a blocked call). */
  documented: ChatFunctions | undefined;
}

/**
 * The function calls of a generation as far as they were written (collected only when the step reports cut
 * answers): each call's name and parameters text, in order, and whether the last one was cut off.
 */
class CallWriting {
  readonly #calls = new Map<number, { name: string; argumentsText: string; done: boolean }>();

  readonly onChunk = (
    chunk: { callIndex: number; functionName: string; paramsChunk: string; done: boolean },
  ): void => {
    const call = this.#calls.get(chunk.callIndex) ??
      { name: chunk.functionName, argumentsText: "", done: false };
    call.argumentsText += chunk.paramsChunk;
    call.done = chunk.done;
    this.#calls.set(chunk.callIndex, call);
  };

  /** True when a call was started but not finished. */
  get unfinished(): boolean {
    return [...this.#calls.values()].some((c) => !c.done);
  }

  /** The calls written, in order. */
  written(): CutToolCall[] {
    return [...this.#calls.entries()].sort((a, b) => a[0] - b[0])
      .map(([, c]) => ({ name: c.name, argumentsText: c.argumentsText }));
  }
}

/**
 * The generation's abort signal: the caller's, plus an overflow stop. node-llama-cpp shifts the context
 * when a prompt or answer outgrows it (dropping old messages); its shift strategy is replaced by one that
 * records the overflow and stops, so the step fails with `context_size_exceeded` instead.
 */
class StepGuard {
  readonly #controller = new AbortController();
  readonly #caller: AbortSignal;
  readonly #onAbort = () => this.#controller.abort();
  readonly #contextSize: number;
  readonly #firstTurn: boolean;
  readonly #meter: TokenMeter;
  /** The sequence's generated tokens when the current generation started. */
  #outputAtStart: number;
  overflowAt = 0;
  /** Tokens generated when it overflowed (0: the prompt itself did not fit). */
  answerTokens = 0;
  /** The step's token limit, for the advice. */
  readonly #tokenLimit: number | undefined;

  /**
   * `contextSize`, whether the request has no history yet, the sequence's token meter and the step's token
   * limit, for the overflow message.
   */
  constructor(
    caller: AbortSignal,
    at: { contextSize: number; firstTurn: boolean; meter: TokenMeter; tokenLimit: number | undefined },
  ) {
    this.#caller = caller;
    this.#tokenLimit = at.tokenLimit;
    this.#contextSize = at.contextSize;
    this.#firstTurn = at.firstTurn;
    this.#meter = at.meter;
    this.#outputAtStart = at.meter.usedOutputTokens;
    if (caller.aborted) this.#controller.abort();
    else caller.addEventListener("abort", this.#onAbort, { once: true });
  }

  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /** Marks the start of a generation (an overflow after it has written tokens is the answer's). */
  starting(): void {
    this.#outputAtStart = this.#meter.usedOutputTokens;
  }

  /**
   * The context-shift strategy: remember the limit and how much of the answer was written, stop, and hand
   * back an empty history, which fits (a history that does not fit makes node-llama-cpp print a warning and
   * shift with its own strategy).
   */
  readonly strategy = ({ maxTokensCount }: { chatHistory: readonly ChatItem[]; maxTokensCount: number }) => {
    if (this.overflowAt === 0) {
      // The first overflow: node-llama-cpp may shift again before it sees the abort.
      this.overflowAt = maxTokensCount;
      this.answerTokens = this.#meter.usedOutputTokens - this.#outputAtStart;
    }
    this.#controller.abort();
    return { chatHistory: [], metadata: null };
  };

  /** Throws `cancelled` or `context_size_exceeded` when the generation was stopped for either. */
  check(): void {
    if (this.overflowAt > 0) throw this.#overflow();
    if (this.#caller.aborted) throw BridgeError.cancelled();
  }

  #overflow(): BridgeError {
    const data = { contextTokens: this.overflowAt };
    if (this.answerTokens > 0) {
      // The prompt fitted; the answer did not end before the context was full.
      const limit = this.#tokenLimit === undefined
        ? "give it a token limit"
        : `lower its token limit (${this.#tokenLimit})`;
      return BridgeError.of(
        "context_size_exceeded",
        `The answer outgrew the model's ${this.#contextSize}-token context; ${limit} (maxResponseTokens in a ` +
          "session's options, maximumResponseTokens in an NPC's) or use a larger contextSize (a gguf: model's " +
          "'#contextSize=8192').",
        data,
      );
    }
    // Nothing to compact or start over on a first turn: only a larger context helps.
    const what = this.#firstTurn ? "The instructions, tools and prompt do" : "The conversation does";
    const advice = this.#firstTurn
      ? "use a larger contextSize (a gguf: model's '#contextSize=8192')"
      : "start a new session, compact it, or use a larger contextSize";
    return BridgeError.of(
      "context_size_exceeded",
      `${what} not fit the model's ${this.#contextSize}-token context (${this.overflowAt} tokens after the ` +
        `room kept for the answer); ${advice}.`,
      data,
    );
  }

  dispose(): void {
    this.#caller.removeEventListener("abort", this.#onAbort);
  }
}

function sampling(request: StepRequest, attempt: number): GenerateOptions {
  const { temperature, maximumResponseTokens, sampling } = request.options;
  const out: GenerateOptions = {};
  if (maximumResponseTokens !== undefined) out.maxTokens = maximumResponseTokens;
  switch (sampling?.mode) {
    case "greedy":
      out.temperature = 0;
      break;
    case "topK":
      out.topK = sampling.k;
      out.temperature = temperature ?? DEFAULT_SAMPLING_TEMPERATURE;
      if (sampling.seed !== undefined) out.seed = sampling.seed;
      break;
    case "topP":
      out.topP = sampling.p;
      out.temperature = temperature ?? DEFAULT_SAMPLING_TEMPERATURE;
      if (sampling.seed !== undefined) out.seed = sampling.seed;
      break;
    default:
      if (temperature !== undefined) out.temperature = temperature;
  }
  if (attempt > 1) {
    // Never the same request twice: the retry samples (with a seed derived from the attempt).
    out.temperature = Math.max(out.temperature ?? 0, 0.7);
    out.seed = (out.seed ?? 0) + attempt * 7919;
  }
  return out;
}

/** Token counts of a sequence before a step, to report what the step evaluated. */
class Meter {
  readonly #meter: TokenMeter;
  readonly #input: number;
  readonly #output: number;

  constructor(sequence: LlamaContextSequence) {
    this.#meter = sequence.tokenMeter;
    this.#input = this.#meter.usedInputTokens;
    this.#output = this.#meter.usedOutputTokens;
  }

  usage(sequence: LlamaContextSequence): StepUsage {
    const evaluated = this.#meter.usedInputTokens - this.#input;
    const outputTokens = this.#meter.usedOutputTokens - this.#output;
    const inputTokens = Math.max(evaluated, sequence.contextTokens.length - outputTokens);
    return { inputTokens, cachedInputTokens: inputTokens - evaluated, outputTokens };
  }
}

function addUsage(total: StepUsage | null, more: StepUsage): StepUsage {
  if (total === null) return more;
  return {
    inputTokens: total.inputTokens + more.inputTokens,
    cachedInputTokens: total.cachedInputTokens + more.cachedInputTokens,
    outputTokens: total.outputTokens + more.outputTokens,
  };
}

/** The llama backend (see {@link createLlamaModel}). */
class LlamaBackend implements LanguageModel {
  readonly kind = "llama";
  readonly trimsHistory = false;
  readonly #config: LlamaModelConfig;
  readonly #memory: RawMemory;
  readonly #documented = new DocumentedTools();
  /** Who the pool hands "its" sequence back to (this instance, or the one {@link forRequest} was called on). */
  readonly #owner: object;
  #contextSize: number;

  constructor(config: LlamaModelConfig, shared?: { memory: RawMemory; owner: object }) {
    this.#config = config;
    this.#contextSize = config.contextSize ?? 4096;
    this.#memory = shared?.memory ?? new RawMemory();
    this.#owner = shared?.owner ?? this;
  }

  /** The model as `--model` names it: `gguf:<path>`. */
  get label(): string {
    return `gguf:${this.#config.path}`;
  }

  get contextSize(): number {
    return this.#contextSize;
  }

  /**
   * This model for one request: its own tool list to document, but this instance's sequences (their KV cache
   * holds the conversation's earlier requests) and the raw text of the calls and answers it wrote.
   */
  forRequest(): LanguageModel {
    const view = new LlamaBackend(this.#config, { memory: this.#memory, owner: this.#owner });
    view.#contextSize = this.#contextSize;
    return view;
  }

  async #runtime(): Promise<LlamaRuntime> {
    const runtime = await openLlamaRuntime(this.#config);
    this.#contextSize = runtime.contextSize;
    return runtime;
  }

  /**
   * The runtime with a pool that still hands out sequences: a context unloaded for others (see
   * `MAX_LLAMA_CONTEXTS`) while this one was being opened is opened again (a few times at most; then acquiring
   * fails with `model_unavailable`).
   */
  async #openRuntime(): Promise<LlamaRuntime> {
    let runtime = await this.#runtime();
    for (let again = 0; again < 4 && runtime.pool.closed; again++) runtime = await this.#runtime();
    return runtime;
  }

  async availability(): Promise<ModelAvailability> {
    try {
      const runtime = await this.#runtime();
      return {
        available: true,
        contextSize: runtime.contextSize,
        variant: runtime.variant,
        supportedLanguages: [],
      };
    } catch (error) {
      return {
        available: false,
        reason: "unknown",
        contextSize: this.#contextSize,
        supportedLanguages: [],
        detail: error instanceof Error ? error.message : String(error),
        // A permission this process lacks: no wait brings it (`oam serve` asks no retry).
        ...(isForGood(error) ? { permanent: true } : {}),
      };
    }
  }

  async countTokens(request: Omit<StepRequest, "signal">): Promise<number> {
    const runtime = await this.#openRuntime();
    const functions = this.#documented.update(request.offeredTools ?? request.tools);
    const state = stepChatWrapper(runtime.module, {
      base: runtime.chatWrapper,
      documented: functions,
      force: false,
    })
      .generateContextState({ chatHistory: chatHistory(request, this.#memory) });
    const text = state.contextText as unknown as { tokenize(tokenizer: unknown): unknown[] };
    return text.tokenize(runtime.model.tokenizer).length;
  }

  async step(request: StepRequest): Promise<StepResult> {
    if (request.signal.aborted) throw BridgeError.cancelled();
    if (request.toolCallingMode === "required" && request.tools.length === 0) {
      throw BridgeError.of("invalid_request", "Tool calling mode 'required' needs at least one tool.");
    }
    const runtime = await this.#openRuntime();
    const lease = await runtime.pool.acquire(this.#owner, request.signal);
    try {
      let usage: StepUsage | null = null;
      let problem = "";
      let hideTools = false;
      for (let attempt = 1; attempt <= LLAMA_STEP_ATTEMPTS; attempt++) {
        const meter = new Meter(lease.sequence);
        const guard = new StepGuard(request.signal, {
          contextSize: runtime.contextSize,
          meter: lease.sequence.tokenMeter,
          tokenLimit: request.options.maximumResponseTokens,
          // No answer yet in the history (tool calls aside): the first turn, its own tool rounds included.
          firstTurn: !request.history.some((entry) => entry.role === "response" && !("toolCalls" in entry)),
        });
        let outcome: Interpretation;
        try {
          outcome = await this.#attempt(runtime, lease.sequence, request, attempt, guard, hideTools);
        } finally {
          guard.dispose();
        }
        usage = addUsage(usage, meter.usage(lease.sequence));
        if ("result" in outcome) return { ...outcome.result, usage } as StepResult;
        problem = outcome.problem;
        if (outcome.cutOff !== undefined && request.options.reportCutOff === true) {
          throw CutOffAnswer.invalid(problem, { attempts: attempt, written: outcome.cutOff, usage });
        }
        hideTools = outcome.hideTools === true;
      }
      throw BridgeError.of(
        "generation_failed",
        `The model gave an invalid answer ${LLAMA_STEP_ATTEMPTS} times; last problem: ${
          endSentence(problem)
        }`,
        { attempts: LLAMA_STEP_ATTEMPTS, problem },
      );
    } finally {
      lease.release();
    }
  }

  async #attempt(
    runtime: LlamaRuntime,
    sequence: LlamaContextSequence,
    request: StepRequest,
    attempt: number,
    guard: StepGuard,
    hideTools: boolean,
  ): Promise<Interpretation> {
    const mode = request.toolCallingMode;
    const documented = hideTools ? undefined : this.#documented.update(request.offeredTools ?? request.tools);
    const history = chatHistory(request, this.#memory);
    const chat = new runtime.module.LlamaChat({
      contextSequence: sequence,
      chatWrapper: stepChatWrapper(runtime.module, {
        base: runtime.chatWrapper,
        documented: documented,
        force: mode === "required",
      }),
    });
    const base: GenerateOptions = {
      ...sampling(request, attempt),
      contextShift: { strategy: guard.strategy },
    };
    try {
      const callable = mode === "disallowed" ? [] : request.tools;
      if (request.responseSchema !== null && mode !== "required") {
        if (callable.length > 0) {
          const calls = await this.#toolsBeforeAnswer(chat, history, request, base, callable, guard);
          if (calls !== null) return calls;
        }
        return await this.#structured(runtime, chat, history, request, base, guard);
      }
      return await this.#freeAnswer({ runtime, chat, history, request, base, guard, attempt, documented });
    } finally {
      chat.dispose();
    }
  }

  /** A step without a response schema (or with a tool call required): text or tool calls. */
  async #freeAnswer(step: FreeStep): Promise<Interpretation> {
    const { runtime, request } = step;
    const mode = request.toolCallingMode;
    const callable = mode === "disallowed" ? [] : request.tools;
    // No tool may be called: a call the model starts anyway ends the answer there.
    const blocked = mode === "disallowed";
    const bias = blocked && step.documented !== undefined ? toolCallBias(runtime) : undefined;
    const writing = request.options.reportCutOff === true && callable.length > 0 ? new CallWriting() : null;
    const response = await this.#generate(step.chat, step.history, step.guard, {
      ...step.base,
      ...(callable.length > 0 ? { functions: chatFunctions(callable), documentFunctionParams: true } : {}),
      ...(writing !== null ? { onFunctionCallParamsChunk: writing.onChunk } : {}),
      ...(bias !== undefined ? { tokenBias: bias } : {}),
      ...(blocked ? { customStopTriggers: [callPrefix(runtime)] } : {}),
      ...(mode === "required" ? {} : { onTextChunk: this.#textStreamer(request) }),
    });
    return this.#readFreeAnswer(step, response, writing);
  }

  /** What a generation of {@link #freeAnswer} came to: its calls, its text, or the problem to retry on. */
  #readFreeAnswer(step: FreeStep, response: ChatResponse, writing: CallWriting | null): Interpretation {
    const { runtime, request } = step;
    const mode = request.toolCallingMode;
    const cut = response.metadata.stopReason === "maxTokens";
    if (writing !== null && cut && writing.unfinished) {
      return {
        problem: "the model did not complete its tool call (cut off at the token limit)",
        cutOff: { toolCalls: writing.written() },
      };
    }
    if (response.functionCalls !== undefined && response.functionCalls.length > 0) {
      return this.#calls(response, request);
    }
    if (mode === "required") {
      return {
        problem: `the model did not complete a tool call (${response.metadata.stopReason})`,
        // Cut off before a call's name was written: no call to show.
        ...(cut ? { cutOff: { toolCalls: writing?.written() ?? [] } } : {}),
      };
    }
    let text = response.response;
    if (mode === "disallowed" && response.metadata.stopReason === "customStopTrigger") {
      const prefix = callPrefix(runtime);
      if (text.endsWith(prefix)) text = text.slice(0, -prefix.length);
      if (text.trim() === "" && step.attempt < LLAMA_STEP_ATTEMPTS) {
        return { problem: "the model tried to call a tool where tools are disabled", hideTools: true };
      }
      text = text.trimEnd();
    }
    const cutOff = request.options.reportCutOff === true ? { cutOff: cut } : {};
    return { result: { kind: "text", text, usage: null, ...cutOff } };
  }

  /** Runs a generation, mapping stops to `cancelled`/`context_size_exceeded` and failures to `generation_failed`. */
  async #generate(
    chat: LlamaChat,
    history: ChatItem[],
    guard: StepGuard,
    options: GenerateOptions,
  ): Promise<ChatResponse> {
    let response: ChatResponse;
    try {
      guard.starting();
      response = await chat.generateResponse(history, { signal: guard.signal, ...options });
    } catch (error) {
      guard.check();
      if (error instanceof BridgeError) throw error;
      throw BridgeError.of(
        "generation_failed",
        `node-llama-cpp failed: ${error instanceof Error ? error.message : String(error)}`,
      ).withCause(error);
    }
    guard.check();
    return response;
  }

  /**
   * A schema turn that may call tools first: generates with the tools offered and stops at the first text;
   * returns the calls, or null when the model started to answer (the answer then comes under the grammar).
   */
  async #toolsBeforeAnswer(
    chat: LlamaChat,
    history: ChatItem[],
    request: StepRequest,
    base: GenerateOptions,
    callable: StepRequest["tools"],
    guard: StepGuard,
  ): Promise<Interpretation | null> {
    const textStarted = new AbortController();
    const stop = () => textStarted.abort();
    if (guard.signal.aborted) stop();
    else guard.signal.addEventListener("abort", stop, { once: true });
    try {
      let response: ChatResponse;
      try {
        guard.starting();
        response = await chat.generateResponse(history, {
          ...base,
          signal: textStarted.signal,
          functions: chatFunctions(callable),
          documentFunctionParams: true,
          stopOnAbortSignal: true,
          onTextChunk: (text) => {
            if (text.trim() !== "") stop();
          },
        });
      } catch (error) {
        guard.check();
        throw error;
      }
      guard.check();
      if (response.functionCalls !== undefined && response.functionCalls.length > 0) {
        return this.#calls(response, request);
      }
      return null;
    } finally {
      guard.signal.removeEventListener("abort", stop);
    }
  }

  async #structured(
    runtime: LlamaRuntime,
    chat: LlamaChat,
    history: ChatItem[],
    request: StepRequest,
    base: GenerateOptions,
    guard: StepGuard,
  ): Promise<Interpretation> {
    const schema = request.responseSchema!;
    let grammar;
    try {
      grammar = await runtime.grammar(responseGrammarPlan(schema));
    } catch (error) {
      throw BridgeError.of(
        "invalid_schema",
        `The response schema cannot be turned into a grammar: ${
          error instanceof Error ? error.message : error
        }`,
      ).withCause(error);
    }
    let text = "";
    let last = "";
    const onPartial = request.stream ? request.onPartial : undefined;
    const response = await this.#generate(chat, history, guard, {
      ...base,
      grammar,
      ...(onPartial !== undefined
        ? {
          onTextChunk: (chunk: string) => {
            text += chunk;
            const partial = parsePartialJson(text);
            if (partial === undefined) return;
            const ordered = orderBySchema(partial, schema.jsonSchema);
            const shown = compactJson(ordered);
            if (shown === last) return;
            last = shown;
            onPartial(ordered);
          },
        }
        : {}),
    });
    const cut = response.metadata.stopReason === "maxTokens";
    const checked = checkStructured(response.response, schema.jsonSchema);
    if (!checked.ok && cut) {
      return {
        problem: `${checked.problem} (cut off at the token limit)`,
        cutOff: { text: response.response },
      };
    }
    if (!checked.ok) return { problem: checked.problem };
    const value: JsonValue = checked.value;
    this.#memory.rememberAnswer(JSON.stringify(value), response.response);
    const cutOff = request.options.reportCutOff === true ? { cutOff: cut } : {};
    return { result: { kind: "structured", value, text: compactJson(value), usage: null, ...cutOff } };
  }

  #calls(response: ChatResponse, request: StepRequest): Interpretation {
    const raw = response.functionCalls!.map((call, index) => ({
      index,
      id: newCallId(),
      name: call.functionName,
      arguments: JSON.stringify(call.params ?? {}),
    }));
    const checked = checkToolCalls(raw, request.tools);
    if (!checked.ok) return { problem: checked.problem };
    const calls: StepToolCall[] = checked.value;
    calls.forEach((call, index) => {
      if (call.nativeId !== undefined) {
        this.#memory.rememberCall(call.nativeId, response.functionCalls![index].raw);
      }
    });
    return { result: { kind: "toolCalls", calls, usage: null } };
  }

  /** Streams text snapshots when the step streams. */
  #textStreamer(request: StepRequest): ((chunk: string) => void) | undefined {
    const onText = request.onText;
    if (!request.stream || onText === undefined) return undefined;
    let text = "";
    return (chunk) => {
      if (chunk === "") return;
      text += chunk;
      onText(text);
    };
  }
}

/**
 * Creates the in-process GGUF backend (`kind: "llama"`, no history trimming). Nothing is loaded until the
 * first `availability()` or `step()`; the file is loaded once and shared by every instance (see `MAX_LLAMA_CONTEXTS`).
 *
 * @example
 * ```ts
 * import { createLlamaModel } from "@open-apple-models/bridge/engine";
 * const model = createLlamaModel({ path: "models/qwen2.5-1.5b-instruct-q4_k_m.gguf" });
 * const availability = await model.availability();
 * ```
 */
export function createLlamaModel(config: LlamaModelConfig): LanguageModel {
  return new LlamaBackend(config);
}
