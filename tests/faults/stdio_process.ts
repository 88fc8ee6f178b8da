/**
 * Test helper: the real `deno run cli.ts stdio` process with line-level access to stdin, stdout and stderr,
 * deadlines on every wait (a hung bridge fails the test instead of hanging it), and RSS sampling.
 */
import type { JsonObject } from "../../src/protocol/json.ts";

/** Path of cli.ts. */
export const CLI = new URL("../../cli.ts", import.meta.url).pathname;
/** The flags of `deno task stdio`. */
export const TASK_FLAGS = ["--allow-read", "--allow-env", "--allow-ffi"];

/** Options of {@link StdioProcess}. */
export interface StdioProcessOptions {
  /** Deno permission flags (default the stdio task's). */
  flags?: string[];
  /** Environment (default: empty, plus what is given). */
  env?: Record<string, string>;
  /** Do not read stdout until {@link StdioProcess.startReading} (backpressure tests). */
  paused?: boolean;
}

/** A spawned bridge. */
export class StdioProcess {
  readonly child: Deno.ChildProcess;
  /** Parsed output messages in order. */
  readonly messages: JsonObject[] = [];
  /** Raw stdout lines. */
  readonly lines: string[] = [];
  /** stderr text so far. */
  stderr = "";
  readonly #writer: WritableStreamDefaultWriter<Uint8Array>;
  readonly #encoder = new TextEncoder();
  #waiters: Array<() => void> = [];
  #reading: Promise<void> | null = null;
  #stderrDone: Promise<void>;
  #stdoutClosed = false;

  /** Spawns `deno run <flags> cli.ts stdio <args>`. */
  constructor(args: string[] = [], options: StdioProcessOptions = {}) {
    this.child = new Deno.Command(Deno.execPath(), {
      args: ["run", "--quiet", "--no-prompt", ...(options.flags ?? TASK_FLAGS), CLI, "stdio", ...args],
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
      clearEnv: true,
      env: { PATH: Deno.env.get("PATH") ?? "", ...cacheEnv(), ...options.env },
    }).spawn();
    this.#writer = this.child.stdin.getWriter();
    this.#stderrDone = this.#readStderr();
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

  async #readStdout(): Promise<void> {
    const decoder = new TextDecoder();
    let rest = "";
    for await (const chunk of this.child.stdout) {
      rest += decoder.decode(chunk, { stream: true });
      let nl: number;
      while ((nl = rest.indexOf("\n")) !== -1) {
        const line = rest.slice(0, nl);
        rest = rest.slice(nl + 1);
        this.lines.push(line);
        this.messages.push(JSON.parse(line));
      }
      this.#wake();
    }
    if (rest !== "") this.lines.push(rest);
    this.#stdoutClosed = true;
    this.#wake();
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

  /** Writes one line (a string is sent as is plus a newline; an object as JSON with jsonrpc added). */
  async send(message: string | JsonObject): Promise<void> {
    const text = typeof message === "string" ? message : JSON.stringify({ jsonrpc: "2.0", ...message });
    await this.#writer.write(this.#encoder.encode(text + "\n"));
  }

  /** Writes raw bytes. */
  async write(bytes: Uint8Array): Promise<void> {
    await this.#writer.write(bytes);
  }

  /** Sends a request. */
  async request(id: string | number, method: string, params?: JsonObject): Promise<void> {
    await this.send({ id, method, ...(params ? { params } : {}) });
  }

  /** Waits until `predicate` holds (checked on every output), or throws after `timeoutMs`. */
  async until(predicate: () => boolean, timeoutMs = 10_000, what = "a condition"): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!predicate()) {
      const left = deadline - Date.now();
      if (left <= 0 || (this.#stdoutClosed && !predicate())) {
        throw new Error(
          `${this.#stdoutClosed ? "stdout closed" : "timed out"} waiting for ${what}\nstdout:\n${
            this.lines.slice(-30).join("\n")
          }\nstderr:\n${this.stderr.slice(-3000)}`,
        );
      }
      let timer: ReturnType<typeof setTimeout> | undefined;
      await new Promise<void>((resolve) => {
        this.#waiters.push(resolve);
        timer = setTimeout(resolve, Math.min(left, 100));
      });
      clearTimeout(timer);
    }
  }

  /** Waits for a message matching `predicate`; returns it. */
  async waitFor(
    predicate: (m: JsonObject) => boolean,
    timeoutMs = 10_000,
    what = "a message",
  ): Promise<JsonObject> {
    let found: JsonObject | undefined;
    await this.until(() => (found = this.messages.find(predicate)) !== undefined, timeoutMs, what);
    return found!;
  }

  /** Waits for the response to `id`. */
  response(id: string | number, timeoutMs = 10_000): Promise<JsonObject> {
    return this.waitFor(
      (m) => m.id === id && !("method" in m) && ("result" in m || "error" in m),
      timeoutMs,
      `the response to ${JSON.stringify(id)}`,
    );
  }

  /** The `n`-th `tool/call` (1-based). */
  async toolCall(n = 1, timeoutMs = 10_000): Promise<JsonObject> {
    const calls = () => this.messages.filter((m) => m.method === "tool/call");
    await this.until(() => calls().length >= n, timeoutMs, `tool/call #${n}`);
    return calls()[n - 1];
  }

  /** Closes stdin. */
  async closeInput(): Promise<void> {
    try {
      await this.#writer.close();
    } catch {
      // already closed
    }
  }

  /** Waits for the exit (killing the process after `timeoutMs`); returns the code, or null when killed. */
  async exit(timeoutMs = 10_000): Promise<number | null> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const status = await Promise.race([
      this.child.status,
      new Promise<null>((r) => timer = setTimeout(() => r(null), timeoutMs)),
    ]);
    clearTimeout(timer);
    if (status === null) {
      try {
        this.child.kill("SIGKILL");
      } catch {
        // gone
      }
      await this.child.status;
    }
    this.startReading();
    await this.#reading;
    await this.#stderrDone;
    return status === null ? null : status.code;
  }

  /** Kills the process (cleanup) and releases every stream. */
  async kill(): Promise<void> {
    try {
      this.child.kill("SIGKILL");
    } catch {
      // already gone
    }
    await this.closeInput();
    await this.exit(5000);
  }

  /** Resident set size of the process in kB (Linux /proc), or null. */
  rssKb(): number | null {
    return readRssKb(this.child.pid);
  }
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

/** Deno's cache location variables, so a child with a clean environment finds the npm/module cache. */
function cacheEnv(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of ["DENO_DIR", "HOME", "XDG_CACHE_HOME", "DENO_NO_UPDATE_CHECK", "NPM_CONFIG_REGISTRY"]) {
    const v = Deno.env.get(name);
    if (v !== undefined) out[name] = v;
  }
  return out;
}

/** The error object of a response. */
export function errorOf(m: JsonObject): JsonObject {
  if (!("error" in m)) throw new Error(`expected an error: ${JSON.stringify(m)}`);
  return m.error as JsonObject;
}
