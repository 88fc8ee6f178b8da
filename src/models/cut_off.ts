/**
 * An answer the token limit cut off: a structured answer or tool call that stopped at
 * `maximumResponseTokens` before its JSON was complete. A backend reports one as a {@link CutOffAnswer} only
 * when the step's options ask for it (`GenerationOptions.reportCutOff`, set by `oam serve`, which
 * answers with what was written as OpenAI does: HTTP 200, `finish_reason: "length"`, the JSON cut off);
 * everywhere else a cut answer is an invalid answer like any other.
 * @module
 */
import { BridgeError } from "../protocol/errors.ts";
import type { StepUsage } from "./language_model.ts";
import { endSentence } from "../util/text.ts";

/**
 * A tool call as far as the model wrote it before the token limit: its name, and its arguments' text.
 *
 * @example
 * ```ts
 * import type { CutToolCall } from "@open-apple-models/bridge/engine";
 * const call: CutToolCall = { name: "get_weather", argumentsText: '{"city": "Os' };
 * ```
 */
export interface CutToolCall {
  /** Function name. */
  name: string;
  /** The start of the arguments' JSON (not valid JSON; `""` when the cut came right after the name). */
  argumentsText: string;
}

/**
 * What the model wrote before the cut: the answer's text, or the tool calls whose names it finished.
 *
 * @example
 * ```ts
 * import type { CutOffWritten } from "@open-apple-models/bridge/engine";
 * const json: CutOffWritten = { text: '{"city": "Pa' };
 * const calls: CutOffWritten = { toolCalls: [{ name: "get_weather", argumentsText: "" }] };
 * ```
 */
export type CutOffWritten = { text: string } | { toolCalls: CutToolCall[] };

/**
 * The invalid answer of a step the token limit cut off (`-32012 generation_failed` with `data.problem`, like
 * any invalid answer), holding what was written before the cut and the step's usage when known. The agent
 * never retries it: the same limit would cut the answer again.
 *
 * @example
 * ```ts
 * import { BridgeError, CutOffAnswer } from "@open-apple-models/bridge/engine";
 * const error = BridgeError.of("generation_failed", "The model gave an invalid answer: cut off.", {
 *   problem: "cut off",
 * });
 * const cut = new CutOffAnswer(error, { text: '{"city": "Pa' }, null);
 * cut.dataCode; // "generation_failed"
 * ```
 */
export class CutOffAnswer extends BridgeError {
  /** What the model wrote before the cut. */
  readonly written: CutOffWritten;
  /** Tokens the step used (all its attempts), or null when the backend does not know. */
  readonly usage: StepUsage | null;

  /** `error`'s code, message and data, with what was written and the usage. */
  constructor(error: BridgeError, written: CutOffWritten, usage: StepUsage | null) {
    super(error.code, error.dataCode, error.message, error.data);
    this.written = written;
    this.usage = usage;
  }

  /**
   * The cut-off answer as a backend reports it: `generation_failed` "The model gave an invalid answer:
   * <problem>." with `data.attempts` and `data.problem`, like any invalid answer, holding what was written.
   *
   * @example
   * ```ts
   * import { CutOffAnswer } from "@open-apple-models/bridge/engine";
   * const cut = CutOffAnswer.invalid("the JSON was cut off", {
   *   attempts: 1,
   *   written: { text: '{"city": "Pa' },
   *   usage: null,
   * });
   * cut.message; // "The model gave an invalid answer: the JSON was cut off."
   * ```
   */
  static invalid(
    problem: string,
    cut: { attempts: number; written: CutOffWritten; usage: StepUsage | null },
  ): CutOffAnswer {
    const error = BridgeError.of(
      "generation_failed",
      `The model gave an invalid answer: ${endSentence(problem)}`,
      {
        attempts: cut.attempts,
        problem,
      },
    );
    return new CutOffAnswer(error, cut.written, cut.usage);
  }
}
