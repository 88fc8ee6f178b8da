/**
 * The terminal side of a streamed turn, shared by the interactive commands (`oam chat`, `oam npc`): the
 * output line, the spinner, the tool question that waits for its answer, the tool-call lines, Ctrl-C, and
 * how a failed turn ends. Each command keeps the rendering of its own events (text, NPC lines, replies).
 * @module
 */
import { isJsonObject, type JsonObject } from "../protocol/json.ts";
import { CliError, EXIT, reportError, toCliError } from "./cli_error.ts";
import type { LineReader } from "./input.ts";
import type { LocalBridge } from "./local_bridge.ts";
import { formatCall, formatOutput } from "./render.ts";
import { besideQuestion, ToolPrompter } from "./tool_prompt.ts";
import type { LoadedTools } from "./tools_file.ts";
import { isTerminal, OutputError, Spinner, type Style, terminalColumns, writeErr, writeOut } from "./tty.ts";

/** What a {@link TurnScreen} needs from its command. */
export interface TurnScreenOptions {
  /** The style of stdout. */
  out: Style;
  /** The style of stderr (a failed turn's error). */
  err: Style;
  /** Whether stdin is a terminal (prompts and tool questions are written only then). */
  interactive: boolean;
  /** The command's input: the answers of tool questions. */
  reader: LineReader;
  /** The spinner's label while the model works (it may change, e.g. with the NPC's name). */
  label: () => string;
}

/** One streamed request of a {@link TurnScreen.run}. */
export interface TurnRequest {
  /** The in-process bridge. */
  bridge: LocalBridge;
  /** The client tools (command tools run by themselves, the others are asked). */
  tools: LoadedTools | null;
  /** `session/respond`, `npc/talk`, …, and its params (with `stream: true`). */
  method: string;
  /** The request's params. */
  params: JsonObject;
  /** The request that cancels the turn (sent on Ctrl-C, or when the input ends at a tool question). */
  cancel: { method: string; params: JsonObject };
  /** Shows one event of the turn (not called once the turn was cancelled: that is the turn unwinding). */
  onEvent(event: JsonObject): void;
  /** Shows the result of a turn that succeeded (the spinner is stopped). */
  onResult(result: JsonObject): void | Promise<void>;
  /** The input ended while a tool waited (Ctrl-D), or `/exit` answered it: the turn is cancelled; the command should end. */
  onInputEnded(): void;
}

/**
 * The output state of an interactive command and the running turn's place on the screen.
 *
 * What is written only for the person typing — the banner, the `you›` prompt, tool questions, the Ctrl-C hint
 * ({@link TurnScreen.prompt}) — goes where that person sees it: to stdout when stdout is a terminal, else to
 * stderr, so `oam chat > answers.txt` asks on the terminal and the file gets the conversation only.
 *
 * @example
 * ```ts
 * import { LineReader } from "./input.ts";
 * import { stderrStyle, stdoutStyle } from "./tty.ts";
 * import { type TurnRequest, TurnScreen } from "./turn_screen.ts";
 * const screen = new TurnScreen({
 *   out: stdoutStyle(),
 *   err: stderrStyle(),
 *   interactive: false,
 *   reader: new LineReader(new ReadableStream()), // a command passes its stdin reader
 *   label: () => "thinking",
 * });
 * // A command's turn: its call, and how its events and result are shown, run on the screen.
 * const talk = (request: TurnRequest): Promise<void> => screen.run(request);
 * console.assert(typeof talk === "function");
 * ```
 */
export class TurnScreen {
  readonly #options: TurnScreenOptions;
  /** Whether prompts and tool questions go to stdout (a terminal) rather than stderr. */
  readonly #promptsOnStdout = isTerminal(Deno.stdout);
  readonly #spinner = new Spinner();
  /** Whether the last output ended its line. */
  #atLineStart = true;
  /** The tool question on the terminal while it waits for its answer (null when none does). */
  #question: string | null = null;
  /** Set by Ctrl-C (or the input ending at a tool question): the events that follow are not shown. */
  #cancelled = false;
  /** Cancels the running turn (set while a turn runs). */
  #cancelTurn: (() => void) | null = null;
  /** The exit code of the first failure reported (a turn or a command), `EXIT.ok` while none. */
  #failure: number = EXIT.ok;

  /** A screen on stdout. */
  constructor(options: TurnScreenOptions) {
    this.#options = options;
  }

  /** Writes to stdout (the spinner goes first); notes whether the output line is now empty. */
  write(text: string): void {
    if (text === "") return;
    this.#spinner.stop();
    writeOut(text);
    this.#atLineStart = text.endsWith("\n");
  }

  /**
   * Writes `text` for the person typing (a prompt, a question, a hint): on stdout when it is a terminal, else on
   * stderr, so it is seen also when stdout goes to a file or a pipe.
   */
  prompt(text: string): void {
    if (this.#promptsOnStdout) {
      this.write(text);
      return;
    }
    if (text === "") return;
    this.#spinner.stop();
    writeErr(text);
  }

  /** The style of {@link TurnScreen.prompt}'s stream. */
  get promptStyle(): Style {
    return this.#promptsOnStdout ? this.#options.out : this.#options.err;
  }

  /** Ends the output line unless it is empty. */
  newline(): void {
    if (!this.#atLineStart) this.write("\n");
  }

  /** The output line is empty again (the user's Enter ended it). */
  lineStarted(): void {
    this.#atLineStart = true;
  }

  /** Shows the spinner with the label: the model is working. */
  showThinking(): void {
    this.#spinner.start(this.#options.label());
  }

  /** Takes the spinner off the screen. */
  hideThinking(): void {
    this.#spinner.stop();
  }

  /**
   * Notes a failure the command reported on stderr (its exit code): the first one is the command's exit code
   * when the input ends, so a piped session tells CI that a turn or a save failed. A cancelled turn is none.
   */
  failed(exitCode: number): void {
    if (this.#failure === EXIT.ok) this.#failure = exitCode;
  }

  /** The exit code of the first failure noted, or `EXIT.ok`. */
  get exitCode(): number {
    return this.#failure;
  }

  /** Ctrl-C: cancels the running turn (or {@link request}); false when none runs. */
  cancelTurn(): boolean {
    if (!this.#cancelTurn) return false;
    this.#cancelTurn();
    return true;
  }

  /**
   * One turn, from a fresh output line: the request with its events shown as they come and its tool calls
   * answered, then the result (`onResult`), or the failure: `(stopped)` when it was cancelled, else the error
   * on stderr.
   */
  async run(turn: TurnRequest): Promise<void> {
    this.#atLineStart = true;
    this.#question = null;
    this.#cancelled = false;
    const prompter = this.#toolPrompter(turn);
    this.#cancelTurn = () => this.#stopTurn(turn);
    this.showThinking();
    // stdout failing while an event is shown stops the turn; the command then ends with that error.
    let outputFailed: OutputError | null = null;
    try {
      const result = await turn.bridge.run(turn.method, turn.params, {
        onEvent: (event) => {
          if (this.#cancelled) return;
          try {
            turn.onEvent(event);
          } catch (error) {
            if (!(error instanceof OutputError)) throw error;
            outputFailed ??= error;
            this.#stopTurn(turn);
          }
        },
        onToolCall: (id, call) => prompter.enqueue(id, call),
        onToolCancel: (p) => prompter.cancel(String(p.id)),
      });
      this.#spinner.stop();
      this.#endQuestion();
      if (outputFailed === null) await turn.onResult(result);
    } catch (error) {
      if (error instanceof OutputError) outputFailed ??= error;
      if (outputFailed === null) this.#showFailure(error);
    } finally {
      this.#cancelTurn = null;
      prompter.finish();
    }
    if (outputFailed !== null) {
      this.#spinner.stop();
      throw outputFailed;
    }
  }

  /**
   * A request that is no streamed turn (`npc/bark`), stopped by Ctrl-C as a turn is ({@link cancelTurn}): the
   * spinner while it runs; its result, or null when it failed: `(stopped)` when it was stopped, else the error
   * on stderr. No request of the bridge cancels such a call, so a stop ends the wait only: the answer that
   * comes later is dropped (the model call, a short one for a bark, runs to its end).
   */
  async request(bridge: LocalBridge, method: string, params: JsonObject): Promise<JsonObject | null> {
    this.#question = null;
    this.#cancelled = false;
    const stop = new AbortController();
    this.#cancelTurn = () => {
      this.#cancelled = true;
      stop.abort();
    };
    this.showThinking();
    try {
      const result = await bridge.call(method, params, { signal: stop.signal }) as JsonObject;
      this.#spinner.stop();
      return result;
    } catch (error) {
      this.#showFailure(error);
      return null;
    } finally {
      this.#cancelTurn = null;
    }
  }

  /** Asks the user for the outputs of the turn's client tools (command tools run by themselves). */
  #toolPrompter(turn: TurnRequest): ToolPrompter {
    const { reader, interactive } = this.#options;
    return new ToolPrompter(turn.bridge, reader, turn.tools, interactive, this.promptStyle, {
      beforeAsk: () => {
        this.#spinner.stop();
        this.newline();
      },
      ask: (text) => {
        this.#question = text;
        this.prompt(text);
      },
      answered: () => {
        this.#question = null;
        this.#atLineStart = true;
        this.showThinking();
      },
      inputEnded: ({ call, quit }) => {
        // Piped input one answer short (a script's missing line) is a failure the exit code tells; Ctrl-D at a
        // terminal, or "/exit" as the answer, quits on purpose.
        if (!quit && !interactive) {
          const waiting = formatCall(call, this.#options.err);
          this.failed(reportError(
            new CliError(
              "missing_tool_output",
              `The input ended while ${waiting} waited for its output: the turn was stopped.`,
            ),
            { mode: "human", style: this.#options.err },
          ));
        }
        turn.onInputEnded();
        this.#stopTurn(turn);
      },
    });
  }

  /** Ctrl-C, or the input ending at a tool question: cancels the turn; its unwinding is not shown. */
  #stopTurn(turn: TurnRequest): void {
    this.#cancelled = true;
    turn.bridge.call(turn.cancel.method, turn.cancel.params).catch(() => {});
  }

  /**
   * A line about a tool call, on a line of its own. A tool question on stdout waiting for its answer (another
   * call of the round started or ended meanwhile) is taken off the screen first and asked again below the
   * line, so the answer is typed after its question: its line is cleared. A question on stderr (stdout is not
   * a terminal) stays where it is.
   */
  #toolLine(line: string): void {
    const question = this.#promptsOnStdout ? this.#question : null;
    if (question === null) this.newline();
    this.write(
      besideQuestion(line, { question, columns: question === null ? undefined : terminalColumns() }),
    );
  }

  /** `  ⚙ name {arguments}`, then `note` (the command ends its own open line first). */
  toolCallStarted(event: JsonObject, note = ""): void {
    const o = this.#options.out;
    this.#spinner.stop();
    this.#toolLine(`  ${o.cyan("⚙")} ${formatCall(event.call ?? null, o)}${note}\n`);
  }

  /** `  ↳ output` (or `error: …`); the model is thinking again unless a tool question waits. */
  toolCallCompleted(event: JsonObject): void {
    const o = this.#options.out;
    const record = isJsonObject(event.record) ? event.record : {};
    const output = formatOutput({ output: record.output ?? null, isError: record.isError === true }, o);
    this.#toolLine(`  ${o.dim("↳")} ${output}\n`);
    if (this.#question === null) this.showThinking();
  }

  /**
   * The turn ended while a tool question on stderr waited for its answer (Ctrl-C, the input ended): its line
   * ends, so the next prompt starts a line of its own. (On stdout the turn's output line ends it.)
   */
  #endQuestion(): void {
    if (this.#question !== null && !this.#promptsOnStdout) writeErr("\n");
  }

  /** The end of a turn that failed: `(stopped)` when it was cancelled, else the error on stderr. */
  #showFailure(error: unknown): void {
    this.#spinner.stop();
    this.#endQuestion();
    this.newline();
    const e = toCliError(error);
    if (this.#cancelled || e.code === "cancelled") this.write(this.#options.out.dim("(stopped)\n"));
    else this.failed(reportError(e, { mode: "human", style: this.#options.err }));
  }
}
