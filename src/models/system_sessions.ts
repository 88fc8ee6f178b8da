/**
 * Which live native session a system-model step may continue (ffi/README.md, "Native sessions").
 *
 * The plugin keeps the `LanguageModelSession` of a step that ended with text or structured output (and had a
 * non-empty prompt) under a key. Its transcript then holds the step's history, the prompt and the answer. The
 * next step continues that session only when its history is exactly that transcript: the same instructions
 * and tools, the earlier history unchanged (same entries, same ids), then the prompt entry and the answer
 * entry with the same text. Anything else (an edited or trimmed history, other instructions or tools, a
 * rewritten answer) rebuilds a session from the full history, which every request carries anyway.
 *
 * A record is taken out of the table when a step claims it, so two concurrent steps never share a session.
 * @module
 */
import type { JsonObject } from "../protocol/json.ts";
import type { ConversationEntry } from "../protocol/transcript.ts";
import type { StepRequest, StepResult } from "./language_model.ts";

/** How many live sessions are remembered per plugin handle (the plugin's default capacity too). */
export const NATIVE_SESSION_CAPACITY = 8;

/** What a step asks of the plugin: `{"native": {"key", "continue"}}`. */
export interface NativeClaim {
  /** The session key (`n1`, `n2`, …, unique per plugin handle). */
  key: string;
  /** True when the history extends the live session's transcript exactly. */
  continue: boolean;
}

/**
 * The plugin's report in a step result: `result.native`.
 *
 * @example
 * ```ts
 * import type { NativeReport } from "@open-apple-models/bridge/engine";
 * const continued: NativeReport = {
 *   key: "n1",
 *   rebuilt: false,
 *   reason: "continued",
 *   evaluatedEntries: 1,
 *   kept: true,
 * };
 * ```
 */
export interface NativeReport {
  /** The session key the plugin used. */
  key: string;
  /** True when the plugin built a new session from the full history. */
  rebuilt: boolean;
  /** `continued`, `new` (not asked to continue), `missing` (evicted or never kept), `changed`. */
  reason: string;
  /** Transcript entries the model had to take in that the live session did not already hold. */
  evaluatedEntries: number;
  /** True when the plugin kept the session for a later step. */
  kept: boolean;
}

/**
 * What a step of the system model did with native sessions (for tests and benchmarks).
 *
 * @example
 * ```ts
 * import { createSystemModel, type NativeStepInfo } from "@open-apple-models/bridge/engine";
 * const steps: NativeStepInfo[] = [];
 * const model = createSystemModel({ onNativeStep: (info) => steps.push(info) });
 * // After each step on the on-device model: { requested: true, rebuilt: false, reason: "continued", … }
 * ```
 */
export interface NativeStepInfo extends NativeReport {
  /** Whether the bridge asked to continue a live session. */
  requested: boolean;
}

interface LiveRecord {
  signature: string;
  /** JSON text of the history the step was sent with (the prefix the next history must repeat). */
  historyText: string;
  historyLength: number;
  prompt: string;
  schema: boolean;
  /** The answer: text, or the compact JSON text of the structured value. */
  answer: string;
  structured: boolean;
}

/** The instructions and tools a session is built with, as one comparable string. */
export function sessionSignature(request: Pick<StepRequest, "instructions" | "tools">): string {
  return JSON.stringify([
    request.instructions,
    request.tools.map((t) => [t.name, t.description, t.parameters]),
  ]);
}

/** Reads `result.native` from a step result payload; null when absent or malformed. */
export function parseNativeReport(raw: unknown): NativeReport | null {
  if (typeof raw !== "object" || raw === null) return null;
  const native = (raw as Record<string, unknown>).native;
  if (typeof native !== "object" || native === null || Array.isArray(native)) return null;
  const n = native as Record<string, unknown>;
  if (
    typeof n.key !== "string" || typeof n.rebuilt !== "boolean" || typeof n.kept !== "boolean" ||
    typeof n.evaluatedEntries !== "number" || !Number.isInteger(n.evaluatedEntries) || n.evaluatedEntries < 0
  ) return null;
  return {
    key: n.key,
    rebuilt: n.rebuilt,
    reason: typeof n.reason === "string" ? n.reason : n.rebuilt ? "new" : "continued",
    evaluatedEntries: n.evaluatedEntries,
    kept: n.kept,
  };
}

function isPromptEntry(entry: ConversationEntry, prompt: string, schema: boolean): boolean {
  if (entry.role !== "user") return false;
  const contents = entry.contents;
  if (contents.length !== 1 || contents[0].type !== "text" || contents[0].text !== prompt) return false;
  return schema === (entry.responseFormat !== undefined);
}

function isAnswerEntry(entry: ConversationEntry, record: LiveRecord): boolean {
  if (entry.role !== "response" || Array.isArray((entry as { toolCalls?: unknown }).toolCalls)) return false;
  const contents = entry.contents;
  if (contents.length !== 1) return false;
  const segment = contents[0];
  if (record.structured) {
    return segment.type === "structure" && JSON.stringify(segment.structure.content) === record.answer;
  }
  return segment.type === "text" && segment.text === record.answer;
}

/** The live native sessions of one plugin handle, as far as the bridge knows them. */
export class NativeSessions {
  readonly #capacity: number;
  /** Insertion order is recency: the first record is the least recently used. */
  readonly #live = new Map<string, LiveRecord>();
  #next = 1;

  /** Creates an empty table. */
  constructor(capacity = NATIVE_SESSION_CAPACITY) {
    this.#capacity = Math.max(0, Math.floor(capacity));
  }

  /** Records remembered now. */
  get size(): number {
    return this.#live.size;
  }

  /**
   * Picks the session for a step: the live one whose transcript the history extends exactly (taken out of
   * the table), else a fresh key. Call after the history's ids were assigned.
   */
  claim(request: Pick<StepRequest, "instructions" | "tools" | "history">): NativeClaim {
    if (this.#live.size > 0) {
      const signature = sessionSignature(request);
      const history = request.history;
      const prefixes = new Map<number, string>();
      for (const [key, record] of this.#live) {
        if (record.signature !== signature || history.length !== record.historyLength + 2) continue;
        const n = record.historyLength;
        if (
          !isPromptEntry(history[n], record.prompt, record.schema) || !isAnswerEntry(history[n + 1], record)
        ) continue;
        let prefix = prefixes.get(n);
        if (prefix === undefined) {
          prefix = JSON.stringify(history.slice(0, n));
          prefixes.set(n, prefix);
        }
        if (prefix !== record.historyText) continue;
        this.#live.delete(key);
        return { key, continue: true };
      }
    }
    return { key: `n${this.#next++}`, continue: false };
  }

  /** After a step: remembers the session when the plugin kept it. */
  settle(
    claim: NativeClaim,
    request: Pick<StepRequest, "instructions" | "tools" | "history" | "prompt" | "responseSchema">,
    result: StepResult,
    report: NativeReport | null,
  ): void {
    this.#live.delete(claim.key);
    if (this.#capacity === 0 || report === null || !report.kept || report.key !== claim.key) return;
    if (result.kind === "toolCalls" || request.prompt === "") return;
    while (this.#live.size >= this.#capacity) {
      const oldest = this.#live.keys().next().value as string;
      this.#live.delete(oldest);
    }
    this.#live.set(claim.key, {
      signature: sessionSignature(request),
      historyText: JSON.stringify(request.history),
      historyLength: request.history.length,
      prompt: request.prompt,
      schema: request.responseSchema !== null,
      answer: result.kind === "structured" ? JSON.stringify(result.value) : result.text,
      structured: result.kind === "structured",
    });
  }

  /** The `native` member of a step request body. */
  static body(claim: NativeClaim): JsonObject {
    return { key: claim.key, continue: claim.continue };
  }
}
