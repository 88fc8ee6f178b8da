/**
 * The read loop of the interactive commands (`oam chat`, `oam npc`): the banner and the `you›` prompt on a
 * terminal, a line at a time until the input ends or `/exit`, slash commands and what the user says handed to
 * the command (`//text` says `/text`), and Ctrl-C between turns. Each command keeps its own commands and turns.
 * @module
 */
import { CliError, reportError } from "./cli_error.ts";
import { didYouMean, nearestName } from "../protocol/edit_distance.ts";
import { LineReader } from "./input.ts";
import { addSigint, removeSigint } from "./respond.ts";
import { isTerminal, OutputError, stdoutClosed, type Style } from "./tty.ts";
import { TurnScreen } from "./turn_screen.ts";

/** What a {@link PromptLoop} needs from its command. */
export interface PromptLoopOptions {
  /** The style of stdout. */
  out: Style;
  /** The style of stderr (errors). */
  err: Style;
  /** The spinner's label while the model works. */
  label: () => string;
}

/** What the command does with the lines {@link PromptLoop.run} reads. */
export interface PromptLoopHandlers {
  /**
   * A line starting with one `/` (other than `/exit` and `/quit`, which end the loop): the command's name (`/save`)
   * and the rest of the line (`chat.json`). An error it throws is reported on stderr and counted as a failure
   * (see {@link TurnScreen.failed}); the loop goes on. Stdout failing ({@link OutputError}) ends the command.
   */
  command(name: string, arg: string): Promise<void>;
  /**
   * Any other line that is not blank, as typed: what the user says. A line starting with `//` is said with its
   * first slash taken off (`//shrug` says `/shrug`): the way to say something that starts with a slash.
   */
  say(line: string): Promise<void>;
  /** The first line on a terminal (the command, the model, the keys); written dim, only when typed at. */
  banner: string;
  /** Runs after the banner, before the first prompt, with Ctrl-C handled as in a turn (`oam npc`'s greeting). */
  start?: () => Promise<void>;
}

/**
 * The error of a slash command `name` that is not one of `commands.known` (`/exit` and `/quit` are added): with
 * the command a misspelt name most likely meant, or the one `commands.otherNames` gives for a name another
 * command uses (`/save` in `oam npc` is `/state`); else with the escape of a line meant to be said (`//`).
 *
 * @example
 * ```ts
 * import { unknownSlashCommand } from "./prompt_loop.ts";
 * unknownSlashCommand("/tols", { known: ["/tools", "/help"] }).message;
 * // "unknown command '/tols'; did you mean '/tools'? Type /help."
 * ```
 */
export function unknownSlashCommand(
  name: string,
  commands: { known: readonly string[]; otherNames?: Record<string, string> },
): CliError {
  const { known, otherNames = {} } = commands;
  const meant = Object.hasOwn(otherNames, name)
    ? otherNames[name]
    : nearestName(name, [...known, "/exit", "/quit"]);
  return CliError.usage(
    meant === undefined
      ? `unknown command '${name}'; type /help, or start the line with // to say it.`
      : `unknown command '${name}'${didYouMean(meant, { as: "clause" })} Type /help.`,
  );
}

/**
 * The line-by-line session of an interactive command, on its {@link TurnScreen} and stdin's {@link LineReader}.
 *
 * Ctrl-C stops the running turn. Between turns, on a terminal, it shows a hint and the prompt again; with piped
 * input it does not end the session either (a Ctrl-C meant for a turn that has just ended), and shows a hint
 * when the output is on a terminal.
 *
 * @example
 * ```ts ignore
 * const loop = new PromptLoop({ out: stdoutStyle(), err: stderrStyle(), label: () => "thinking" });
 * const exitCode = await loop.run({
 *   banner: "oam chat · /help for commands · Ctrl-D to quit",
 *   command: async (name, arg) => { … },
 *   say: (line) => loop.screen.run({ …, onInputEnded: () => loop.quit() }),
 * });
 * ```
 */
export class PromptLoop {
  /** Whether stdin is a terminal: the banner, the prompt and the Ctrl-C hint are shown only then. */
  readonly interactive: boolean = isTerminal(Deno.stdin);
  /** The command's input: its lines and the answers of tool questions. */
  readonly reader: LineReader = new LineReader();
  /** Where the command shows its turns. */
  readonly screen: TurnScreen;
  readonly #err: Style;
  /** Whether a terminal shows the output (stdout or stderr): the Ctrl-C hint of piped input is shown only then. */
  readonly #watched: boolean = isTerminal(Deno.stdout) || isTerminal(Deno.stderr);
  #quit = false;

  /** A loop on stdin, with the screen its turns are shown on. */
  constructor(options: PromptLoopOptions) {
    this.#err = options.err;
    this.screen = new TurnScreen({
      out: options.out,
      err: options.err,
      interactive: this.interactive,
      reader: this.reader,
      label: options.label,
    });
  }

  /** Ends the loop before its next line (e.g. the input ended while a tool waited for its answer). */
  quit(): void {
    this.#quit = true;
  }

  /**
   * Shows the banner (a terminal only), runs `start`, then reads a line at a time until the input ends, `/exit`
   * or `/quit`, or stdout's reader is gone. Resolves with the exit code: the first failure's, when a turn or a
   * command failed (see {@link TurnScreen.exitCode}).
   */
  async run(handlers: PromptLoopHandlers): Promise<number> {
    const onSigint = () => this.#sigint();
    const sigint = addSigint(onSigint);
    try {
      if (this.interactive) this.screen.prompt(this.screen.promptStyle.dim(`${handlers.banner}\n`));
      await handlers.start?.();
      await this.#readLines(handlers);
    } finally {
      removeSigint(sigint, onSigint);
    }
    return this.screen.exitCode;
  }

  async #readLines(handlers: PromptLoopHandlers): Promise<void> {
    while (!this.#quit && !stdoutClosed()) {
      this.#prompt();
      const line = await this.reader.readLine();
      if (line === null || line === undefined) {
        if (this.interactive) this.screen.prompt("\n");
        return;
      }
      this.screen.lineStarted();
      const text = line.trim();
      if (text === "") continue;
      if (!text.startsWith("/") || text.startsWith("//")) {
        // `//text` says `/text`: the escape of a line that starts with a slash (as in chat clients).
        await handlers.say(text.startsWith("//") ? line.replace("/", "") : line);
        continue;
      }
      const [name, ...rest] = text.split(/\s+/);
      if (name === "/exit" || name === "/quit") return;
      try {
        await handlers.command(name, rest.join(" "));
      } catch (error) {
        if (error instanceof OutputError) throw error; // stdout is gone: the command ends
        this.screen.failed(reportError(error, { mode: "human", style: this.#err }));
      }
    }
  }

  #prompt(): void {
    const s = this.screen.promptStyle;
    if (this.interactive) this.screen.prompt(s.bold(s.green("you› ")));
  }

  /**
   * Ctrl-C: stops the running turn. Between turns, typing at a terminal: a hint and the prompt again. With
   * other input (a pipe, a file) it does not quit either: a program that pipes the lines and sends SIGINT to
   * stop a turn may send it just as the turn ends (and a person's Ctrl-C at a terminal ends a writer such as
   * `cat` too, so the input ends); only a hint, when a terminal shows the output.
   */
  #sigint(): void {
    if (this.screen.cancelTurn()) return;
    const s = this.screen.promptStyle;
    if (this.interactive) {
      this.screen.prompt(`\n${s.dim("(Ctrl-D or /exit to quit)")}\n`);
      this.#prompt();
    } else if (this.#watched) {
      this.screen.prompt(
        `\n${s.dim("(Ctrl-C stops a turn; the input is not a terminal: oam quits when it ends)")}\n`,
      );
    }
  }
}
