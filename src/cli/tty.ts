/**
 * Terminal helpers of the human-facing commands: safe synchronous writes to stdout/stderr, colors (only on a
 * terminal and never with `NO_COLOR`), and a spinner/status line on stderr for anything that waits on a model.
 * @module
 */

import { envVar } from "../util/env.ts";
import { characters, headCharacters } from "../util/text.ts";
import { stderrQueue } from "../util/stderr_queue.ts";

const encoder = new TextEncoder();

/** Writes all of `text`; false when the reader closed the pipe. */
function writeAllSync(stream: { writeSync(p: Uint8Array): number }, text: string): boolean {
  let bytes = encoder.encode(text);
  try {
    while (bytes.length > 0) {
      const n = stream.writeSync(bytes);
      bytes = bytes.subarray(n);
    }
  } catch (error) {
    // A closed pipe (e.g. `oam respond … | head -1`) is not an error of ours.
    if (error instanceof Deno.errors.BrokenPipe) return false;
    throw error;
  }
  return true;
}

let stdoutGone = false;

/**
 * True once a write found stdout's reader gone (`oam chat … | head -5`): a command that reads more input stops
 * there, rather than running model turns whose answers nobody reads.
 */
export function stdoutClosed(): boolean {
  return stdoutGone;
}

/**
 * stdout could not be written for another reason than a closed pipe (a full disk, an I/O error): the command
 * stops and reports it, rather than going on with output nobody gets. Same message as the error behind it.
 */
export class OutputError extends Error {
  /** Wraps the write's `cause`. */
  constructor(cause: unknown) {
    super(cause instanceof Error ? cause.message : String(cause), { cause });
    this.name = "OutputError";
  }
}

/** Writes `text` to stdout (synchronously, all of it); a failed write throws an {@link OutputError}. */
export function writeOut(text: string): void {
  try {
    if (!writeAllSync(Deno.stdout, text)) stdoutGone = true;
  } catch (error) {
    throw new OutputError(error);
  }
}

/**
 * Writes `text` to stderr (synchronously, all of it; never throws) — after the log lines still queued for it
 * (see {@link stderrQueue}), so lines keep their order.
 */
export function writeErr(text: string): void {
  if (stderrQueue.pendingBytes > 0) {
    stderrQueue.push(text);
    return;
  }
  try {
    writeAllSync(Deno.stderr, text);
  } catch {
    // stderr closed: nothing left to tell
  }
}

/** True when `stream` is a terminal (false when that cannot be determined). */
export function isTerminal(stream: { isTerminal(): boolean }): boolean {
  try {
    return stream.isTerminal();
  } catch {
    return false;
  }
}

/** True when colors may be used on `stream`: it is a terminal and `NO_COLOR` is unset or empty. */
export function colorsEnabled(stream: { isTerminal(): boolean }): boolean {
  const noColor = envVar("NO_COLOR");
  if (noColor !== undefined && noColor !== "") return false;
  return isTerminal(stream);
}

/** ANSI styling functions (weights and colors, named as they look); identity functions when colors are off. */
export interface Style {
  /** Whether styling is active. */
  readonly enabled: boolean;
  bold(text: string): string;
  dim(text: string): string;
  italic(text: string): string;
  red(text: string): string;
  green(text: string): string;
  yellow(text: string): string;
  blue(text: string): string;
  magenta(text: string): string;
  cyan(text: string): string;
}

function sgr(open: number, close: number): (text: string) => string {
  return (text) => `\x1b[${open}m${text}\x1b[${close}m`;
}

/**
 * A style for output on `stream` (default stdout).
 *
 * @example
 * ```ts
 * import { makeStyle } from "./tty.ts";
 * const s = makeStyle(false);
 * s.bold("x"); // "x"
 * ```
 */
export function makeStyle(enabled: boolean): Style {
  const id = (text: string) => text;
  if (!enabled) {
    return {
      enabled,
      bold: id,
      dim: id,
      italic: id,
      red: id,
      green: id,
      yellow: id,
      blue: id,
      magenta: id,
      cyan: id,
    };
  }
  return {
    enabled,
    bold: sgr(1, 22),
    dim: sgr(2, 22),
    italic: sgr(3, 23),
    red: sgr(31, 39),
    green: sgr(32, 39),
    yellow: sgr(33, 39),
    blue: sgr(34, 39),
    magenta: sgr(35, 39),
    cyan: sgr(36, 39),
  };
}

/** Style for stdout. */
export function stdoutStyle(): Style {
  return makeStyle(colorsEnabled(Deno.stdout));
}

/** Style for stderr. */
export function stderrStyle(): Style {
  return makeStyle(colorsEnabled(Deno.stderr));
}

const FRAMES = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

/**
 * A one-line spinner on stderr for waits on a model. It draws only when stderr is a terminal, so it never
 * appears in pipes, logs or JSON output; `stop()` erases it.
 *
 * @example
 * ```ts
 * import { Spinner } from "./tty.ts";
 * const spinner = new Spinner();
 * spinner.start("thinking");
 * spinner.stop();
 * ```
 */
export class Spinner {
  readonly #active: boolean;
  readonly #style: Style;
  #timer: ReturnType<typeof setInterval> | undefined;
  #label = "";
  #frame = 0;
  #started = 0;
  #drawn = false;

  /** A spinner; `enabled` defaults to "stderr is a terminal". */
  constructor(enabled: boolean = isTerminal(Deno.stderr)) {
    this.#active = enabled;
    this.#style = stderrStyle();
  }

  /** Whether the spinner is currently shown. */
  get spinning(): boolean {
    return this.#timer !== undefined;
  }

  /** Shows the spinner with `label` (restarts the clock). Nothing is drawn for waits under 150 ms. */
  start(label: string): void {
    if (!this.#active) return;
    this.#label = label;
    this.#started = Date.now();
    if (this.#timer === undefined) {
      this.#timer = setInterval(() => this.#draw(), 80);
    }
  }

  /** Changes the label of a running spinner. */
  update(label: string): void {
    this.#label = label;
  }

  /** Erases the spinner. */
  stop(): void {
    if (this.#timer === undefined) return;
    clearInterval(this.#timer);
    this.#timer = undefined;
    if (this.#drawn) writeErr("\r\x1b[K");
    this.#drawn = false;
  }

  #draw(): void {
    if (Date.now() - this.#started < 150) return;
    this.#drawn = true;
    const seconds = (Date.now() - this.#started) / 1000;
    const line = spinnerLine(this.#label, {
      frame: FRAMES[this.#frame++ % FRAMES.length],
      seconds,
      columns: terminalColumns(),
      style: this.#style,
    });
    writeErr(`\r\x1b[K${line}`);
  }
}

/** The width of the terminal in columns, or undefined when there is none. */
export function terminalColumns(): number | undefined {
  try {
    return Deno.consoleSize().columns;
  } catch {
    return undefined;
  }
}

/** One frame of the {@link Spinner}: its `frame` character, the `seconds` shown, the terminal's width. */
export interface SpinnerFrame {
  frame: string;
  seconds: number;
  /** The terminal's width in columns; undefined or 0 when there is none or it is not known (nothing is shortened). */
  columns: number | undefined;
  style: Style;
}

/**
 * One frame of the {@link Spinner}: `⠋ label 1.2s`, on one line of a terminal `columns` wide (a line that
 * wraps could not be erased by the next frame).
 */
export function spinnerLine(label: string, { frame, seconds, columns, style }: SpinnerFrame): string {
  const time = `${seconds.toFixed(1)}s`;
  // The last column stays free: writing into it makes some terminals wrap.
  // 0 columns is a terminal that does not know its width (a bare pseudo-terminal): nothing is shortened.
  const room = columns === undefined || columns <= 0
    ? undefined
    : columns - 1 - displayWidth(`${frame}  ${time}`);
  const shown = room === undefined ? label : fitColumns(label, Math.max(room, 0));
  return `${style.cyan(frame)} ${shown} ${style.dim(time)}`;
}

/**
 * Shortens `text` to at most `max` characters (adding "…"), on one line. Characters are counted as they are
 * seen (an emoji with its skin tone, a letter with its accent is one), and the cut never splits one.
 */
export function oneLine(text: string, max = 200): string {
  const flat = text.replace(/\s*\n\s*/g, " ");
  if (headCharacters(flat, max) === null) return flat;
  return `${headCharacters(flat, max - 1)}…`;
}

/** East Asian Wide and Fullwidth blocks (CJK, kana, hangul, full-width forms): two columns each. */
const WIDE =
  /^[\u{1100}-\u{115F}\u{2E80}-\u{303E}\u{3041}-\u{33FF}\u{3400}-\u{4DBF}\u{4E00}-\u{9FFF}\u{A000}-\u{A4CF}\u{A960}-\u{A97F}\u{AC00}-\u{D7A3}\u{F900}-\u{FAFF}\u{FE30}-\u{FE4F}\u{FF00}-\u{FF60}\u{FFE0}-\u{FFE6}\u{20000}-\u{3FFFD}]/u;

/** The columns one character (grapheme cluster) takes on a terminal. */
function characterWidth(character: string): number {
  if (/^[\p{Cc}\p{Cf}\p{Mn}\p{Me}]*$/u.test(character)) return 0;
  if (WIDE.test(character) || /\p{Emoji_Presentation}|\u{FE0F}/u.test(character)) return 2;
  return 1;
}

/**
 * The columns `text` takes on a terminal: full-width characters (CJK, kana, hangul, full-width forms) and
 * emoji take two, an emoji sequence (skin tone, ZWJ family, flag) is one character, combining accents none.
 * Escape sequences are not expected (measure the text before styling it).
 *
 * @example
 * ```ts
 * import { displayWidth } from "./tty.ts";
 * displayWidth("ゲン👍🏽"); // 6
 * ```
 */
export function displayWidth(text: string): number {
  let width = 0;
  for (const character of characters(text)) width += characterWidth(character);
  return width;
}

/** `text` cut to at most `columns` columns with "…" (counted two columns, as CJK terminals show it). */
function fitColumns(text: string, columns: number): string {
  if (displayWidth(text) <= columns) return text;
  let head = "";
  let width = 0;
  for (const character of characters(text)) {
    const w = characterWidth(character);
    if (width + w + 2 > columns) break;
    head += character;
    width += w;
  }
  return `${head}…`;
}
