/**
 * Test helpers of the turn tests of the interactive commands (`oam chat`, `oam npc`): the command runs as a
 * process with piped stdio ({@link Conversation}) or on a pseudo-terminal ({@link Terminal}), against a
 * scripted model or a mock OpenAI-compatible server ({@link modelServer}) whose streams the test holds open
 * ({@link gatedSse}) or cuts off.
 */
import type { JsonObject, JsonValue } from "../../src/protocol/json.ts";
import { DEADLINE_MS, statusWithin } from "../helpers/deadline.ts";
import { chunk, json, MockServer } from "../models/openai_mock_server.ts";
import { childEnv, CLI, oamCommand, type RunResult, StreamWatcher } from "./cli_helper.ts";

/** A streamed text piece of a chat completion. */
export function text(content: string, finish: string | null = null): JsonValue {
  return chunk({ content }, finish);
}

/** The stream of a tool call (the model asks for `name` with `args`). */
export function toolCallChunk(name: string, args: JsonObject): JsonValue {
  const call = {
    index: 0,
    id: "call_1",
    type: "function",
    function: { name, arguments: JSON.stringify(args) },
  };
  return chunk({ tool_calls: [call] }, "tool_calls");
}

/** A mock model server offering model "m"; the n-th chat completion is answered by `answers[n]`. */
export function modelServer(answers: Array<(server: MockServer) => Response>): MockServer {
  return new MockServer((request, _index, server) => {
    if (request.path === "/v1/models") return json({ object: "list", data: [{ id: "m", object: "model" }] });
    const n = server.chatBodies.length - 1;
    return answers[Math.min(n, answers.length - 1)](server);
  });
}

/** An SSE answer that sends `before`, waits for `gate`, then sends `after` and `[DONE]`. */
export function gatedSse(before: JsonValue[], gate: Promise<void>, after: JsonValue[]): Response {
  const encoder = new TextEncoder();
  const event = (data: string) => encoder.encode(`data: ${data}\n\n`);
  const body = new ReadableStream<Uint8Array>({
    start: async (controller) => {
      try {
        for (const item of before) controller.enqueue(event(JSON.stringify(item)));
        await gate;
        for (const item of after) controller.enqueue(event(JSON.stringify(item)));
        controller.enqueue(event("[DONE]"));
        controller.close();
      } catch {
        // the client went away
      }
    },
  });
  return new Response(body, { headers: { "content-type": "text/event-stream" } });
}

/** A gate the test opens. */
export function gate(): { opened: Promise<void>; open: () => void } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => open = resolve);
  return { opened, open };
}

/** Makes a FIFO at `path` (mkfifo): a command tool and the test tell each other things through it. */
export async function makeFifo(path: string): Promise<string> {
  const made = await new Deno.Command("mkfifo", { args: [path] }).output();
  if (made.code !== 0) throw new Error(`mkfifo ${path}: ${new TextDecoder().decode(made.stderr)}`);
  return path;
}

/**
 * The command tool `slow_lookup` with a 1 s timeout: it runs until stopped, then writes "stopped" to `fifo`
 * (the test reads the FIFO: the stop is an event, not a guess at timing). A POSIX shell script.
 */
export function slowLookupTool(fifo: string): JsonObject {
  return {
    name: "slow_lookup",
    description: "Looks something up, slowly.",
    timeoutSeconds: 1,
    "x-oam": {
      command: `trap 'kill $! 2>/dev/null; echo stopped > "${fifo}"; exit 1' TERM; sleep 30 & wait`,
    },
  };
}

/** `oam <args>` running with piped stdio: the test types lines and watches stdout as it comes. */
export class Conversation {
  readonly child: Deno.ChildProcess;
  readonly out: StreamWatcher;
  readonly #command: string;
  readonly #writer: WritableStreamDefaultWriter<Uint8Array>;
  readonly #stderr: Promise<string>;

  constructor(args: string[]) {
    this.#command = `oam ${args[0]}`;
    this.child = oamCommand(args).spawn();
    this.out = new StreamWatcher(this.child.stdout);
    this.#writer = this.child.stdin.getWriter();
    this.#stderr = new Response(this.child.stderr).text();
  }

  /** Types `line` and Enter. */
  async say(line: string): Promise<void> {
    await this.#writer.write(new TextEncoder().encode(`${line}\n`));
  }

  /** Waits until stdout contains `part`. */
  async until(part: string): Promise<void> {
    await this.out.until((t) => t.includes(part));
  }

  /** Closes stdin and waits for the exit. */
  async end(): Promise<RunResult> {
    await this.#writer.close();
    const [status, stderr, stdout] = await Promise.all([
      statusWithin(this.child, `${this.#command} to exit at the end of its input`),
      this.#stderr,
      this.out.rest(),
    ]);
    return { code: status.code, stdout, stderr };
  }

  /** Kills the process if it still runs (after a failed assertion). */
  async kill(): Promise<void> {
    try {
      this.child.kill("SIGKILL");
    } catch {
      return; // exited already
    }
    await this.child.status;
    await this.#stderr;
    await this.out.rest().catch(() => {});
  }
}

/** `word` quoted for sh. */
function shQuote(word: string): string {
  return `'${word.replaceAll("'", `'\\''`)}'`;
}

/** Where {@link Terminal} sends the command's stdout or stderr instead of the terminal (one of them). */
export type TerminalOptions =
  /** stderr goes to this file (so no spinner is drawn); stdout is the terminal. */
  | { stderr: string; stdout?: undefined; stdin?: undefined }
  /**
   * stdout goes to `file`, directly or (`pipe`) through a pipe to `cat` (which ignores Ctrl-C, like
   * `tee -i`: the terminal sends SIGINT to both); stderr is the terminal (a spinner may be drawn there: see
   * {@link withoutSpinner}).
   */
  | { stdout: { file: string; pipe?: boolean }; stderr?: undefined; stdin?: undefined }
  /**
   * stdin is read from this file, a FIFO the test writes to (piped input: the command prompts for nothing);
   * stdout and stderr are the terminal, where Ctrl-C is typed.
   */
  | { stdin: string; stdout?: undefined; stderr?: undefined };

/** The terminal output without the spinner's frames and their erasing (drawn on stderr after 150 ms). */
export function withoutSpinner(screen: string): string {
  return screen.replace(new RegExp("\r\x1b\\[K(?:[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] [^\r\n]*)?", "g"), "");
}

/**
 * `oam <args>` on a pseudo-terminal (util-linux `script`): stdin a terminal; stdout the terminal and stderr a
 * file, or stdout a file (or a pipe to one) and stderr the terminal; or stdin a FIFO and both outputs the
 * terminal; no colors. The terminal echoes what is
 * typed, and ends lines with CRLF.
 */
export class Terminal {
  readonly child: Deno.ChildProcess;
  readonly out: StreamWatcher;
  readonly #command: string;
  readonly #writer: WritableStreamDefaultWriter<Uint8Array>;
  readonly #stderrPath: string | undefined;

  constructor(args: string[], options: TerminalOptions) {
    this.#command = `oam ${args[0]}`;
    this.#stderrPath = options.stderr;
    const argv = [Deno.execPath(), "run", "--quiet", "-A", CLI, ...args].map(shQuote).join(" ");
    const out = options.stdout;
    const line = options.stdin !== undefined
      ? `exec ${argv} <${shQuote(options.stdin)}`
      : out === undefined
      ? `exec ${argv} 2>${shQuote(options.stderr)}`
      : out.pipe
      ? `${argv} | (trap '' INT; exec cat >${shQuote(out.file)})`
      : `exec ${argv} >${shQuote(out.file)}`;
    this.child = new Deno.Command("script", {
      args: ["-qefc", line, "/dev/null"],
      stdin: "piped",
      stdout: "piped",
      stderr: "null",
      clearEnv: true,
      env: childEnv({ NO_COLOR: "1", TERM: "dumb" }),
    }).spawn();
    this.out = new StreamWatcher(this.child.stdout);
    this.#writer = this.child.stdin.getWriter();
  }

  /** Types `keys` (no Enter added). */
  async type(keys: string): Promise<void> {
    await this.#writer.write(new TextEncoder().encode(keys));
  }

  /** Waits until the screen so far ends with `tail` (a prompt waiting for input). */
  async prompt(tail: string): Promise<void> {
    await this.out.until((t) => t.endsWith(tail));
  }

  /**
   * Waits for the exit; the screen (as `stdout`) and the stderr file (empty when stderr is the terminal). With
   * stdout through a pipe, `code` is the exit code of `cat`.
   */
  async exit(): Promise<RunResult> {
    const status = await statusWithin(this.child, `${this.#command} on a terminal to exit`, DEADLINE_MS);
    const stdout = await this.out.rest();
    await this.#writer.close().catch(() => {});
    const stderr = this.#stderrPath === undefined ? "" : await Deno.readTextFile(this.#stderrPath);
    return { code: status.code, stdout, stderr };
  }

  /** Kills the terminal if it still runs (after a failed assertion). */
  async kill(): Promise<void> {
    try {
      this.child.kill("SIGKILL");
    } catch {
      return;
    }
    await this.child.status;
    await this.out.rest().catch(() => {});
  }
}
