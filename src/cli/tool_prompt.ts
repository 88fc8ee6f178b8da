/**
 * Answers the client tool calls of an interactive turn (`oam chat`, `oam npc`): command tools run by
 * themselves; other tools are asked at the prompt one at a time, in arrival order.
 * @module
 */
import type { JsonObject } from "../protocol/json.ts";
import { runCommandTool } from "./command_tools.ts";
import type { LineReader } from "./input.ts";
import type { LocalBridge } from "./local_bridge.ts";
import { formatCall, typedAnswer } from "./render.ts";
import type { LoadedTools } from "./tools_file.ts";
import { displayWidth, type Style } from "./tty.ts";

/** Callbacks of a {@link ToolPrompter}. */
export interface ToolPromptHooks {
  /** Before asking the user (stop spinners, end the current output line). */
  beforeAsk(): void;
  /** Writes the question (only called when stdin is a terminal). */
  ask(text: string): void;
  /** After the user answered. */
  answered(): void;
  /**
   * The input ended while a tool waited (Ctrl-D, or the end of piped input), or `/exit` (`/quit`) was its
   * answer (`quit` true): the turn should be cancelled and the command end. `call` is the waiting call.
   */
  inputEnded(end: { call: JsonObject; quit: boolean }): void;
}

/**
 * What shows `line`, a line about another tool call of the round, while a tool question may be waiting for its
 * answer on the same terminal: the question's line is cleared, the line shown, and the question asked again
 * below it, so the answer is typed after its question. With no question waiting (`question` null), the line as
 * it is. `columns` is the terminal's width: a question that wrapped (full-width characters and emoji take two
 * columns) is erased on all its rows.
 *
 * @example
 * ```ts
 * import { besideQuestion } from "./tool_prompt.ts";
 * besideQuestion("  ↳ sunny\n", { question: '  ? get_weather {"city":"Oslo"} output› ' });
 * // '\r\x1b[K  ↳ sunny\n  ? get_weather {"city":"Oslo"} output› '
 * ```
 */
export function besideQuestion(
  line: string,
  { question, columns }: { question: string | null; columns?: number },
): string {
  if (question === null) return line;
  // A question wider than the terminal wrapped: the cursor is on its last row, so go up to its first.
  // deno-lint-ignore no-control-regex
  const width = displayWidth(question.replace(/\x1b\[[0-9;]*m/g, ""));
  const up = columns === undefined || columns <= 0 ? 0 : Math.floor(Math.max(width - 1, 0) / columns);
  return `${up > 0 ? `\r\x1b[${up}A\x1b[J` : "\r\x1b[K"}${line}${question}`;
}

/**
 * Answers the tool calls of one turn.
 *
 * @example
 * ```ts
 * import type { ToolPrompter } from "./tool_prompt.ts";
 * function onToolCall(prompter: ToolPrompter, id: string, call: Record<string, never>) {
 *   prompter.enqueue(id, call);
 * }
 * ```
 */
export class ToolPrompter {
  readonly #bridge: LocalBridge;
  readonly #reader: LineReader;
  readonly #tools: LoadedTools | null;
  readonly #interactive: boolean;
  readonly #style: Style;
  readonly #hooks: ToolPromptHooks;
  readonly #over = new AbortController();
  readonly #aborts = new Map<string, AbortController>();
  readonly #queue: Array<{ id: string; call: JsonObject }> = [];
  #draining = false;

  /** A prompter for one turn. */
  constructor(
    bridge: LocalBridge,
    reader: LineReader,
    tools: LoadedTools | null,
    interactive: boolean,
    style: Style,
    hooks: ToolPromptHooks,
  ) {
    this.#bridge = bridge;
    this.#reader = reader;
    this.#tools = tools;
    this.#interactive = interactive;
    this.#style = style;
    this.#hooks = hooks;
  }

  /** Handles a `tool/call` (`id` is the `t-<n>` id). */
  enqueue(id: string, call: JsonObject): void {
    const name = String(call.name);
    const spec = this.#tools?.commands.get(name);
    if (spec) {
      const abort = new AbortController();
      this.#aborts.set(id, abort);
      runCommandTool(spec, {
        name: name,
        call: call as { id: string; arguments: JsonObject },
        signal: abort.signal,
      }).then(
        (answer) => {
          this.#aborts.delete(id);
          this.#bridge.reply(id, answer.output, answer.isError);
        },
      );
      return;
    }
    this.#queue.push({ id, call });
    this.#drain();
  }

  /** Handles a `tool/cancel`: stops a running command. */
  cancel(id: string): void {
    this.#aborts.get(id)?.abort();
  }

  /** The turn ended: withdraw a pending question and stop commands. */
  finish(): void {
    this.#over.abort();
    for (const a of this.#aborts.values()) a.abort();
  }

  async #drain(): Promise<void> {
    if (this.#draining) return;
    this.#draining = true;
    try {
      while (this.#queue.length > 0 && !this.#over.signal.aborted) {
        const { id, call } = this.#queue.shift()!;
        this.#hooks.beforeAsk();
        const s = this.#style;
        // The question names the call with its arguments: with several calls in a round (or a question asked
        // again below another call's line), the name alone does not say which call the answer is for.
        if (this.#interactive) this.#hooks.ask(`  ${s.yellow("?")} ${formatCall(call, s)} output› `);
        const line = await this.#reader.readLine(this.#over.signal);
        if (line === undefined) return; // the turn ended meanwhile
        // The end of the input (Ctrl-D), or /exit as at the prompt: the turn stops and the command ends.
        if (line === null || /^\/(exit|quit)(\s|$)/.test(line.trim())) {
          this.#hooks.inputEnded({ call, quit: line !== null });
          return;
        }
        const answer = typedAnswer(line);
        this.#bridge.reply(id, answer.output, answer.isError);
        this.#hooks.answered();
      }
    } finally {
      this.#draining = false;
    }
  }
}
