/**
 * One `oam respond` turn as it runs (see {@link RespondTurn}): its events printed, its command tools run, and
 * the pause for the tool calls it cannot run.
 * @module
 */
import { isJsonObject, type JsonObject, type JsonValue } from "../protocol/json.ts";
import type { OutputMode } from "./cli_error.ts";
import { runCommandTool } from "./command_tools.ts";
import type { CallInfo, PendingState } from "./conversation_file.ts";
import type { LocalBridge } from "./local_bridge.ts";
import { formatCall, formatOutput } from "./render.ts";
import type { LoadedTools } from "./tools_file.ts";
import { type Spinner, type Style, writeErr, writeOut } from "./tty.ts";

/** The session id `oam respond` uses on its bridge. */
export const SESSION = "respond";

/** The calls of the current tool round: started, completed, and those waiting outside (to pause for). */
interface BatchState {
  started: CallInfo[];
  completed: Map<string, { output: JsonValue; isError: boolean }>;
  external: Map<string, CallInfo>;
  completedToolRounds: number;
}

/** A turn's tool budget: the limits, what earlier (paused) parts used, and the tool choice. */
export interface TurnBudget {
  maxRounds: number;
  maxCalls: number;
  usedRounds: number;
  usedCalls: number;
  choice: JsonValue;
}

/** What a {@link RespondTurn} works with. */
export interface RespondTurnOptions {
  bridge: LocalBridge;
  /** The command tools it runs (the other tools pause the turn). */
  tools: LoadedTools | null;
  budget: TurnBudget;
  mode: OutputMode;
  style: Style;
  spinner: Spinner;
  /** Print the streamed text (human mode, streaming, no schema). */
  streamText: boolean;
  /** Print each tool call and its output on stderr. */
  showTools: boolean;
}

/**
 * One `oam respond` turn as it runs: prints its events, runs the command tools it calls, collects the calls
 * it cannot run, and pauses (cancels the turn, saving what is needed to resume) once the round's other calls
 * have completed.
 */
export class RespondTurn {
  /** The streamed text so far. */
  printed = "";
  /** Set when the turn pauses for tool calls: the pending state and the transcript to resume from. */
  pausing: Promise<{ pending: PendingState; transcript: JsonObject }> | null = null;
  /** True after Ctrl-C. */
  interrupted = false;
  readonly #o: RespondTurnOptions;
  readonly #batch: BatchState = {
    started: [],
    completed: new Map(),
    external: new Map(),
    completedToolRounds: 0,
  };
  #totalStarted = 0;
  readonly #aborts = new Map<string, AbortController>();

  constructor(options: RespondTurnOptions) {
    this.#o = options;
  }

  /** One `session/event`'s `event`. */
  event(event: JsonObject): void {
    if (this.pausing || this.interrupted) return; // the turn is unwinding after our own cancel
    if (this.#o.mode === "events") writeOut(`${JSON.stringify(event)}\n`);
    switch (event.type) {
      case "modelStep":
        this.#modelStep(isJsonObject(event.step) ? event.step : {});
        break;
      case "text":
        this.#text(event);
        break;
      case "toolCallStarted":
        this.#toolCallStarted(event.call as CallInfo);
        break;
      case "toolCallCompleted":
        this.#toolCallCompleted(isJsonObject(event.record) ? event.record : {});
        break;
    }
  }

  /** A `tool/call`: a command tool runs now; any other waits for the pause. */
  toolCall(id: string, call: CallInfo): void {
    const name = String(call.name);
    const spec = this.#o.tools?.commands.get(name);
    if (!spec) {
      this.#batch.external.set(call.id, call);
      this.#schedule();
      return;
    }
    const abort = new AbortController();
    this.#aborts.set(id, abort);
    runCommandTool(spec, { name, call, signal: abort.signal }).then((answer) => {
      this.#aborts.delete(id);
      this.#o.bridge.reply(id, answer.output, answer.isError);
    });
  }

  /** A `tool/cancel`: stops the command tool. */
  toolCancel(params: JsonObject): void {
    this.#aborts.get(String(params.id))?.abort();
  }

  /** Ctrl-C: cancels the turn. */
  interrupt(): void {
    this.interrupted = true;
    this.#o.bridge.call("session/cancel", { session: SESSION }).catch(() => {});
  }

  #modelStep(step: JsonObject): void {
    const batch = this.#batch;
    batch.started = [];
    batch.completed.clear();
    batch.external.clear();
    batch.completedToolRounds = typeof step.completedToolRounds === "number" ? step.completedToolRounds : 0;
  }

  #text(event: JsonObject): void {
    this.#o.spinner.stop();
    if (!this.#o.streamText) return;
    const delta = String(event.delta ?? "");
    if (event.isReset === true && this.printed !== "") writeOut("\n");
    writeOut(delta);
    this.printed = event.isReset === true ? delta : this.printed + delta;
  }

  #toolCallStarted(call: CallInfo): void {
    this.#batch.started.push(call);
    this.#totalStarted++;
    if (this.#o.showTools) {
      this.#o.spinner.stop();
      // The marks of oam chat and oam npc (→ and ← are the protocol's messages in oam demo --show-protocol).
      writeErr(`  ${this.#o.style.cyan("⚙")} ${formatCall(call, this.#o.style)}\n`);
    }
    this.#schedule();
  }

  #toolCallCompleted(record: JsonObject): void {
    const call = isJsonObject(record.call) ? record.call : {};
    const outcome = { output: record.output ?? null, isError: record.isError === true };
    this.#batch.completed.set(String(call.id), outcome);
    if (this.#o.showTools) {
      const s = this.#o.style;
      this.#o.spinner.stop();
      writeErr(`  ${s.dim("↳")} ${formatOutput(outcome, s)}\n`);
      this.#o.spinner.start("thinking");
    }
    this.#schedule();
  }

  /** Checks for a pause once the calls of this moment have arrived. */
  #schedule(): void {
    setTimeout(() => this.#check(), 0);
  }

  /** Pauses when every call of the round has completed or waits outside (and at least one waits). */
  #check(): void {
    const batch = this.#batch;
    const budget = this.#o.budget;
    if (this.pausing || batch.external.size === 0) return;
    if (!batch.started.every((c) => batch.completed.has(c.id) || batch.external.has(c.id))) return;
    const remainingCalls = Math.max(0, budget.maxCalls - budget.usedCalls);
    const pending: PendingState = {
      calls: [...batch.started],
      outputs: batch.started.filter((c) => batch.completed.has(c.id)).map((c) => ({
        id: c.id,
        ...batch.completed.get(c.id)!,
      })),
      roundsUsed: budget.usedRounds + batch.completedToolRounds + 1,
      callsUsed: budget.usedCalls + Math.min(this.#totalStarted, remainingCalls),
      maxToolRounds: budget.maxRounds,
      maxToolCalls: budget.maxCalls,
      toolChoice: budget.choice,
    };
    const bridge = this.#o.bridge;
    this.pausing = (async () => {
      const t = await bridge.call("session/transcript", { session: SESSION }) as JsonObject;
      await bridge.call("session/cancel", { session: SESSION });
      return { pending, transcript: t.transcript as JsonObject };
    })();
  }
}
