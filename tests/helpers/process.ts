/**
 * The process harness of the tests: the real `deno run cli.ts stdio` with line-level access to stdin, stdout
 * and stderr. Raw lines in and out (each stdout line is kept as text and, when it is a JSON object, parsed);
 * every wait has a deadline, so a hung bridge fails the test with what it wrote instead of stalling CI.
 *
 * ```ts
 * import assert from "node:assert/strict";
 * import { BridgeProcess } from "./process.ts";
 *
 * const p = new BridgeProcess(["--tool-timeout", "5"]);
 * await p.request(1, "ping");
 * assert.deepEqual(await p.response(1), { jsonrpc: "2.0", id: 1, result: {} });
 * await p.closeInput();
 * assert.equal(await p.exit(), 0);
 * ```
 */
import type { JsonObject, JsonValue } from "../../src/protocol/json.ts";
import { DEADLINE_MS } from "./deadline.ts";

/** Path of cli.ts. */
export const CLI: string = new URL("../../cli.ts", import.meta.url).pathname;
/** The permission flags of `deno task stdio`. */
export const STDIO_FLAGS: readonly string[] = ["--allow-read", "--allow-env", "--allow-ffi"];
/** Default deadline of every wait (ms). */
export const DEFAULT_TIMEOUT_MS = DEADLINE_MS;

/**
 * True when this test process has the `__proto__` accessor (`--unstable-unsafe-proto`, see `deno task
 * test:proto`); spawned bridges then get it too, so the same tests probe the same prototype behaviour.
 */
export const UNSAFE_PROTO: boolean = ({} as Record<string, unknown>)["__proto__"] !== undefined;

/** Options of {@link BridgeProcess}. */
export interface BridgeProcessOptions {
  /** Deno permission flags (default {@link STDIO_FLAGS}). */
  flags?: readonly string[];
  /** Environment added to a clean one (PATH, Deno's cache variables and NO_COLOR only). */
  env?: Record<string, string>;
  /** Do not read stdout until {@link BridgeProcess.startReading} (backpressure tests). */
  paused?: boolean;
  /** Do not read stderr until {@link BridgeProcess.startReadingStderr} (a client that never reads it). */
  stderrPaused?: boolean;
  /** Called with every stdout line as it arrives (before it is stored). */
  onLine?: (line: string) => void;
  /** Keep output lines that are not one JSON object in `badLines` instead of failing the next wait. */
  tolerateBadLines?: boolean;
  /** Do not keep lines and messages (long runs that consume them through `onLine`). */
  discard?: boolean;
  /**
   * A Deno script that starts the bridge (`deno run <its arguments>`) with its own stdin and stdout, like a
   * game would; `child` is then that script's process (tests/faults/bridge_parent.ts).
   */
  launcher?: string;
}

/** A spawned bridge. */
export class BridgeProcess {
  readonly child: Deno.ChildProcess;
  /** Raw stdout lines, in order. */
  readonly lines: string[] = [];
  /** The lines that are JSON objects, parsed, in order. */
  readonly messages: JsonObject[] = [];
  /** Lines that are not a JSON object (always a bridge bug: stdout is the protocol). */
  readonly badLines: string[] = [];
  /** stderr text so far. */
  stderr = "";
  /** Text after the last newline when stdout ended (a partial line), else "". */
  trailing = "";
  readonly #options: BridgeProcessOptions;
  readonly #writer: WritableStreamDefaultWriter<Uint8Array>;
  readonly #encoder = new TextEncoder();
  #waiters: Array<() => void> = [];
  #reader: ReadableStreamDefaultReader<Uint8Array> | null = null;
  #reading: Promise<void> | null = null;
  #stderrDone: Promise<void> | null = null;
  #stdoutClosed = false;
  #status: Deno.CommandStatus | null = null;

  /** Spawns `deno run <flags> cli.ts stdio <args>`. */
  constructor(args: readonly string[] = [], options: BridgeProcessOptions = {}) {
    this.#options = options;
    const flags = [...(options.flags ?? STDIO_FLAGS), ...(UNSAFE_PROTO ? ["--unstable-unsafe-proto"] : [])];
    const bridge = ["--quiet", "--no-prompt", ...flags, CLI, "stdio", ...args];
    this.child = new Deno.Command(Deno.execPath(), {
      args: options.launcher === undefined
        ? ["run", ...bridge]
        : ["run", "--quiet", "--allow-run", "--allow-read", "--allow-env", options.launcher, ...bridge],
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
      clearEnv: true,
      env: { ...baseEnv(), ...options.env },
    }).spawn();
    this.child.status.then((s) => {
      this.#status = s;
      this.#wake();
    });
    this.#writer = this.child.stdin.getWriter();
    if (!options.stderrPaused) this.startReadingStderr();
    if (!options.paused) this.startReading();
  }

  /** The child's pid. */
  get pid(): number {
    return this.child.pid;
  }

  /** Starts consuming stdout (idempotent). */
  startReading(): void {
    this.#reading ??= this.#readStdout();
  }

  /** Starts consuming stderr into {@link stderr} (idempotent). */
  startReadingStderr(): void {
    this.#stderrDone ??= this.#readStderr();
  }

  /** Stops reading stdout and closes it: the bridge's next writes fail (a client that went away). */
  async stopReading(): Promise<void> {
    this.startReading();
    await this.#reader?.cancel().catch(() => {});
    await this.#reading;
  }

  async #readStdout(): Promise<void> {
    const decoder = new TextDecoder();
    const reader = this.#reader = this.child.stdout.getReader();
    let rest = "";
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        rest += decoder.decode(value, { stream: true });
        let nl: number;
        while ((nl = rest.indexOf("\n")) !== -1) {
          this.#accept(rest.slice(0, nl));
          rest = rest.slice(nl + 1);
        }
        this.#wake();
      }
    } catch {
      // cancelled by stopReading()
    }
    this.trailing = rest + decoder.decode();
    this.#stdoutClosed = true;
    this.#wake();
  }

  #accept(line: string): void {
    this.#options.onLine?.(line);
    if (this.#options.discard) return;
    this.lines.push(line);
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      value = undefined;
    }
    if (typeof value === "object" && value !== null && !Array.isArray(value)) {
      this.messages.push(value as JsonObject);
    } else this.badLines.push(line);
  }

  async #readStderr(): Promise<void> {
    const decoder = new TextDecoder();
    for await (const chunk of this.child.stderr) {
      this.stderr += decoder.decode(chunk, { stream: true });
      this.#wake();
    }
  }

  #wake(): void {
    const w = this.#waiters;
    this.#waiters = [];
    for (const f of w) f();
  }

  /** Writes raw bytes or text (nothing added). */
  async write(data: Uint8Array | string): Promise<void> {
    await this.#writer.write(typeof data === "string" ? this.#encoder.encode(data) : data);
  }

  /** Writes one line: a string as is, an object as JSON with `"jsonrpc": "2.0"` added; then a newline. */
  async send(message: string | JsonObject): Promise<void> {
    const text = typeof message === "string" ? message : JSON.stringify({ jsonrpc: "2.0", ...message });
    await this.write(text + "\n");
  }

  /** Sends a request. */
  async request(id: string | number, method: string, params?: JsonObject): Promise<void> {
    await this.send({ id, method, ...(params ? { params } : {}) });
  }

  /**
   * Waits until `predicate` holds (checked on every output), or throws after `timeoutMs` with the tail of
   * stdout and stderr. Also throws when stdout ends first, or when the bridge wrote a line that is not JSON.
   */
  async until(predicate: () => boolean, timeoutMs = DEFAULT_TIMEOUT_MS, what = "a condition"): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (this.badLines.length > 0 && !this.#options.tolerateBadLines) {
        throw new Error(
          `the bridge wrote a line that is not a JSON object: ${this.badLines[0].slice(0, 300)}`,
        );
      }
      if (predicate()) return;
      const left = deadline - Date.now();
      if (left <= 0 || this.#stdoutClosed) {
        const why = this.#stdoutClosed ? "stdout closed" : `timed out after ${timeoutMs} ms`;
        throw new Error(`${why} waiting for ${what}\n${this.tail()}`);
      }
      let timer: ReturnType<typeof setTimeout> | undefined;
      await new Promise<void>((resolve) => {
        this.#waiters.push(resolve);
        timer = setTimeout(resolve, left);
      });
      clearTimeout(timer);
    }
  }

  /** Waits for a message matching `predicate`; returns it. */
  async waitFor(
    predicate: (m: JsonObject) => boolean,
    timeoutMs = DEFAULT_TIMEOUT_MS,
    what = "a message",
  ): Promise<JsonObject> {
    let found: JsonObject | undefined;
    await this.until(() => (found = this.messages.find(predicate)) !== undefined, timeoutMs, what);
    return found!;
  }

  /** Waits for the response to `id`. */
  response(id: JsonValue, timeoutMs = DEFAULT_TIMEOUT_MS): Promise<JsonObject> {
    return this.waitFor(
      (m) => m.id === id && !("method" in m) && ("result" in m || "error" in m),
      timeoutMs,
      `the response to ${JSON.stringify(id)}`,
    );
  }

  /** The `n`-th `tool/call` (1-based). */
  async toolCall(n = 1, timeoutMs = DEFAULT_TIMEOUT_MS): Promise<JsonObject> {
    const calls = () => this.messages.filter((m) => m.method === "tool/call");
    await this.until(() => calls().length >= n, timeoutMs, `tool/call #${n}`);
    return calls()[n - 1];
  }

  /** Messages related to request `id`: its notifications (by requestId), tool/calls and response, in order. */
  related(id: JsonValue): JsonObject[] {
    return this.messages.filter((m) => {
      const p = m.params as JsonObject | undefined;
      return m.id === id && !("method" in m) || (p !== undefined && p.requestId === id);
    });
  }

  /** Closes stdin (end of input). */
  async closeInput(): Promise<void> {
    try {
      await this.#writer.close();
    } catch {
      // already closed
    }
  }

  /**
   * Waits for the exit and the end of its output; returns the exit code. After `timeoutMs` the process is
   * killed and this throws, with the tail of stdout and stderr.
   */
  async exit(timeoutMs = DEFAULT_TIMEOUT_MS): Promise<number> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const status = await Promise.race([
      this.child.status,
      new Promise<null>((r) => timer = setTimeout(() => r(null), timeoutMs)),
    ]);
    clearTimeout(timer);
    if (status === null) {
      this.#signal("SIGKILL");
      await this.child.status;
    }
    this.startReading();
    this.startReadingStderr();
    await this.#reading;
    await this.#stderrDone;
    if (status === null) throw new Error(`the bridge did not exit within ${timeoutMs} ms\n${this.tail()}`);
    return status.code;
  }

  /** The exit status once the process has ended, else null. */
  get status(): Deno.CommandStatus | null {
    return this.#status;
  }

  /** Sends a signal (ignored when the process is gone). */
  #signal(signal: Deno.Signal): void {
    try {
      this.child.kill(signal);
    } catch {
      // already gone
    }
  }

  /** Kills the process (test cleanup) and releases every stream. */
  async kill(): Promise<void> {
    this.#signal("SIGKILL");
    await this.closeInput();
    await this.child.status;
    this.startReading();
    this.startReadingStderr();
    await this.#reading;
    await this.#stderrDone;
  }

  /** Resident set size of the process in kB (Linux /proc), or null. */
  rssKb(): number | null {
    return readRssKb(this.child.pid);
  }

  /** The last lines of stdout and stderr, for failure messages. */
  tail(): string {
    return `stdout (last 30 lines):\n${this.lines.slice(-30).join("\n")}\nstderr:\n${
      this.stderr.slice(-3000)
    }`;
  }
}

/**
 * Runs `deno task --quiet <args>` in the repository (NO_COLOR set); stdin gets `input` (then closed) or
 * nothing. Resolves with the exit code and the decoded output.
 */
export async function denoTask(
  args: string[],
  input?: string,
): Promise<{ code: number; stdout: string; stderr: string }> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["task", "--quiet", ...args],
    cwd: new URL("../../", import.meta.url).pathname,
    stdin: input === undefined ? "null" : "piped",
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).spawn();
  if (input !== undefined) {
    const writer = child.stdin.getWriter();
    await writer.write(new TextEncoder().encode(input));
    await writer.close();
  }
  const out = await child.output();
  const decoder = new TextDecoder();
  return { code: out.code, stdout: decoder.decode(out.stdout), stderr: decoder.decode(out.stderr) };
}

/** VmRSS of `pid` in kB from /proc (Linux), or null. */
export function readRssKb(pid: number): number | null {
  try {
    const status = Deno.readTextFileSync(`/proc/${pid}/status`);
    const m = /^VmRSS:\s+(\d+) kB/m.exec(status);
    return m ? Number(m[1]) : null;
  } catch {
    return null;
  }
}

/** PATH, Deno's cache location variables (so a child with a clean environment finds the caches) and NO_COLOR. */
function baseEnv(): Record<string, string> {
  const out: Record<string, string> = { NO_COLOR: "1" };
  for (
    const name of [
      "PATH",
      "DENO_DIR",
      "HOME",
      "XDG_CACHE_HOME",
      "DENO_NO_UPDATE_CHECK",
      "NPM_CONFIG_REGISTRY",
    ]
  ) {
    const v = Deno.env.get(name);
    if (v !== undefined) out[name] = v;
  }
  return out;
}

/** The error object of a response (throws when it is not an error response). */
export function errorOf(m: JsonObject): JsonObject {
  if (!("error" in m)) throw new Error(`expected an error: ${JSON.stringify(m)}`);
  return m.error as JsonObject;
}
