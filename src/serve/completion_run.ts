/**
 * Runs a {@link CompletionPlan} as one turn of a fresh {@link Agent} and turns what the agent does into
 * completion events: content (or a refusal, or tool calls), then exactly one `finished` — or one failure.
 *
 * Client tools are client tools of the agent: when the model calls them, the run reports the calls (in the
 * order the model made them, with fresh `call_…` ids) and cancels the turn; the client executes them and
 * sends the results in its next request. Server tools run in-process and never surface.
 * @module
 */
import { Agent } from "../agent/agent.ts";
import { historyLength } from "../agent/entry_text.ts";
import type { AgentEvent, ToolCallInfo, ToolOutcome, TurnResult, TurnSink } from "../agent/types.ts";
import { toBridgeError } from "../protocol/errors.ts";
import { compactJson } from "../protocol/json.ts";
import { CutOffAnswer } from "../models/cut_off.ts";
import { compileValidator } from "../schema/validate.ts";
import { newCallId } from "../util/ids.ts";
import type { CompletionToolCall, CompletionUsage, FinishReason } from "./completion_encoder.ts";
import type { CompletionPlan } from "./completion_plan.ts";
import { extractJsonObject } from "./json_object.ts";
import { fromAgentError, OpenAIError } from "./openai_error.ts";
import { JsonAnswerStream } from "./json_stream.ts";
import { StopFilter } from "./stop_filter.ts";
import { headUnits } from "../util/text.ts";

/** What a completion produces, in order. */
export type CompletionEvent =
  | { type: "content"; text: string }
  | { type: "refusal"; text: string }
  | { type: "toolCalls"; calls: CompletionToolCall[] }
  | { type: "finished"; reason: FinishReason; usage: CompletionUsage };

/** Receives a run's events, then either one `finished` event or one `fail`. */
export interface CompletionSink {
  /** Content, refusal and tool-call events, then `finished`. */
  event(event: CompletionEvent): void;
  /** The completion failed (instead of `finished`). */
  fail(error: OpenAIError): void;
}

/**
 * One running completion.
 *
 * @example
 * ```ts
 * import { CompletionRun } from "./completion_run.ts";
 * import { planCompletion } from "./completion_plan.ts";
 * import { parseChatRequest } from "./chat_request.ts";
 * import { resolveServeConfiguration } from "./server_config.ts";
 * import { ScriptedModel } from "../models/scripted.ts";
 * const config = resolveServeConfiguration({ models: new Map([["system", new ScriptedModel({ steps: [{ text: "Hi!" }] })]]) });
 * const plan = planCompletion(parseChatRequest({ messages: [{ role: "user", content: "Hello" }] }), config);
 * const events: unknown[] = [];
 * await new CompletionRun(plan, { event: (e) => events.push(e), fail: (e) => events.push(e) }).run();
 * // events: [{type: "content", text: "Hi!"}, {type: "finished", reason: "stop", usage: {…}}]
 * ```
 */
export class CompletionRun {
  readonly #plan: CompletionPlan;
  readonly #sink: CompletionSink;
  readonly #controller = new AbortController();
  #finished = false;
  #filter: StopFilter;
  #streamedAny = false;
  /** A streamed JSON answer (json_schema, or json_object under a schema): what was sent of it. */
  readonly #json: JsonAnswerStream | null;
  #calls: ToolCallInfo[] = [];
  #callsScheduled = false;

  /** A run of `plan` reporting to `sink`. */
  constructor(plan: CompletionPlan, sink: CompletionSink) {
    this.#plan = plan;
    this.#sink = sink;
    this.#filter = new StopFilter(plan.stop);
    const schema = plan.format.kind === "text" ? undefined : plan.format.schema;
    this.#json = plan.stream && schema !== undefined ? new JsonAnswerStream(schema.jsonSchema) : null;
  }

  /** True once the completion has its outcome (the turn may still be winding down). */
  get finished(): boolean {
    return this.#finished;
  }

  /** Aborted when the turn must stop. */
  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /** Runs the turn; resolves when it has ended (also after a cancellation), never rejects. */
  async run(): Promise<void> {
    const plan = this.#plan;
    let result: TurnResult;
    try {
      const agent = new Agent({
        model: plan.model,
        instructions: plan.instructions,
        tools: plan.tools,
        entries: plan.conversation.history,
        settings: { options: plan.options, trimHistory: false, maxAttempts: plan.maxAttempts },
      });
      const sink: TurnSink = {
        event: (event) => this.#onEvent(event),
        callClientTool: (call, signal) => this.#collect(call, signal),
      };
      result = await agent.runTurn(
        {
          prompt: plan.conversation.prompt,
          schema: plan.format.kind === "text" ? null : plan.format.schema ?? null,
          policy: plan.policy,
          stream: plan.stream,
        },
        sink,
        this.#controller.signal,
      );
    } catch (error) {
      this.#failed(error);
      return;
    }
    this.#complete(result);
  }

  /**
   * Ends the completion with `error` (unless it has its outcome already) and cancels the turn: a timeout, a
   * client that went away, the server stopping.
   */
  cancel(error: OpenAIError): void {
    if (this.#finished) {
      this.#controller.abort();
      return;
    }
    this.#finished = true;
    this.#controller.abort();
    this.#sink.fail(error);
  }

  #onEvent(event: AgentEvent): void {
    if (this.#finished) return;
    if (event.type === "partial" && this.#json !== null) {
      const delta = this.#json.update(event.value);
      if (delta !== "") this.#sink.event({ type: "content", text: delta });
      return;
    }
    if (event.type !== "text" || this.#plan.format.kind !== "text") return;
    let released = this.#filter.update(event.text);
    if (released === null) {
      // The model restarted its answer (a retried attempt).
      if (this.#streamedAny && this.#plan.stream) {
        this.cancel(
          OpenAIError.server(
            "The model restarted its answer after a transient failure; retry the request.",
            "generation_restarted",
          ),
        );
        return;
      }
      this.#filter = new StopFilter(this.#plan.stop);
      released = this.#filter.update(event.text);
    }
    if (this.#plan.stream && released) {
      this.#streamedAny = true;
      this.#sink.event({ type: "content", text: released });
    }
    if (this.#filter.stopped) {
      if (!this.#plan.stream) this.#sink.event({ type: "content", text: this.#filter.released });
      this.#end("stop", this.#estimate(this.#filter.released));
    }
  }

  #collect(call: ToolCallInfo, signal: AbortSignal): Promise<ToolOutcome> {
    if (!this.#finished) {
      this.#calls.push(call);
      if (!this.#callsScheduled) {
        this.#callsScheduled = true;
        // The calls of one model step all start in the same synchronous pass: report them together.
        queueMicrotask(() => this.#finishWithToolCalls());
      }
    }
    // Never answered: the turn is cancelled as soon as the calls are reported.
    return new Promise((resolve) => {
      const done = () => resolve({ output: "The tool call was handed to the client.", isError: true });
      if (signal.aborted) done();
      else signal.addEventListener("abort", done, { once: true });
    });
  }

  #finishWithToolCalls(): void {
    if (this.#finished || this.#calls.length === 0) return;
    const calls = this.#plan.parallelToolCalls ? this.#calls : [this.#calls[0]];
    const text = calls.map((c) => c.name + compactJson(c.arguments)).join("");
    this.#sink.event({ type: "toolCalls", calls });
    this.#end("tool_calls", this.#estimate(text));
  }

  #complete(result: TurnResult): void {
    if (this.#finished) return;
    const plan = this.#plan;
    const usage: CompletionUsage = {
      promptTokens: result.usage.inputTokens,
      completionTokens: result.usage.outputTokens,
      cachedTokens: result.usage.cachedInputTokens,
    };
    // The model's word where it gave one, else the usage: an answer that used up the limit was cut there.
    let reason: FinishReason = "stop";
    if (result.cutOff !== undefined) reason = result.cutOff ? "length" : "stop";
    else if (plan.maxTokens !== null && usage.completionTokens >= plan.maxTokens) reason = "length";
    const format = plan.format;
    if (format.kind === "text") {
      if (plan.stream) {
        const rest = this.#filter.finish(result.text);
        if (rest === null) {
          this.cancel(
            OpenAIError.server(
              "The model restarted its answer after a transient failure; retry the request.",
              "generation_restarted",
            ),
          );
          return;
        }
        if (rest !== "") this.#sink.event({ type: "content", text: rest });
      } else {
        const final = new StopFilter(plan.stop);
        final.finish(result.text);
        this.#sink.event({ type: "content", text: final.released });
      }
    } else if (format.kind === "json_schema") {
      const problem = compileValidator(format.schema.jsonSchema)(result.structured ?? null);
      if (problem !== null) {
        this.cancel(
          OpenAIError.server(
            `The model's answer does not match the response_format schema (${problem}). Output was: ${
              headUnits(result.text, 200)
            }`,
            "invalid_json_output",
          ),
        );
        return;
      }
      if (!this.#jsonContent(result.text)) return;
    } else if (format.schema !== undefined) {
      // Generated under the any-object schema, and checked against it: the object, as compact JSON.
      if (!this.#jsonContent(result.text)) return;
    } else {
      const json = extractJsonObject(result.text);
      if (json === null && reason === "length") {
        // Cut off at the token limit: what was written, as OpenAI sends it (not valid JSON).
        this.#sink.event({ type: "content", text: result.text });
      } else if (json === null) {
        this.cancel(
          OpenAIError.server(
            `The model did not produce a valid JSON object. Consider response_format json_schema, which constrains generation. Output was: ${
              headUnits(result.text, 200)
            }`,
            "invalid_json_output",
          ),
        );
        return;
      } else this.#sink.event({ type: "content", text: json });
    }
    this.#end(reason, usage);
  }

  /**
   * A JSON answer's content: whole, or the rest of what was streamed. False when the stream sent a start the
   * answer does not have (a retried attempt wrote something else): the completion then failed.
   */
  #jsonContent(text: string): boolean {
    if (this.#json === null) {
      this.#sink.event({ type: "content", text });
      return true;
    }
    const rest = this.#json.finish(text);
    if (rest === null) {
      this.cancel(
        OpenAIError.server(
          "The model's answer changed after part of it was streamed (an invalid answer was generated again); " +
            "retry the request.",
          "generation_restarted",
        ),
      );
      return false;
    }
    if (rest !== "") this.#sink.event({ type: "content", text: rest });
    return true;
  }

  #failed(error: unknown): void {
    if (this.#finished) return;
    const e = toBridgeError(error);
    if (e.dataCode === "refusal") {
      this.#sink.event({ type: "refusal", text: e.message });
      this.#end("stop", this.#estimate(e.message));
      return;
    }
    if (e instanceof CutOffAnswer) {
      // An answer the token limit cut off: what was written, with finish_reason length (as OpenAI).
      this.#cutOff(e);
      return;
    }
    if (e.dataCode === "guardrail_violation" && this.#filter.released !== "") {
      // Blocked after part of the answer was produced: what was produced stands, cut off by the filter.
      if (!this.#plan.stream) this.#sink.event({ type: "content", text: this.#filter.released });
      this.#end("content_filter", this.#estimate(this.#filter.released));
      return;
    }
    this.#finished = true;
    this.#controller.abort();
    this.#sink.fail(fromAgentError(e));
  }

  /** Ends with what a cut-off answer wrote: its text, or its tool calls (arguments cut) with fresh ids. */
  #cutOff(e: CutOffAnswer): void {
    const written = e.written;
    // The backend's count, else the estimate: the model wrote up to the limit.
    const usage: CompletionUsage = e.usage === null
      ? { ...this.#estimate(""), completionTokens: this.#plan.maxTokens ?? 0 }
      : {
        promptTokens: e.usage.inputTokens,
        completionTokens: e.usage.outputTokens,
        cachedTokens: e.usage.cachedInputTokens,
      };
    if ("text" in written) {
      // Streamed JSON continues from what was sent: the stream then ends as the model's text did.
      const text = this.#json === null ? written.text : this.#json.cut(written.text);
      if (this.#json === null || text !== "") this.#sink.event({ type: "content", text });
    } else {
      // The server's own tools never surface, cut or not.
      const all = written.toolCalls.filter((c) => this.#plan.clientToolNames.has(c.name))
        .map((c) => ({ id: newCallId(), ...c }));
      const calls = this.#plan.parallelToolCalls ? all : all.slice(0, 1);
      if (calls.length > 0) this.#sink.event({ type: "toolCalls", calls });
    }
    this.#end("length", usage);
  }

  #end(reason: FinishReason, usage: CompletionUsage): void {
    if (this.#finished) return;
    this.#finished = true;
    // Calls the client will execute must not also run here: cancelling the turn discards them.
    this.#controller.abort();
    this.#sink.event({ type: "finished", reason, usage });
  }

  /** Usage estimate (about four characters per token) for completions that end without the agent's usage. */
  #estimate(completionText: string): CompletionUsage {
    const plan = this.#plan;
    const promptChars = (plan.instructions ?? "").length + historyLength(plan.conversation.history) +
      plan.conversation.prompt.length;
    return {
      promptTokens: Math.ceil(promptChars / 4),
      completionTokens: Math.ceil(completionText.length / 4),
      cachedTokens: 0,
    };
  }
}
