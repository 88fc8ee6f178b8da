/**
 * Input helpers of the commands: reading a file or stdin (`-`), JSON/JSONC parsing with line:column errors
 * (prototype-safe), and a line reader over stdin for the interactive commands.
 * @module
 */
import {
  type Node,
  type ParseErrorCode,
  parseTree,
  printParseErrorCode,
  visit,
} from "npm:jsonc-parser@3.3.1";
import type { JsonObject, JsonValue } from "../protocol/json.ts";
import { CliError, isPermissionError } from "./cli_error.ts";
import { decodeUtf8Strict, type Utf8Start } from "./utf8_text.ts";
import { writeErr } from "./tty.ts";
import { typedElsewhere } from "./task_folder.ts";

/** What read all of stdin (e.g. `--resume -`), once something did. */
let stdinReader: string | null = null;

/** What already read all of stdin (e.g. `--resume -`), or null: stdin can be read only once. */
export function stdinReadBy(): string | null {
  return stdinReader;
}

/**
 * Reads all of stdin as text, for `what` (e.g. `--resume -`). Stdin can be read only once: a second read is
 * a usage error that names both readers. At a terminal a line on stderr says how to end the input. Bytes that
 * are not UTF-8 are `invalid_input` (exit 2) naming the first bad byte's offset; a byte order mark is dropped.
 */
export async function readStdinText(what = "'-'"): Promise<string> {
  const text = decodeUtf8Strict(await readStdinBytes(what), { label: "<stdin>" });
  return text.startsWith("\ufeff") ? text.slice(1) : text;
}

/**
 * Records that `what` reads stdin (a second reader is a usage error naming both) and, at a terminal, says on
 * stderr how to end what is typed: 'oam tools validate -' would otherwise wait without a word.
 */
function claimStdin(what: string): void {
  if (stdinReader !== null) {
    throw CliError.usage(`Only one input can come from stdin: ${stdinReader} reads it, so ${what} cannot.`);
  }
  stdinReader = what;
  if (Deno.stdin.isTerminal()) {
    writeErr(
      "Reading stdin from the terminal: type or paste it, then press Ctrl-D at the start of a line.\n",
    );
  }
}

/** Reads all of stdin as bytes, for `what` (e.g. `--tools -`); like {@link readStdinText}, only once. */
async function readStdinBytes(what: string): Promise<Uint8Array> {
  claimStdin(what);
  return new Uint8Array(await new Response(Deno.stdin.readable).arrayBuffer());
}

/**
 * Refuses `-` (stdin) for the input files of a command that reads what the user types from stdin (`oam chat`,
 * `oam npc`): `files` maps what names each file (`--resume`) to its path, if given.
 *
 * @example
 * ```ts
 * import { refuseStdinFiles } from "./input.ts";
 * refuseStdinFiles("chat", { "--resume": "talk.json", "--tools": undefined }); // fine
 * // refuseStdinFiles("chat", { "--resume": "-" }) throws: "oam chat reads what you type from stdin:
 * // --resume cannot come from stdin ('-'); give a file."
 * ```
 */
export function refuseStdinFiles(command: string, files: Record<string, string | undefined>): void {
  for (const [what, path] of Object.entries(files)) {
    if (path === "-") {
      throw CliError.usage(
        `oam ${command} reads what you type from stdin: ${what} cannot come from stdin ('-'); give a file.`,
      );
    }
  }
}

/**
 * Reads a file, or stdin for `-`, without a leading byte order mark. An input file that cannot be read (missing, a directory, no permission) or is not UTF-8 text is
 * `invalid_input` (exit 2) with the path in the message, after the `flag` that named it when one did, like
 * one that is not valid JSON.
 */
export async function readInputText(path: string, flag?: string): Promise<string> {
  const bytes = path === "-"
    ? await readStdinBytes(flag === undefined ? "'-'" : `${flag} -`)
    : await readInputBytes(path, flag);
  const text = decodeUtf8Strict(bytes, { label: path === "-" ? "<stdin>" : path });
  // A byte order mark (Windows Notepad and some editors save UTF-8 with one) is not part of the text.
  return text.startsWith("\ufeff") ? text.slice(1) : text;
}

/** The bytes of the file at `path`, or `invalid_input` saying why it cannot be read. */
async function readInputBytes(path: string, flag?: string): Promise<Uint8Array> {
  try {
    return await Deno.readFile(path);
  } catch (error) {
    // The flag that named the file, when one did: "--script: No such file: 'steps.json'."
    const by = flag === undefined ? "" : `${flag}: `;
    if (error instanceof Deno.errors.NotFound) {
      throw CliError.invalidInput(`${by}No such file: '${path}'${typedElsewhere(path)}.`);
    }
    if (error instanceof Deno.errors.IsADirectory) {
      throw CliError.invalidInput(`${by}'${path}' is a directory, not a file.`);
    }
    if (isPermissionError(error)) {
      throw CliError.invalidInput(`${by}Cannot read '${path}': permission denied (run with --allow-read).`);
    }
    throw CliError.invalidInput(`${by}Cannot read '${path}': ${(error as Error).message}`);
  }
}

/** The first syntax error of JSONC `text`, in words: "expected ',' or '}' at line 3, column 5 (found …)". */
export function describeSyntaxError(text: string): string | null {
  // The containers open at the error, innermost last ("}" for objects, "]" for arrays).
  const open: string[] = [];
  let problem: string | null = null;
  visit(text, {
    onObjectBegin: () => {
      open.push("}");
    },
    onObjectEnd: () => {
      open.pop();
    },
    onArrayBegin: () => {
      open.push("]");
    },
    onArrayEnd: () => {
      open.pop();
    },
    onError: (code, offset, length, startLine, startCharacter) => {
      if (problem !== null) return;
      const closer = open.length > 0 ? open[open.length - 1] : null;
      const found = offset >= text.length
        ? "the end of the input"
        : `'${text.slice(offset, offset + Math.max(1, Math.min(length, 20)))}'`;
      problem = `${expectation(code, closer)} at line ${startLine + 1}, column ${
        startCharacter + 1
      } (found ${found})`;
    },
  }, { allowTrailingComma: true, disallowComments: false });
  return problem;
}

/** What the parser wanted, for an error code of jsonc-parser. */
function expectation(code: ParseErrorCode, closer: string | null): string {
  switch (printParseErrorCode(code)) {
    case "CommaExpected":
      return closer === null ? "expected ','" : `expected ',' or '${closer}'`;
    case "CloseBraceExpected":
      return "expected ',' or '}'";
    case "CloseBracketExpected":
      return "expected ',' or ']'";
    case "ColonExpected":
      return "expected ':' after the property name";
    case "PropertyNameExpected":
      return "expected a property name in double quotes";
    case "ValueExpected":
      return "expected a value";
    case "EndOfFileExpected":
      return "expected the end of the input after the JSON value";
    case "InvalidNumberFormat":
      return "invalid number";
    case "UnexpectedEndOfNumber":
      return "incomplete number";
    case "UnexpectedEndOfString":
      return "unterminated string";
    case "UnexpectedEndOfComment":
      return "unterminated comment";
    case "InvalidCommentToken":
      return "invalid comment";
    case "InvalidUnicode":
      return "invalid \\u escape";
    case "InvalidEscapeCharacter":
      return "invalid escape in a string";
    case "InvalidCharacter":
      return "invalid character in a string (control characters must be escaped)";
    default:
      return "unexpected character";
  }
}

function nodeValue(node: Node, depth: number): JsonValue {
  if (depth > 512) throw CliError.invalidInput("The JSON nests too deeply.");
  switch (node.type) {
    case "object": {
      const out: JsonObject = {};
      for (const property of node.children ?? []) {
        const [key, value] = property.children ?? [];
        if (!key || !value) continue;
        // defineProperty: a "__proto__" key stays an ordinary own property.
        Object.defineProperty(out, String(key.value), {
          value: nodeValue(value, depth + 1),
          enumerable: true,
          writable: true,
          configurable: true,
        });
      }
      return out;
    }
    case "array":
      return (node.children ?? []).map((child) => nodeValue(child, depth + 1));
    case "string":
    case "number":
    case "boolean":
      return node.value;
    default:
      return null;
  }
}

/**
 * Parses JSON or JSONC (comments and trailing commas allowed). Errors are `invalid_input` with
 * "<label>: not valid JSON: expected ',' or '}' at line 3, column 5 (found '\"b\"')." (see
 * {@link describeSyntaxError}).
 *
 * @example
 * ```ts
 * import { parseJsonc } from "./input.ts";
 * parseJsonc('{"a": 1, // note\n}', "x.jsonc"); // {a: 1}
 * ```
 */
export function parseJsonc(text: string, label: string): JsonValue {
  if (text.trim() === "") throw CliError.invalidInput(`${label}: empty input; expected JSON.`);
  const problem = describeSyntaxError(text);
  if (problem !== null) throw CliError.invalidInput(`${label}: not valid JSON: ${problem}.`);
  const tree = parseTree(text, [], { allowTrailingComma: true, disallowComments: false });
  if (!tree) throw CliError.invalidInput(`${label}: empty input; expected JSON.`);
  return nodeValue(tree, 0);
}

/** Reads and parses a JSON/JSONC file (or stdin for `-`; `flag` names what reads it, e.g. `--schema`). */
export async function readJsonInput(path: string, flag?: string): Promise<JsonValue> {
  const text = await readInputText(path, flag);
  return parseJsonc(text, path === "-" ? "<stdin>" : path);
}

/**
 * Reads lines from a byte stream (stdin by default) on demand. Reads may be withdrawn with a signal without
 * losing the line they would have received; `null` means end of input (Ctrl-D).
 *
 * @example
 * ```ts
 * import { LineReader } from "./input.ts";
 * const reader = new LineReader(new Blob(["a\nb"]).stream());
 * await reader.readLine(); // "a"
 * ```
 */
export class LineReader {
  readonly #source: ReadableStream<Uint8Array>;
  #reader: ReadableStreamDefaultReader<Uint8Array> | null = null;
  #lines: string[] = [];
  /** The bytes of the line being read, and where it starts in the input. */
  #partial: Uint8Array = new Uint8Array(0);
  #start: Utf8Start = { offset: 0, line: 1 };
  #eof = false;
  /** Why the input stopped early (a line that is not UTF-8), given to reads once the lines before it are. */
  #error: CliError | null = null;
  #waiters: Array<{ resolve: (line: string | null) => void; reject: (error: CliError) => void }> = [];
  #pumping = false;

  /** A reader over `source` (default: stdin). Nothing is read before the first `readLine`. */
  constructor(source?: ReadableStream<Uint8Array>) {
    this.#source = source ?? Deno.stdin.readable;
  }

  /** True once the input has ended and every buffered line was taken. */
  get ended(): boolean {
    return this.#eof && this.#lines.length === 0;
  }

  /**
   * The next line without its line break, or null at end of input. With `signal`, an abort resolves the
   * read with undefined and leaves the next line for a later read. A line that is not UTF-8 text rejects the
   * read (and every later one) with `invalid_input` naming its first bad byte, once the lines before it
   * were read.
   */
  readLine(signal?: AbortSignal): Promise<string | null | undefined> {
    if (this.#lines.length > 0) return Promise.resolve(this.#lines.shift()!);
    if (this.#error) return Promise.reject(this.#error);
    if (this.#eof) return Promise.resolve(null);
    if (signal?.aborted) return Promise.resolve(undefined);
    return new Promise((resolve, reject) => {
      const waiter = {
        resolve: (line: string | null) => {
          signal?.removeEventListener("abort", onAbort);
          resolve(line);
        },
        reject: (error: CliError) => {
          signal?.removeEventListener("abort", onAbort);
          reject(error);
        },
      };
      const onAbort = () => {
        this.#waiters = this.#waiters.filter((w) => w !== waiter);
        resolve(undefined);
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      this.#waiters.push(waiter);
      this.#pump();
    });
  }

  #deliver(): void {
    while (this.#waiters.length > 0 && this.#lines.length > 0) {
      this.#waiters.shift()!.resolve(this.#lines.shift()!);
    }
    if (this.#eof && this.#lines.length === 0) {
      const waiters = this.#waiters;
      this.#waiters = [];
      for (const w of waiters) this.#error ? w.reject(this.#error) : w.resolve(null);
    }
  }

  /** Decodes one line's bytes (without its `\n`) and queues it; a line that is not UTF-8 ends the input. */
  #take(bytes: Uint8Array): void {
    if (this.#error) return;
    try {
      let line = decodeUtf8Strict(bytes, { label: "<stdin>", start: this.#start }).replace(/\r$/, "");
      // A byte order mark at the start of the input is not part of the first line.
      if (this.#start.offset === 0 && line.startsWith("\ufeff")) line = line.slice(1);
      this.#lines.push(line);
    } catch (error) {
      this.#error = error as CliError;
      this.#eof = true;
    }
    this.#start = { offset: this.#start.offset + bytes.length + 1, line: this.#start.line + 1 };
  }

  async #pump(): Promise<void> {
    if (this.#pumping) return;
    this.#pumping = true;
    try {
      this.#reader ??= this.#source.getReader();
      while (this.#waiters.length > 0 && this.#lines.length === 0 && !this.#eof) {
        const { value, done } = await this.#reader.read();
        if (done) {
          if (this.#partial.length > 0) this.#take(this.#partial);
          this.#partial = new Uint8Array(0);
          this.#eof = true;
        } else {
          const bytes = new Uint8Array(this.#partial.length + value.length);
          bytes.set(this.#partial);
          bytes.set(value, this.#partial.length);
          let from = 0;
          for (let nl = bytes.indexOf(0x0a); nl >= 0 && !this.#eof; nl = bytes.indexOf(0x0a, from)) {
            this.#take(bytes.subarray(from, nl));
            from = nl + 1;
          }
          this.#partial = bytes.slice(from);
        }
        this.#deliver();
      }
    } catch {
      this.#eof = true;
      this.#deliver();
    } finally {
      this.#pumping = false;
    }
  }
}
