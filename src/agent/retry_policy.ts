/**
 * The retry policy of a turn (reference-behavior §2.6 "Retry", plus one rule of our own): a transient failure
 * (`generation_failed`, `rate_limited` without a far `retryAfter`) is tried again up to `maxAttempts`, never
 * once a tool call was admitted. An attempt never repeats the request that just gave an invalid answer:
 *
 * - an invalid answer the backend already retried itself (`data.attempts` > 1: the OpenAI-compatible and
 *   GGUF backends feed the problem back or sample differently) fails the turn at once;
 * - an answer the token limit cut off (a `CutOffAnswer`, reported when the options ask for it) fails the
 *   turn at once: the same limit would cut it off again;
 * - any other invalid answer (`data.problem`) is retried with different sampling ({@link variedOptions});
 * - other transient failures (no answer came back: a dropped connection, a rate limit) are retried as they
 *   were.
 * @module
 */
import type { BridgeError } from "../protocol/errors.ts";
import { CutOffAnswer } from "../models/cut_off.ts";
import type { GenerationOptions } from "../models/language_model.ts";

/** Base delay before the first retry (ms); doubles each attempt. */
export const RETRY_BASE_DELAY_MS = 300;
/** Longest delay a timer supports (ms). */
const MAX_TIMER_MS = 2 ** 31 - 1;
/** Temperature of a retry after an invalid greedy answer. */
export const RETRY_TEMPERATURE = 0.7;

/** What to do after a failed attempt. */
export type RetryDecision =
  | { retry: false }
  | { retry: true; delayMs: number; vary: boolean };

/** True when the model answered, but not validly (the backends and the scripted model set `data.problem`). */
export function isInvalidAnswer(error: BridgeError): boolean {
  return error.dataCode === "generation_failed" && typeof error.data.problem === "string";
}

/**
 * Decides about attempt `turn.attempt` (from 1) that failed with `error`; `turn.admitted` is true once a tool
 * call of the attempt was admitted.
 */
export function retryDecision(
  error: BridgeError,
  turn: { attempt: number; maxAttempts: number; admitted: boolean },
): RetryDecision {
  const { attempt, maxAttempts, admitted } = turn;
  // The same token limit would cut the answer off again.
  if (attempt >= maxAttempts || admitted || error instanceof CutOffAnswer) return { retry: false };
  let minDelay = 0;
  let vary = false;
  if (error.dataCode === "generation_failed") {
    if (isInvalidAnswer(error)) {
      const attempts = error.data.attempts;
      if (typeof attempts === "number" && attempts > 1) return { retry: false };
      vary = true;
    }
  } else if (error.dataCode === "rate_limited") {
    const after = typeof error.data.retryAfterSeconds === "number" ? error.data.retryAfterSeconds : undefined;
    if (after !== undefined && after >= 5) return { retry: false };
    minDelay = (after ?? 0) * 1000;
  } else return { retry: false };
  // Capped to what a timer can wait (a longer delay would fire at once).
  const delayMs = Math.min(Math.max(RETRY_BASE_DELAY_MS * 2 ** (attempt - 1), minDelay), MAX_TIMER_MS);
  return { retry: true, delayMs, vary };
}

/**
 * Generation options for attempt `attempt` (> 1) after an invalid answer: greedy or unset sampling becomes
 * temperature {@link RETRY_TEMPERATURE} with a seed derived from the attempt; seeded sampling gets another
 * seed. So the retried request always differs from the one that failed.
 */
export function variedOptions(options: GenerationOptions, attempt: number): GenerationOptions {
  const seed = attempt * 7919;
  const sampling = options.sampling;
  if (sampling === undefined || sampling.mode === "greedy") {
    return {
      ...options,
      temperature: Math.max(options.temperature ?? 0, RETRY_TEMPERATURE),
      sampling: { mode: "topP", p: 0.95, seed },
    };
  }
  return {
    ...options,
    temperature: Math.max(options.temperature ?? 0, RETRY_TEMPERATURE),
    sampling: { ...sampling, seed: (sampling.seed ?? 0) + seed },
  };
}
