/**
 * The stdio transport: spawns a bridge (`oam stdio`, a compiled binary, or `deno run … cli.ts stdio`) and
 * exchanges one JSON message per line over its stdin and stdout.
 * @module
 */
import type { JsonValue } from "../protocol/json.ts";
import { encodeClientMessage, MAX_MESSAGE_BYTES } from "../protocol/codec.ts";
import { BridgeError } from "../protocol/errors.ts";
import { settledWithin } from "../util/sleep.ts";
import { grantedEnvVar } from "../util/env.ts";
import { bridgeCommand, bridgeCommandSource, bridgeEnvironment } from "./bridge_command.ts";
import type { JsonRpcMessage, RequestId } from "./messages.ts";
import { messageTooLong, type Transport } from "./transport.ts";

/**
 * The path of the checkout's `cli.ts` when this client was imported from a local checkout (a script that
 * imports `mod.ts` by path), so the hint of a missing `oam` names the command to paste; null when the client
 * came from JSR or elsewhere (or the file is not there, when reading is granted; nothing is asked for).
 */
function checkoutCli(): string | null {
  const url = new URL("../../cli.ts", import.meta.url);
  if (url.protocol !== "file:") return null;
  let path = decodeURIComponent(url.pathname);
  if (Deno.build.os === "windows") path = path.replace(/^\/([A-Za-z]:)/, "$1").replaceAll("/", "\\");
  try {
    if (Deno.permissions.querySync({ name: "read", path }).state === "granted") Deno.statSync(path);
  } catch {
    return null;
  }
  return path;
}

/**
 * Options of a {@link StdioTransport}.
 *
 * @example
 * ```ts
 * import { StdioTransport, type StdioTransportOptions } from "@open-apple-models/bridge";
 * const options: StdioTransportOptions = {
 *   command: ["deno", "run", "--allow-read", "--allow-env", "--allow-ffi", "cli.ts", "stdio"],
 *   stderr: "piped", // keep the bridge's last log lines for the error when it dies
 *   exitTimeoutMs: 1000,
 * };
 * const transport = new StdioTransport(options);
 * transport.command[0]; // "deno"
 * ```
 */
export interface StdioTransportOptions {
  /** The bridge's argv (default: {@link bridgeCommand}: `OAM_BRIDGE_COMMAND`, `OAM_BRIDGE_PATH`, `oam stdio`). */
  command?: readonly string[];
  /**
   * Extra environment variables for the child. `OAM_EXIT_WITH_PARENT=1` is added (the bridge stops when this
   * process exits or is killed) unless it is set here or in the inherited environment (as far as
   * `--allow-env` lets this process read it): `{ OAM_EXIT_WITH_PARENT: "0" }` turns it off.
   */
  env?: Record<string, string>;
  /** Start the child with only {@link StdioTransportOptions.env}, not this process's environment. */
  clearEnv?: boolean;
  /** Working directory of the child. */
  cwd?: string | URL;
  /**
   * The child's stderr (its logs): `"inherit"` (default), `"null"`, or `"piped"` to keep the last 4 KiB
   * and add them to the reason when the process ends on its own.
   */
  stderr?: "inherit" | "null" | "piped";
  /** How long `close()` waits for the process to exit after closing its stdin, before SIGTERM (default 3000 ms). */
  exitTimeoutMs?: number;
  /**
   * The longest line the bridge reads, in bytes (default: the `--max-line-bytes` of `command`, else the
   * bridge's default, 16 MiB). A longer message is refused before it is sent, with `-32600 invalid_message`.
   */
  maxLineBytes?: number;
}

/** The value of `--max-line-bytes` in a bridge's argv, or undefined. */
function maxLineBytesOf(command: readonly string[]): number | undefined {
  for (let i = 0; i < command.length; i++) {
    const arg = command[i];
    const value = arg === "--max-line-bytes"
      ? command[i + 1]
      : arg.startsWith("--max-line-bytes=")
      ? arg.slice("--max-line-bytes=".length)
      : undefined;
    if (value !== undefined && /^\d+$/.test(value)) return Number(value);
  }
  return undefined;
}

const STDERR_TAIL = 4096;

/** Sends `signal` to `child`; false when it has exited already. */
function signalChild(child: Deno.ChildProcess, signal: Deno.Signal): boolean {
  try {
    child.kill(signal);
    return true;
  } catch {
    return false;
  }
}

function describeStatus(status: Deno.CommandStatus): string {
  return status.signal ? `signal ${status.signal}` : `exit code ${status.code}`;
}

/**
 * A transport over a spawned bridge process. When the process ends without `close()`, `onclose` gets the
 * reason (its exit status, and its last stderr lines with `stderr: "piped"`).
 *
 * `close()` closes the child's stdin (the bridge answers what it has read, then exits), waits up to
 * `exitTimeoutMs`, then sends SIGTERM, and after 2 s more SIGKILL; a stopped process (SIGSTOP) is continued
 * first, so it reads the end of its stdin. The child keeps this process alive only while a request waits for
 * its answer (and while closing), not one the client gave up on (an abort, a timeout, a bridge that did not
 * answer the cancel): a script that ends without `close()` exits, and the bridge then reads the end of its
 * stdin and stops. The bridge is started with `OAM_EXIT_WITH_PARENT=1`
 * (unless the variable is set already): when this process is killed or crashes, the bridge cancels its turns
 * and exits instead of running them on for nobody (Linux and macOS).
 *
 * @example
 * ```ts
 * import { Bridge, StdioTransport } from "@open-apple-models/bridge";
 * const transport = new StdioTransport({ command: ["oam", "stdio", "--log-level", "error"] });
 * const open = () => Bridge.connect(transport); // spawns it
 * typeof open; // "function"
 * ```
 */
export class StdioTransport implements Transport {
  /** Receives each message the bridge writes. */
  onmessage?: (message: JsonValue) => void;
  /** Called once when the process has ended and its output is read. */
  onclose?: (reason?: Error) => void;
  /** Called for a line that is not JSON. */
  onerror?: (error: Error) => void;
  /** The argv that was (or will be) started. */
  readonly command: string[];
  /** `close()` ends the child's input after the messages sent before it, and reads its answers to the end. */
  readonly drainsOnClose = true;
  readonly #options: StdioTransportOptions;
  #child: Deno.ChildProcess | null = null;
  #writer: WritableStreamDefaultWriter<Uint8Array> | null = null;
  #done: Promise<void> | null = null;
  #closing = false;
  #closed = false;
  #stderrTail = "";
  #exitStatus: Deno.CommandStatus | null = null;
  readonly #encoder = new TextEncoder();
  readonly #maxLineBytes: number;
  /**
   * Ids of the requests sent and not answered yet. Only while there are any (or while closing) does the
   * child keep this process alive: a script that ends without `close()` exits instead of hanging, and the
   * bridge then reads the end of its stdin and stops.
   */
  readonly #awaiting = new Set<string | number>();

  /** A transport for `options.command` (or the environment's bridge). Nothing starts before `start()`. */
  constructor(options: StdioTransportOptions = {}) {
    this.#options = options;
    this.command = bridgeCommand(options.command);
    this.#maxLineBytes = options.maxLineBytes ?? maxLineBytesOf(this.command) ?? MAX_MESSAGE_BYTES;
  }

  /** The child's pid, once started. */
  get pid(): number | undefined {
    return this.#child?.pid;
  }

  /** How the child exited, once it has (after `close()` resolves, or when `onclose` is called). */
  get exitStatus(): Deno.CommandStatus | null {
    return this.#exitStatus;
  }

  /** What to do when `program` is not found: the ways to name the bridge when it was not given. */
  #notFoundHint(program: string): string {
    if (this.#options.command && this.#options.command.length > 0) return `. '${program}' was not found.`;
    const source = bridgeCommandSource();
    if (source !== null) return `. '${program}' (from ${source}) was not found.`;
    const cli = checkoutCli();
    const fromCheckout = cli === null
      ? `from a checkout: ["deno", "run", "-A", "--no-lock", "<checkout>/cli.ts", "stdio"]`
      : `from this checkout: ["deno", "run", "-A", "--no-lock", ${JSON.stringify(cli)}, "stdio"]`;
    return `. '${program}' was not found: install it (deno install -g -n oam --allow-read --allow-env ` +
      `--allow-ffi jsr:@open-apple-models/bridge/cli), give the command, Bridge.spawn({ command: [...] }) ` +
      `(${fromCheckout}), or set OAM_BRIDGE_PATH (a compiled oam) or OAM_BRIDGE_COMMAND and grant ` +
      "--allow-env to read them.";
  }

  /** Spawns the process. Rejects with `-32023 shut_down` when it cannot be started. */
  start(): Promise<void> {
    if (this.#child || this.#closed) {
      return Promise.reject(new Error("The stdio transport was already started."));
    }
    const [program, ...args] = this.command;
    const stderr = this.#options.stderr ?? "inherit";
    const env = bridgeEnvironment(
      this.#options.env,
      this.#options.clearEnv ? () => undefined : grantedEnvVar,
    );
    try {
      this.#child = new Deno.Command(program, {
        args,
        stdin: "piped",
        stdout: "piped",
        stderr,
        ...(env ? { env } : {}),
        ...(this.#options.clearEnv ? { clearEnv: true } : {}),
        ...(this.#options.cwd ? { cwd: this.#options.cwd } : {}),
      }).spawn();
    } catch (error) {
      this.#closed = true;
      const e = BridgeError.of(
        "shut_down",
        `Cannot start the bridge '${this.command.join(" ")}': ${
          error instanceof Error ? error.message : error
        }${error instanceof Deno.errors.NotFound ? this.#notFoundHint(program) : ""}`,
      );
      e.cause = error;
      return Promise.reject(e);
    }
    this.#child.unref(); // until a request is sent
    this.#writer = this.#child.stdin.getWriter();
    const reading = [this.#readStdout(this.#child)];
    if (stderr === "piped") reading.push(this.#readStderr(this.#child));
    this.#done = Promise.all(reading).then(() => this.#finish());
    return Promise.resolve();
  }

  /** Writes one message as a line. */
  async send(message: JsonRpcMessage): Promise<void> {
    const writer = this.#writer;
    if (!writer || this.#closed || this.#closing) {
      throw BridgeError.of("shut_down", "The bridge process is not running.");
    }
    const bytes = this.#encoder.encode(encodeClientMessage(message) + "\n");
    if (bytes.length - 1 > this.#maxLineBytes) {
      throw messageTooLong({
        bytes: bytes.length - 1,
        limit: this.#maxLineBytes,
        option: "maxLineBytes",
        ...("method" in message ? { method: message.method } : {}),
      });
    }
    const id = "method" in message && "id" in message ? message.id : null;
    if (id !== null && id !== undefined && !this.#awaiting.has(id)) {
      if (this.#awaiting.size === 0) this.#child?.ref();
      this.#awaiting.add(id);
    }
    try {
      await writer.write(bytes);
    } catch (error) {
      if (id !== null && id !== undefined) this.#answered({ id }); // never sent: nothing to wait for
      // The process no longer reads (it died or closed its input): the connection is gone, as its end will say.
      const e = BridgeError.of(
        "shut_down",
        `The bridge process no longer reads its input: ${error instanceof Error ? error.message : error}`,
      );
      e.cause = error;
      throw e;
    }
  }

  /** Notes a response to one of this side's requests: the child lets the process exit once none is left. */
  #answered(message: JsonValue): void {
    if (typeof message !== "object" || message === null || Array.isArray(message) || "method" in message) {
      return;
    }
    const id = message.id;
    if ((typeof id === "string" || typeof id === "number") && this.#awaiting.delete(id)) {
      if (this.#awaiting.size === 0 && !this.#closing) this.#child?.unref();
    }
  }

  /**
   * The peer gave up waiting for request `id` (see {@link Transport.abandoned}): the child no longer keeps
   * this process alive for it, so a script that gave up on a stopped bridge can end without `close()`.
   */
  abandoned(id: RequestId): void {
    this.#answered({ id });
  }

  /**
   * Ends the process (stdin closed, then SIGTERM, then SIGKILL) and waits until its output is read. A stopped
   * process (SIGSTOP) is continued (SIGCONT) first, so that it reads the end of its input.
   */
  async close(): Promise<void> {
    const child = this.#child;
    if (!child || !this.#done) {
      if (!this.#closed) {
        this.#closed = true;
        this.onclose?.();
      }
      return;
    }
    if (!this.#closing) {
      this.#closing = true;
      child.ref(); // this process waits for the child to end
      try {
        await this.#writer?.close();
      } catch {
        // the process is gone already
      }
      // A stopped bridge would read nothing until the SIGKILL (SIGTERM too waits for it to go on).
      if (Deno.build.os !== "windows") signalChild(child, "SIGCONT");
      await this.#stop(child);
    }
    await this.#done;
  }

  async #stop(child: Deno.ChildProcess): Promise<void> {
    const wait = (ms: number) => settledWithin(child.status, { ms });
    if (await wait(this.#options.exitTimeoutMs ?? 3000)) return;
    for (const signal of ["SIGTERM", "SIGKILL"] as const) {
      if (!signalChild(child, signal)) return; // already exited
      if (await wait(2000)) return;
    }
  }

  async #readStdout(child: Deno.ChildProcess): Promise<void> {
    let buffer = "";
    try {
      for await (const chunk of child.stdout.pipeThrough(new TextDecoderStream())) {
        buffer += chunk;
        let start = 0;
        let nl: number;
        while ((nl = buffer.indexOf("\n", start)) >= 0) {
          const line = buffer.slice(start, nl).trim();
          start = nl + 1;
          if (line !== "" && !this.#closed) this.#deliver(line);
        }
        buffer = buffer.slice(start);
      }
    } catch (error) {
      this.onerror?.(new Error(`Reading the bridge's output failed: ${String(error)}`));
    }
  }

  #deliver(line: string): void {
    let message: JsonValue;
    try {
      message = JSON.parse(line);
    } catch {
      this.onerror?.(new Error(`The bridge wrote a line that is not JSON: ${line.slice(0, 200)}`));
      return;
    }
    this.#answered(message);
    try {
      this.onmessage?.(message);
    } catch (error) {
      this.onerror?.(error instanceof Error ? error : new Error(String(error)));
    }
  }

  async #readStderr(child: Deno.ChildProcess): Promise<void> {
    try {
      for await (const chunk of child.stderr.pipeThrough(new TextDecoderStream())) {
        this.#stderrTail = (this.#stderrTail + chunk).slice(-STDERR_TAIL);
      }
    } catch {
      // the tail is best effort
    }
  }

  async #finish(): Promise<void> {
    const child = this.#child!;
    const status = await child.status;
    this.#exitStatus = status;
    try {
      await this.#writer?.close();
    } catch {
      // already closed
    }
    if (this.#closed) return;
    this.#closed = true;
    if (this.#closing) {
      this.onclose?.();
      return;
    }
    const tail = this.#stderrTail.trim();
    this.onclose?.(
      new Error(
        `The bridge process exited (${describeStatus(status)})${tail ? `; its last output: ${tail}` : "."}`,
      ),
    );
  }
}
