/**
 * Input helpers of the commands: reading a file or stdin (`-`), JSON/JSONC parsing with line:column errors
 * (prototype-safe), and a line reader over stdin for the interactive commands.
 * @module
 */
import { type Node, type ParseError, parseTree, printParseErrorCode } from "jsonc-parser";
import type { JsonObject, JsonValue } from "../protocol/json.ts";
import { CliError, isPermissionError } from "./cli_error.ts";

/** Reads all of stdin as text. */
export async function readStdinText(): Promise<string> {
  return await new Response(Deno.stdin.readable).text();
}

/** Reads a file, or stdin for `-`. Missing files are `io_error` (exit 1) with the path in the message. */
export async function readInputText(path: string): Promise<string> {
  if (path === "-") return await readStdinText();
  try {
    return await Deno.readTextFile(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) throw new CliError("io_error", `No such file: '${path}'.`);
    if (error instanceof Deno.errors.IsADirectory) {
      throw new CliError("io_error", `'${path}' is a directory, not a file.`);
    }
    if (isPermissionError(error)) {
      throw new CliError("io_error", `Cannot read '${path}': permission denied (run with --allow-read)`);
    }
    throw new CliError("io_error", `Cannot read '${path}': ${(error as Error).message}`);
  }
}

function position(text: string, offset: number): string {
  let line = 1;
  let column = 1;
  for (let i = 0; i < offset && i < text.length; i++) {
    if (text[i] === "\n") {
      line++;
      column = 1;
    } else column++;
  }
  return `${line}:${column}`;
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
 * "<label>:<line>:<column>: <problem>".
 *
 * @example
 * ```ts
 * import { parseJsonc } from "./input.ts";
 * parseJsonc('{"a": 1, // note\n}', "x.jsonc"); // {a: 1}
 * ```
 */
export function parseJsonc(text: string, label: string): JsonValue {
  if (text.trim() === "") throw CliError.invalidInput(`${label}: empty input; expected JSON.`);
  const errors: ParseError[] = [];
  const tree = parseTree(text, errors, { allowTrailingComma: true, disallowComments: false });
  if (errors.length > 0) {
    const e = errors[0];
    throw CliError.invalidInput(
      `${label}:${position(text, e.offset)}: ${printParseErrorCode(e.error)} — not valid JSON.`,
    );
  }
  if (!tree) throw CliError.invalidInput(`${label}: empty input; expected JSON.`);
  return nodeValue(tree, 0);
}

/** Reads and parses a JSON/JSONC file (or stdin for `-`). */
export async function readJsonInput(path: string): Promise<JsonValue> {
  const text = await readInputText(path);
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
  #reader: ReadableStreamDefaultReader<string> | null = null;
  #lines: string[] = [];
  #partial = "";
  #eof = false;
  #waiters: Array<(line: string | null) => void> = [];
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
   * read with undefined and leaves the next line for a later read.
   */
  readLine(signal?: AbortSignal): Promise<string | null | undefined> {
    if (this.#lines.length > 0) return Promise.resolve(this.#lines.shift()!);
    if (this.#eof) return Promise.resolve(null);
    if (signal?.aborted) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      const waiter = (line: string | null) => {
        signal?.removeEventListener("abort", onAbort);
        resolve(line);
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
    while (this.#waiters.length > 0 && this.#lines.length > 0) this.#waiters.shift()!(this.#lines.shift()!);
    if (this.#eof) {
      const waiters = this.#waiters;
      this.#waiters = [];
      for (const w of waiters) w(null);
    }
  }

  async #pump(): Promise<void> {
    if (this.#pumping) return;
    this.#pumping = true;
    try {
      this.#reader ??= this.#source.pipeThrough(new TextDecoderStream()).getReader();
      while (this.#waiters.length > 0 && this.#lines.length === 0 && !this.#eof) {
        const { value, done } = await this.#reader.read();
        if (done) {
          if (this.#partial !== "") this.#lines.push(this.#partial.replace(/\r$/, ""));
          this.#partial = "";
          this.#eof = true;
        } else {
          const parts = (this.#partial + value).split("\n");
          this.#partial = parts.pop()!;
          for (const p of parts) this.#lines.push(p.replace(/\r$/, ""));
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
