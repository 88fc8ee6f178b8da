/**
 * The stdio transport: one JSON message per line on stdin and stdout. Writes are batched per tick, output is
 * bounded (reading pauses while the client does not read), over-long lines are answered and skipped, and at
 * end of input every request already read is answered before the bridge shuts down.
 * @module
 */
import { MAX_MESSAGE_BYTES } from "../protocol/codec.ts";
import type { BridgeError } from "../protocol/errors.ts";
import type { Logger } from "../util/logger.ts";
import { settledWithin } from "../util/sleep.ts";
import type { EngineCore } from "../engine/engine.ts";
import { DEFAULT_MAX_BUFFERED_OUTPUT, LineSplitter, LineWriter } from "./line_io.ts";

/** Default maximum length of one incoming line (bytes). */
export const DEFAULT_MAX_LINE_BYTES: number = MAX_MESSAGE_BYTES;
/** Default bound on the wait for in-flight requests after end of input (ms). */
export const DEFAULT_EOF_GRACE_MS = 30_000;
/** Default bound on the final flush of output when the bridge ends (ms): a client that never reads again. */
export const DEFAULT_FLUSH_GRACE_MS = 10_000;

/**
 * Options of {@link createStdioServer}.
 *
 * @example
 * ```ts
 * import {
 *   BridgeEngine,
 *   createStdioServer,
 *   stderrLogger,
 *   type StdioOptions,
 * } from "@open-apple-models/bridge/engine";
 * const options: StdioOptions = { maxLineBytes: 1 << 20, logger: stderrLogger("warning", "my-game") };
 * async function serveStdio(): Promise<never> {
 *   const server = createStdioServer((send, onShutdown) => new BridgeEngine({ onShutdown }, send), options);
 *   Deno.exit(await server.run());
 * }
 * ```
 */
export interface StdioOptions {
  /**
   * Input bytes (default stdin). Not a socket's `conn.readable`: Deno closes the connection when it ends, and
   * the answers still to come after a client's end of input are lost; read the socket with `conn.read`
   * (docs/extending.md, "A transport of your own").
   */
  input?: ReadableStream<Uint8Array>;
  /** Output bytes (default stdout). */
  output?: WritableStream<Uint8Array>;
  /** Longest accepted line in bytes. */
  maxLineBytes?: number;
  /** Output bytes waiting before reading pauses. */
  maxBufferedOutput?: number;
  /** Bound on the wait for in-flight requests after end of input. */
  eofGraceMs?: number;
  /** Bound on the final flush of output when the bridge ends. */
  flushGraceMs?: number;
  /** Where transport problems are logged. */
  logger?: Logger;
}

/**
 * Serves an engine over a byte stream pair (stdin/stdout by default): lines in through `engine.receive`,
 * the engine's output through one batching writer. Reading pauses while too much output waits (per line: one
 * chunk full of requests with large responses cannot queue unbounded output). At end of input every request
 * read is answered (bounded by `eofGraceMs`) before the bridge shuts down; `run` resolves with the exit code
 * (0) after end of input or a `shutdown` request. Make one with {@link createStdioServer}.
 *
 * @example
 * ```ts
 * import { BridgeEngine, createStdioServer } from "@open-apple-models/bridge/engine";
 * const input = new Blob(['{"jsonrpc":"2.0","id":1,"method":"ping"}\n']).stream();
 * const lines: string[] = [];
 * const decoder = new TextDecoder();
 * const output = new WritableStream<Uint8Array>({ write: (b) => void lines.push(decoder.decode(b)) });
 * const server = createStdioServer((send, onShutdown) => new BridgeEngine({ onShutdown }, send), {
 *   input,
 *   output,
 * });
 * await server.run(); // 0, at the end of input
 * lines.join(""); // '{"jsonrpc":"2.0","id":1,"result":{}}\n'
 * ```
 */
export class StdioServer {
  /** The engine it serves (built by `makeEngine` around the server's writer). */
  readonly engine: EngineCore;
  readonly #options: StdioOptions;
  readonly #writer: LineWriter;
  readonly #maxBuffered: number;
  readonly #reader: ReadableStreamDefaultReader<Uint8Array>;
  readonly #splitter: LineSplitter;
  /** Aborted by stop() (a signal): stop reading and waiting at once, cancel the work in flight, exit. */
  readonly #stop = new AbortController();
  readonly #finished: Promise<number>;
  #finish!: (code: number) => void;
  #done = false;
  /** Lines (and input errors) of the current chunk waiting because too much output is queued. */
  #backlog: Array<string | BridgeError> | null = null;
  #backlogHead = 0;

  /** @internal Use {@link createStdioServer}. */
  constructor(
    makeEngine: (send: (line: string) => void, onShutdown: () => void) => EngineCore,
    options: StdioOptions,
  ) {
    this.#options = options;
    this.#maxBuffered = options.maxBufferedOutput ?? DEFAULT_MAX_BUFFERED_OUTPUT;
    // Deno.stdout is done with a chunk once its write resolves: one reused byte array serves every write.
    this.#writer = new LineWriter(options.output ?? Deno.stdout.writable, {
      lowWater: this.#maxBuffered / 2,
      reuseChunks: options.output === undefined,
    });
    this.#finished = new Promise<number>((resolve) => this.#finish = resolve);
    // The per-line paths close over locals: every line of a pipelined burst goes through them.
    const writer = this.#writer;
    const maxBuffered = this.#maxBuffered;
    const engine = this.engine = makeEngine((line) => writer.send(line), () => void this.#end());
    this.#splitter = new LineSplitter(
      options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES,
      (line) => {
        if (this.#backlog === null && writer.buffered <= maxBuffered) engine.receive(line);
        else (this.#backlog ??= []).push(line);
      },
      (error) => this.#invalid(error),
    );
    this.#reader = (options.input ?? Deno.stdin.readable).getReader();
  }

  /** Runs until end of input or shutdown; resolves with the exit code. */
  run(): Promise<number> {
    this.#readLoop();
    return this.#finished;
  }

  /**
   * Shuts down at once (signals): stops reading, cancels the work in flight (every request read still gets
   * its response), flushes within the flush bound and resolves `run`.
   */
  stop(): void {
    if (this.#done || this.#stop.signal.aborted) return;
    this.#stop.abort();
    this.#reader.cancel().catch(() => {});
  }

  get #stopping(): boolean {
    return this.#stop.signal.aborted;
  }

  #invalid(error: BridgeError): void {
    if (this.#backlog === null) this.engine.reportInvalid(error);
    else this.#backlog.push(error);
  }

  /** Waits while more output than the bound is queued (or until stop()). */
  async #waitForOutput(): Promise<void> {
    await settledWithin(this.#writer.drained(), { signal: this.#stop.signal });
  }

  async #readLoop(): Promise<void> {
    try {
      for (;;) {
        // Awaited only when there is something to wait for: an await per chunk read costs a third of
        // pipelined ping throughput (fewer requests per read, more reads).
        if (this.#backlog !== null) await this.#drainBacklog();
        if (this.#writer.buffered > this.#maxBuffered) await this.#waitForOutput();
        if (this.#stopping) break;
        const { value, done: eof } = await this.#reader.read();
        if (eof || this.#done || this.#stopping) break;
        this.#splitter.push(value);
        if (this.engine.phase !== "running") break;
      }
    } catch (error) {
      this.#options.logger?.warning(`Reading input failed: ${String(error)}`);
    }
    if (!this.#stopping) {
      this.#splitter.end();
      await this.#drainBacklog();
    }
    try {
      this.#reader.releaseLock();
    } catch {
      // still reading
    }
    if (this.#done) return;
    if (this.engine.phase === "running") return await this.#graceful();
    // A `shutdown` request ended reading. The engine's `onShutdown` ends the server once the response is
    // out; an engine built without it (a host's `new BridgeEngine({}, send)`) must not leave run() pending.
    if (this.engine.phase === "shut_down") await this.engine.idle();
    await this.#end();
  }

  async #drainBacklog(): Promise<void> {
    while (this.#backlog !== null && !this.#done && !this.#stopping) {
      if (this.#writer.buffered > this.#maxBuffered) await this.#waitForOutput();
      if (this.#stopping) break;
      const backlog: Array<string | BridgeError> = this.#backlog;
      const item = backlog[this.#backlogHead++];
      if (this.#backlogHead === backlog.length) {
        this.#backlog = null;
        this.#backlogHead = 0;
      }
      if (typeof item === "string") this.engine.receive(item);
      else this.engine.reportInvalid(item);
    }
    this.#backlog = null;
  }

  /** End of input: answer what was read (bounded), then shut down and end. */
  async #graceful(): Promise<void> {
    if (!this.#stopping) {
      this.engine.markInputClosed();
      await settledWithin(this.engine.idle(), {
        ms: this.#options.eofGraceMs ?? DEFAULT_EOF_GRACE_MS,
        signal: this.#stop.signal,
      });
    }
    await this.engine.shutdown();
    await this.#end();
  }

  async #end(): Promise<void> {
    if (this.#done) return;
    this.#done = true;
    // A client that stopped reading must not keep the bridge alive forever.
    await settledWithin(this.#writer.close(), { ms: this.#options.flushGraceMs ?? DEFAULT_FLUSH_GRACE_MS });
    this.#finish(0);
  }
}

/**
 * Creates a stdio server around an engine built by `makeEngine(send, onShutdown)`.
 *
 * @example
 * ```ts
 * import { BridgeEngine, createStdioServer } from "@open-apple-models/bridge/engine";
 * async function serveStdio(): Promise<never> {
 *   const server = createStdioServer((send, onShutdown) => new BridgeEngine({ onShutdown }, send));
 *   Deno.exit(await server.run()); // serves stdin/stdout until the end of input or a `shutdown` request
 * }
 * ```
 */
export function createStdioServer(
  makeEngine: (send: (line: string) => void, onShutdown: () => void) => EngineCore,
  options: StdioOptions = {},
): StdioServer {
  return new StdioServer(makeEngine, options);
}
