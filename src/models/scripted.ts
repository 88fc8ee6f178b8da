/**
 * The scripted model (§10): a deterministic stand-in for the on-device model. Each inference plays the next
 * step of the script; when the steps run out, `fallback` (default `{"text": "(script exhausted)"}`) is used.
 * One script is shared by everything that uses the same model instance (turns, retries, summaries, barks).
 * @module
 */
import { BridgeError } from "../protocol/errors.ts";
import { compactJson, isJsonObject, type JsonObject, type JsonValue } from "../protocol/json.ts";
import { type ConversationEntry, isToolCallsEntry, segmentsText } from "../protocol/transcript.ts";
import {
  parseScript,
  parseScriptStep,
  type Script,
  type ScriptStep,
  scriptWarnings,
} from "../protocol/script_parse.ts";
export { parseScript, parseScriptStep, type Script, type ScriptStep, scriptWarnings };
import { compileValidator } from "../schema/validate.ts";
import { abortableSleep } from "../util/sleep.ts";
import { characters, endSentence, headCharacters, headUnits } from "../util/text.ts";
import { CutOffAnswer, type CutOffWritten, type CutToolCall } from "./cut_off.ts";
import { isBudgetRefused } from "./tool_budget.ts";
export { CutOffAnswer, type CutToolCall };
import type {
  LanguageModel,
  ModelAvailability,
  ResponseSchema,
  StepRequest,
  StepResult,
  StepToolCall,
} from "./language_model.ts";

/** Characters per token of the scripted model's token estimate (the agent's usage estimate uses the same). */
export const SCRIPTED_CHARS_PER_TOKEN = 4;

/**
 * `text` cut to what fits in `maxTokens` by the estimate of four characters (UTF-16 code units) a token, or
 * null when it fits whole. The cut never splits a surrogate pair, so the usage estimate of what is left is
 * exactly `maxTokens`; like a real model's cut, it may end inside an emoji sequence or before an accent.
 *
 * @example
 * ```ts
 * import { cutToTokens } from "./scripted.ts";
 * cutToTokens("The quick brown fox.", 3); // "The quick br"
 * cutToTokens("Hi.", 3); // null
 * ```
 */
export function cutToTokens(text: string, maxTokens: number): string | null {
  const max = maxTokens * SCRIPTED_CHARS_PER_TOKEN;
  return text.length <= max ? null : headUnits(text, max);
}

/**
 * The error of a structured answer or tool call that {@link ScriptedModel.tokenLimited} cut off at
 * `maxTokens` (the cut text `cut` leads the problem after `what`), holding what was written.
 */
function cutOffAnswer(what: string, maxTokens: number, cut: string, written: CutOffWritten): CutOffAnswer {
  const problem = `${what}: it was cut off at the token limit (${maxTokens} tokens): ${shorten(cut)}`;
  return CutOffAnswer.invalid(problem, { attempts: 1, written, usage: null });
}

/** The tool calls written in `length` characters of their names and arguments, one after another. */
function cutCalls(calls: Array<{ name: string; arguments: JsonObject }>, length: number): CutToolCall[] {
  const out: CutToolCall[] = [];
  let left = length;
  for (const call of calls) {
    if (left < call.name.length) break;
    left -= call.name.length;
    const args = compactJson(call.arguments);
    out.push({ name: call.name, argumentsText: args.slice(0, left) });
    if (left < args.length) break;
    left -= args.length;
  }
  return out;
}

/** Context size the scripted model reports. */
export const SCRIPTED_CONTEXT_SIZE = 8192;

/** The step played when the steps run out and the script has no `fallback`. */
const DEFAULT_FALLBACK: ScriptStep = Object.freeze({ text: "(script exhausted)" });

/**
 * The error of an answer the real model could never give (not JSON, or outside the turn's generation schema):
 * `generation_failed` worded like an OpenAI-compatible backend's invalid answer, with `data.problem`.
 */
function invalidAnswer(problem: string, hint = ""): BridgeError {
  const said = hint === "" ? problem : `${problem}; ${hint}`;
  return BridgeError.of("generation_failed", `${INVALID_PREFIX}${endSentence(said)}`, {
    attempts: 1,
    problem,
  });
}

/**
 * For an answer missing a required key: the keys of the step that the answer does not have (a decision step
 * written with the result's `optionID` for its `choice`), or "".
 */
function unknownKeysHint(value: JsonValue, schema: JsonObject, problem: string): string {
  if (!problem.startsWith("#: must have required property")) return "";
  const properties = schema.properties;
  if (!isJsonObject(value) || !isJsonObject(properties)) return "";
  const known = Object.keys(properties);
  const extra = Object.keys(value).filter((key) => !known.includes(key));
  if (extra.length === 0) return "";
  const names = extra.slice(0, 3).map((key) => `'${key}'`).join(", ");
  const which = extra.length === 1 ? "which is not a key" : "which are not keys";
  return `the step has ${names}, ${which} of the answer (its keys: ${known.join(", ")})`;
}

/** `text` cut to 120 characters for an error message. */
function shorten(text: string): string {
  if (text === "") return "(empty)";
  // Characters as seen: an emoji (with its skin tone) or an accented letter is never cut in two.
  return headCharacters(text, 120) === null ? text : `${headCharacters(text, 117)}...`;
}

/**
 * Checks a scripted structured answer against the turn's generation schema: what the on-device model's
 * constrained decoding enforces (types, enums, required keys, ranges, no extra keys). Constraints the model
 * only sees described (`pattern`, `minLength`, …) are not in that schema and are not checked.
 */
function checkAnswer(value: JsonValue, schema: ResponseSchema): void {
  // The generation schema's `$defs` are the bridge's: the problem names the place in the designer's terms.
  const problem = compileValidator(schema.generationSchema, { locateByValue: true })(value);
  if (problem !== null) {
    const hint = unknownKeysHint(value, schema.generationSchema, problem);
    throw invalidAnswer(`the answer does not match the response schema: ${problem}`, hint);
  }
}

/** Fails a structured answer `text` that does not fit in `limit` tokens (none: no limit is held to). */
function checkLength(text: string, limit: number | undefined): void {
  const cut = limit === undefined ? null : cutToTokens(text, limit);
  if (cut !== null) throw cutOffAnswer("the answer is not valid JSON", limit!, cut, { text: cut });
}

/** The invalid-answer problem of a failed step, or null. */
function problemOf(error: unknown): string | null {
  return error instanceof BridgeError && typeof error.data.problem === "string" ? error.data.problem : null;
}

const INVALID_PREFIX = "The model gave an invalid answer: ";

/** The problem as the invalid answer's message says it (with its hint, if any), for the errors that repeat it. */
function saidOf(error: unknown, problem: string): string {
  if (!(error instanceof BridgeError) || !error.message.startsWith(INVALID_PREFIX)) return problem;
  const said = error.message.slice(INVALID_PREFIX.length);
  return said.endsWith(".") && !problem.endsWith(".") ? said.slice(0, -1) : said;
}

function abortError(): BridgeError {
  return BridgeError.turnCancelled();
}

/**
 * Splits text into about `chunks` pieces of ceil(len/chunks) characters. Characters are counted as they are
 * seen (grapheme clusters), so a piece never ends inside an emoji sequence or before a combining accent.
 */
export function splitChunks(text: string, chunks: number): string[] {
  if (chunks <= 1 || text.length <= chunks) return [text];
  const chars = characters(text);
  if (chunks <= 1 || chars.length <= chunks) return [text];
  const size = Math.ceil(chars.length / chunks);
  const out: string[] = [];
  for (let i = 0; i < chars.length; i += size) out.push(chars.slice(i, i + size).join(""));
  return out;
}

/** Text of the latest prompt and the tool outputs of this turn after it, for templates. */
function templateContext(req: StepRequest): { prompt: string; outputs: string[] } {
  if (req.prompt !== "") return { prompt: req.prompt, outputs: [] };
  const history = req.history;
  let start = 0;
  let prompt = "";
  for (let i = history.length - 1; i >= 0; i--) {
    const entry = history[i];
    if (entry.role === "user") {
      prompt = segmentsText(entry.contents);
      start = i + 1;
      break;
    }
  }
  const outputs: string[] = [];
  for (let i = start; i < history.length; i++) {
    const entry = history[i];
    if (entry.role === "tool") outputs.push(segmentsText(entry.contents));
  }
  return { prompt, outputs };
}

/**
 * True when a tool (not `respond_directly`) ran in the turn of `req`: its history has an output since the
 * prompt. A call refused for the tool budget did not run (and does not stop a retry): the agent marks its
 * entry (tool_budget.ts), so a tool that ran and answered with the same words still counts.
 */
function toolRanThisTurn(req: StepRequest): boolean {
  if (req.prompt !== "") return false;
  const history = req.history;
  for (let i = history.length - 1; i >= 0; i--) {
    const entry = history[i];
    if (entry.role === "user") return false;
    if (
      entry.role === "tool" && entry.toolName !== "respond_directly" && !isBudgetRefused(entry)
    ) return true;
  }
  return false;
}

/**
 * A scripted model.
 *
 * @example
 * ```ts
 * import { ScriptedModel } from "@open-apple-models/bridge/engine";
 * const model = new ScriptedModel({ steps: [{ text: "Hmph." }] });
 * ```
 */
export class ScriptedModel implements LanguageModel {
  /** Model type name. */
  readonly kind: string = "scripted";
  /** Context window in tokens. */
  readonly contextSize: number = SCRIPTED_CONTEXT_SIZE;
  /** The scripted model never trims history. */
  readonly trimsHistory: boolean = false;
  readonly #script: Script;
  #next = 0;
  /**
   * The invalid answer of the last step played and that step's number (from 1), named when a retry then
   * finds the script exhausted or gives an invalid answer too: after such a retry it stays the first bad step
   * of the turn, the one to fix first.
   */
  #lastProblem: { problem: string; said: string; step: number } | null = null;
  /** Ids for tool calls the script leaves unnamed (made at the first tool-call step). */
  #callIds: CallIds | null = null;
  readonly #availability: ModelAvailability;
  #tokenLimited: LanguageModel | null = null;

  /** A model playing `script`; `variant` names it in availability. */
  constructor(script: Script, variant = "scripted") {
    this.#script = script;
    this.#availability = {
      available: true,
      contextSize: SCRIPTED_CONTEXT_SIZE,
      variant,
      supportedLanguages: [],
    };
  }

  /** Steps played so far (skipped ones included). */
  get played(): number {
    return this.#next;
  }

  /** Moves past the next `steps` steps without playing them (a resumed run continues where one stopped). */
  skip(steps: number): void {
    this.#next += Math.max(0, Math.floor(steps));
  }

  /** Always available. */
  availability(): Promise<ModelAvailability> {
    return Promise.resolve({ ...this.#availability });
  }

  /** Always available, known at once. */
  availabilityNow(): ModelAvailability {
    return { ...this.#availability };
  }

  /** Plays the next step. */
  step(req: StepRequest): Promise<StepResult> {
    return this.#step(req, undefined);
  }

  /**
   * Plays the next step, returning the result directly (no promise) unless the step has a `delayMs`;
   * failures are always a rejected promise. The agent prefers it for scripted models: a scripted turn then
   * runs to its first real wait without a promise per step.
   */
  stepNow(req: StepRequest): Promise<StepResult> | StepResult {
    return this.#stepNow(req, undefined);
  }

  /**
   * This model as `oam serve` plays it for OpenAI-style chat completions: the same script and the same place in
   * it, but each answer is held to the request's token limit (`max_completion_tokens`), as OpenAI's answers
   * are, at four characters a token (the usage estimate). A longer text is cut there (so text, usage and
   * `finish_reason: "length"` agree); a structured answer or tool call that does not fit fails with a
   * {@link CutOffAnswer} holding what was written. Everywhere else (the bridge protocol) a script plays its
   * steps whole whatever the limit, as the reference's scripted model does.
   *
   * @example
   * ```ts
   * import { ScriptedModel } from "@open-apple-models/bridge/engine";
   * const model = new ScriptedModel({ steps: [{ text: "The quick brown fox." }] });
   * const served = model.tokenLimited(); // plays the same steps, cut at each request's limit
   * ```
   */
  tokenLimited(): LanguageModel {
    return this.#tokenLimited ??= {
      kind: this.kind,
      contextSize: this.contextSize,
      trimsHistory: this.trimsHistory,
      availability: () => this.availability(),
      availabilityNow: () => this.availabilityNow(),
      step: (req) => this.#step(req, req.options.maximumResponseTokens),
    };
  }

  /** {@link #stepNow} as a promise. */
  #step(req: StepRequest, limit: number | undefined): Promise<StepResult> {
    const result = this.#stepNow(req, limit);
    return result instanceof Promise ? result : Promise.resolve(result);
  }

  /** Plays the next step, its answers held to `limit` tokens (undefined: played whole). */
  #stepNow(req: StepRequest, limit: number | undefined): Promise<StepResult> | StepResult {
    const index = this.#next;
    const step = index < this.#script.steps.length
      ? this.#script.steps[index]
      : (this.#script.fallback ?? DEFAULT_FALLBACK);
    this.#next++;
    if (req.signal.aborted) return Promise.reject(abortError());
    if (step.delayMs) {
      return abortableSleep(step.delayMs, req.signal).then(() => this.#playChecked(step, req, index, limit));
    }
    try {
      return this.#playChecked(step, req, index, limit);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** {@link #play}, remembering whether the step (`index` in the script) gave an invalid answer. */
  #playChecked(step: ScriptStep, req: StepRequest, index: number, limit: number | undefined): StepResult {
    try {
      const result = this.#play(step, req, limit);
      this.#lastProblem = null;
      return result;
    } catch (error) {
      const problem = problemOf(error);
      const first = this.#lastProblem;
      if (problem === null) this.#lastProblem = null;
      else if (step !== DEFAULT_FALLBACK) {
        // A retry of an invalid step that is invalid too: the step to fix first is the turn's first bad one.
        if (first !== null && (req.attempt ?? 1) > 1 && !(error instanceof CutOffAnswer)) {
          throw this.#retryInvalidToo(
            first,
            { step: index + 1, said: saidOf(error, problem) },
            error as BridgeError,
          );
        }
        // The exhausted script's error repeats the problem before it: that step stays the one named.
        this.#lastProblem = { problem, said: saidOf(error, problem), step: index + 1 };
        // The error names its step, as a retry's error does: no retry follows after a tool call
        // (retry_policy.ts) or when the turn is tried once, and a retry's error replaces this one. A cut-off
        // answer stays as the token limit's error words it.
        if (!(error instanceof CutOffAnswer) && error instanceof BridgeError) {
          throw this.#namingStep(error, { index, afterToolCall: toolRanThisTurn(req) });
        }
      }
      throw error;
    }
  }

  /**
   * Invalid answer `error` of the step at `index` (past the steps: the fallback), with that step named; played
   * after a tool call of its turn, also why no retry plays the next one.
   */
  #namingStep(
    error: BridgeError,
    { index, afterToolCall }: { index: number; afterToolCall: boolean },
  ): BridgeError {
    const n = this.#script.steps.length;
    const which = index < n
      ? `step ${index + 1} of ${n}`
      : `the script's fallback, played after its ${n} steps`;
    const why = afterToolCall
      ? ", after a tool call: a turn is not retried once it called a tool, so fix that step"
      : "";
    const message = `${endSentence(error.message)} It was ${which}${why}.`;
    return new BridgeError(error.code, error.dataCode, message, error.data).withCause(error);
  }

  /**
   * The error of a retry (step `step`, with `problem`) of an invalid step `first` that is invalid too: it leads
   * with the first bad step's answer and names that step, as the script's author fixes it first; `data.problem`
   * is that step's, so what reads it (an NPC's text-step advice) speaks of the same step.
   */
  #retryInvalidToo(
    first: { problem: string; said: string; step: number },
    { step, said }: { step: number; said: string },
    error: BridgeError,
  ): BridgeError {
    const n = this.#script.steps.length;
    return BridgeError.of(
      "generation_failed",
      `${INVALID_PREFIX}${endSentence(first.said)} It was step ${first.step} of ${n}, and ` +
        `its retry, step ${step}, was invalid too: ${endSentence(said)} Fix step ${first.step} first.`,
      { ...error.data, problem: first.problem },
    );
  }

  /**
   * The error of a structured turn that finds the script exhausted. After an invalid answer it leads with
   * that answer, as the invalid answer's own error does, and names the step to fix; else it says the script
   * ran out.
   */
  #exhausted(): BridgeError {
    const n = this.#script.steps.length;
    const last = this.#lastProblem;
    if (last === null) {
      return BridgeError.of(
        "generation_failed",
        `Script exhausted: all ${n === 1 ? "1 step was" : `${n} steps were`} played and this turn needs a ` +
          "structured answer; add steps or a 'fallback' step.",
      );
    }
    return BridgeError.of(
      "generation_failed",
      `${INVALID_PREFIX}${endSentence(last.said)} ` +
        `It was step ${last.step} of ${n}, and no step is left for its retry: fix that step, or add a step ` +
        "after it for the retry to play.",
      { problem: last.problem },
    );
  }

  #play(step: ScriptStep, req: StepRequest, limit: number | undefined): StepResult {
    if ("error" in step) {
      throw BridgeError.of(step.error as never, step.message ?? `Scripted ${step.error}.`);
    }
    if ("toolCalls" in step) {
      if (limit !== undefined) {
        // What a real model writes for the calls: each name and its arguments.
        const written = step.toolCalls.map((c) => c.name + compactJson(c.arguments)).join("");
        const cut = cutToTokens(written, limit);
        if (cut !== null) {
          throw cutOffAnswer("the model did not complete its tool call", limit, cut, {
            toolCalls: cutCalls(step.toolCalls, cut.length),
          });
        }
      }
      const ids = this.#callIds ??= { taken: callIdsIn(req.history), n: 0 };
      for (const c of step.toolCalls) if (c.id !== undefined) ids.taken.add(c.id);
      const calls: StepToolCall[] = step.toolCalls.map((c) => ({
        name: c.name,
        arguments: c.arguments,
        nativeId: c.id ?? nextCallId(ids),
      }));
      return { kind: "toolCalls", calls, usage: { inputTokens: 0, cachedInputTokens: 0, outputTokens: 8 } };
    }
    if ("json" in step) {
      const text = compactJson(step.json);
      if (req.responseSchema) {
        checkLength(text, limit);
        checkAnswer(step.json, req.responseSchema);
        req.onPartial?.(step.json);
        return { kind: "structured", value: step.json, text, usage: null };
      }
      return this.#text(text, 1, req, limit);
    }
    let text: string;
    let chunks = 3;
    if ("template" in step) {
      const ctx = templateContext(req);
      text = step.template
        .replaceAll("{toolOutputs}", ctx.outputs.join("\n"))
        .replaceAll("{toolOutput}", ctx.outputs.length > 0 ? ctx.outputs[ctx.outputs.length - 1] : "")
        .replaceAll("{prompt}", ctx.prompt);
    } else {
      text = step.text;
      chunks = step.chunks ?? 3;
    }
    if (req.responseSchema) {
      if (step === DEFAULT_FALLBACK) throw this.#exhausted();
      // A text step in a schema turn: the text must be the JSON answer.
      checkLength(text, limit);
      let value: JsonValue;
      try {
        value = JSON.parse(text);
      } catch {
        throw invalidAnswer(`the answer is not valid JSON: ${shorten(text)}`);
      }
      checkAnswer(value, req.responseSchema);
      req.onPartial?.(value);
      return { kind: "structured", value, text, usage: null };
    }
    return this.#text(text, chunks, req, limit);
  }

  /**
   * A text answer, streamed in about `chunks` pieces; cut at `limit` tokens when it does not fit (its usage,
   * estimated by the agent at four characters a token, is then the limit).
   */
  #text(whole: string, chunks: number, req: StepRequest, limit: number | undefined): StepResult {
    const text = (limit === undefined ? null : cutToTokens(whole, limit)) ?? whole;
    const usage = null;
    const onText = req.onText;
    if (onText === undefined) return { kind: "text", text, usage }; // nobody streams
    let snapshot = "";
    for (const piece of splitChunks(text, chunks)) {
      if (req.signal.aborted) throw abortError();
      snapshot += piece;
      onText(snapshot);
    }
    return { kind: "text", text, usage };
  }
}

/**
 * The ids of scripted tool calls without one: `scripted_call_1`, `scripted_call_2`, … in the order this model
 * plays them, skipping the ids it cannot use (`taken`: those of the conversation it first saw, a restored
 * one, and those the script names). A script gives the same ids on every run, and a conversation no id twice.
 */
interface CallIds {
  taken: Set<string>;
  n: number;
}

/** The tool-call ids of a conversation (read once per model, at its first tool-call step). */
function callIdsIn(history: readonly ConversationEntry[]): Set<string> {
  const ids = new Set<string>();
  for (const entry of history) {
    if (isToolCallsEntry(entry)) { for (const call of entry.toolCalls) ids.add(call.id); }
  }
  return ids;
}

/** The next free `scripted_call_<n>` (the ones made before are never made again: n only grows). */
function nextCallId(ids: CallIds): string {
  let id: string;
  do id = `scripted_call_${++ids.n}`; while (ids.taken.has(id));
  return id;
}
