/**
 * The stdio transport: one JSON message per line on stdin and stdout. Writes are batched per tick, output is
 * bounded (reading pauses while the client does not read), over-long lines are answered and skipped, and at
 * end of input every request already read is answered before the bridge shuts down.
 * @module
 */
import { BridgeError } from "../protocol/errors.ts";
import type { Logger } from "../util/logger.ts";
import { wakeAll } from "../util/waiters.ts";
import type { EngineCore } from "../engine/engine.ts";

/** Default maximum length of one incoming line (bytes). */
export const DEFAULT_MAX_LINE_BYTES = 16 * 1024 * 1024;
/** Default output buffer high-water mark (bytes): reading pauses above it. */
export const DEFAULT_MAX_BUFFERED_OUTPUT = 32 * 1024 * 1024;
/** Default bound on the wait for in-flight requests after end of input (ms). */
export const DEFAULT_EOF_GRACE_MS = 30_000;
/** Default bound on the final flush of output when the bridge ends (ms): a client that never reads again. */
export const DEFAULT_FLUSH_GRACE_MS = 10_000;
/** Most output (UTF-16 units) joined into one write; a longer single line is written alone. */
const MAX_WRITE_BATCH = 1 << 20;

/** Options of {@link serveStdio}. */
export interface StdioOptions {
  /** Input bytes (default stdin). */
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
 * An ordered line writer that batches everything sent in one tick into one write and reports how many
 * bytes are waiting.
 *
 * @example
 * ```ts
 * import { LineWriter } from "./stdio.ts";
 * const writer = new LineWriter(new WritableStream());
 * writer.send('{"jsonrpc":"2.0","id":1,"result":{}}');
 * await writer.flush();
 * ```
 */
export class LineWriter {
  readonly #writer: WritableStreamDefaultWriter<Uint8Array>;
  readonly #encoder = new TextEncoder();
  #queue: string[] = [];
  #queuedBytes = 0;
  #running: Promise<void> | null = null;
  readonly #drainWaiters: Array<() => void> = [];
  #broken = false;
  readonly #lowWater: number;

  /** Writes to `output`; `lowWater` is where paused readers resume. */
  constructor(output: WritableStream<Uint8Array>, lowWater = DEFAULT_MAX_BUFFERED_OUTPUT / 2) {
    this.#writer = output.getWriter();
    this.#lowWater = lowWater;
  }

  /** Bytes waiting to be written (approximate: UTF-16 length). */
  get buffered(): number {
    return this.#queuedBytes;
  }

  /** True once a write failed (the client stopped reading for good). */
  get broken(): boolean {
    return this.#broken;
  }

  /** Queues one line (a newline is added). */
  send(line: string): void {
    if (this.#broken) return;
    this.#queue.push(line);
    this.#queuedBytes += line.length + 1;
    if (!this.#running) this.#running = this.#pump();
  }

  async #pump(): Promise<void> {
    await Promise.resolve();
    while (this.#queue.length > 0) {
      // Bounded batches: joining everything queued at once can exceed the longest possible string.
      const queue = this.#queue;
      let end = 0;
      let size = 0;
      while (end < queue.length && (end === 0 || size + queue[end].length < MAX_WRITE_BATCH)) {
        size += queue[end++].length + 1;
      }
      const batch = end === queue.length ? queue : queue.slice(0, end);
      this.#queue = end === queue.length ? [] : queue.slice(end);
      // The trailing newline comes out of the join: `join(…) + "\n"` would copy the whole batch once more.
      batch.push("");
      const text = batch.join("\n");
      try {
        await this.#writer.write(this.#encoder.encode(text));
      } catch {
        this.#broken = true;
        this.#queue = [];
        this.#queuedBytes = 0;
      }
      this.#queuedBytes = Math.max(0, this.#queuedBytes - text.length);
      if (this.#queuedBytes <= this.#lowWater) this.#wakeDrain();
    }
    this.#running = null;
    this.#wakeDrain();
  }

  #wakeDrain(): void {
    wakeAll(this.#drainWaiters);
  }

  /** Resolves when the buffer is below the low-water mark. */
  drained(): Promise<void> {
    if (this.#queuedBytes <= this.#lowWater || this.#broken) return Promise.resolve();
    return new Promise((resolve) => this.#drainWaiters.push(resolve));
  }

  /** Resolves when everything queued so far is written. */
  async flush(): Promise<void> {
    while (this.#running) await this.#running;
  }

  /** Flushes and releases the output. */
  async close(): Promise<void> {
    await this.flush();
    try {
      await this.#writer.close();
    } catch {
      // already closed
    }
  }
}

/**
 * Splits a byte stream into lines (LF, optional CR before it) and hands each decoded line to `onLine`.
 * Lines over `maxLineBytes` and invalid UTF-8 are reported through `onInvalid` and skipped.
 */
export class LineSplitter {
  readonly #decoder = new TextDecoder("utf-8", { fatal: true });
  /** Replacing decoder: about ten times faster than the fatal one; its output is checked for U+FFFD. */
  readonly #fastDecoder = new TextDecoder("utf-8");
  #parts: Uint8Array[] = [];
  #size = 0;
  #skipping = false;
  readonly #max: number;
  readonly #onLine: (line: string) => void;
  readonly #onInvalid: (error: BridgeError) => void;

  /** A splitter delivering lines to `onLine`. */
  constructor(max: number, onLine: (line: string) => void, onInvalid: (error: BridgeError) => void) {
    this.#max = max;
    this.#onLine = onLine;
    this.#onInvalid = onInvalid;
  }

  /** Feeds a chunk. */
  push(chunk: Uint8Array): void {
    // Fast path: nothing pending and the complete lines of the chunk decode as UTF-8 as a whole and fit the
    // limit. Then one decode and a string split replace per-line byte work; the tail goes the slow way.
    if (this.#size === 0 && !this.#skipping) {
      const last = chunk.lastIndexOf(10);
      if (last >= 0 && last < this.#max) {
        const text = this.#decode(chunk.subarray(0, last + 1));
        if (text !== null) {
          let start = 0;
          for (;;) {
            const nl = text.indexOf("\n", start);
            if (nl === -1) break;
            let end = nl;
            if (end > start && text.charCodeAt(end - 1) === 13) end--;
            this.#onLine(text.slice(start, end));
            start = nl + 1;
          }
          if (last + 1 < chunk.length) this.#take(chunk.subarray(last + 1), false);
          return;
        }
      }
    }
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(10, start);
      if (nl === -1) break;
      this.#take(chunk.subarray(start, nl), true);
      start = nl + 1;
    }
    if (start < chunk.length) this.#take(chunk.subarray(start), false);
  }

  /** Ends the input: a last unterminated line is delivered. */
  end(): void {
    if (this.#size > 0 && !this.#skipping) this.#emit();
    this.#parts = [];
    this.#size = 0;
    this.#skipping = false;
  }

  #take(piece: Uint8Array, complete: boolean): void {
    if (!this.#skipping) {
      if (this.#size + piece.length > this.#max) {
        this.#skipping = true;
        this.#parts = [];
        this.#size = 0;
        this.#onInvalid(
          BridgeError.of("invalid_message", `The message is longer than the limit of ${this.#max} bytes.`, {
            limit: this.#max,
          }),
        );
      } else if (piece.length > 0) {
        this.#parts.push(complete && this.#parts.length === 0 ? piece : piece.slice());
        this.#size += piece.length;
      }
    }
    if (complete) {
      if (!this.#skipping) this.#emit();
      this.#parts = [];
      this.#size = 0;
      this.#skipping = false;
    }
  }

  #emit(): void {
    let bytes: Uint8Array;
    if (this.#parts.length === 1) bytes = this.#parts[0];
    else {
      bytes = new Uint8Array(this.#size);
      let o = 0;
      for (const p of this.#parts) {
        bytes.set(p, o);
        o += p.length;
      }
    }
    if (bytes.length > 0 && bytes[bytes.length - 1] === 13) bytes = bytes.subarray(0, bytes.length - 1);
    const line = this.#decode(bytes);
    if (line === null) {
      this.#onInvalid(BridgeError.of("parse_error", "Invalid UTF-8 in the message."));
      return;
    }
    this.#onLine(line);
  }

  /** Decodes UTF-8, or null when it is invalid. */
  #decode(bytes: Uint8Array): string | null {
    const text = this.#fastDecoder.decode(bytes);
    // U+FFFD is either in the input or marks invalid UTF-8: only then decode strictly to tell.
    if (!text.includes("\uFFFD")) return text;
    try {
      return this.#decoder.decode(bytes);
    } catch {
      return null;
    }
  }
}

/**
 * Serves `engine` over a byte stream pair (stdin/stdout by default). Resolves with the exit code (0) after end
 * of input or a `shutdown` request. The engine must be created with `send` → `writer.send` — use
 * {@link createStdioServer} to wire both.
 */
export interface StdioServer {
  /** The engine. */
  engine: EngineCore;
  /** Runs until end of input or shutdown; resolves with the exit code. */
  run(): Promise<number>;
  /**
   * Shuts down at once (signals): stops reading, cancels the work in flight (every request read still gets
   * its response), flushes within the flush bound and resolves `run`.
   */
  stop(): void;
}

/** Creates a stdio server around an engine built by `makeEngine(send, onShutdown)`. */
export function createStdioServer(
  makeEngine: (send: (line: string) => void, onShutdown: () => void) => EngineCore,
  options: StdioOptions = {},
): StdioServer {
  const output = options.output ?? Deno.stdout.writable;
  const input = options.input ?? Deno.stdin.readable;
  const maxBuffered = options.maxBufferedOutput ?? DEFAULT_MAX_BUFFERED_OUTPUT;
  const writer = new LineWriter(output, maxBuffered / 2);
  let finish!: (code: number) => void;
  const finished = new Promise<number>((resolve) => finish = resolve);
  let done = false;
  // stop() (a signal): stop reading and waiting at once, cancel the work in flight, exit.
  let stopping = false;
  let wakeStop!: () => void;
  const stopped = new Promise<void>((resolve) => wakeStop = resolve);
  const bounded = async (work: Promise<void>, ms: number) => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([work, stopped, new Promise<void>((r) => timer = setTimeout(r, ms))]);
    clearTimeout(timer);
  };
  const end = async () => {
    if (done) return;
    done = true;
    // A client that stopped reading must not keep the bridge alive forever.
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([
      writer.close(),
      new Promise<void>((r) => timer = setTimeout(r, options.flushGraceMs ?? DEFAULT_FLUSH_GRACE_MS)),
    ]);
    clearTimeout(timer);
    finish(0);
  };
  const engine = makeEngine((line) => writer.send(line), () => void end());
  // Lines of the current chunk that wait because too much output is queued: the pause is per line, so one
  // chunk full of requests with large responses cannot queue unbounded output.
  let backlog: Array<string | BridgeError> | null = null;
  let backlogHead = 0;
  const splitter = new LineSplitter(
    options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES,
    (line) => {
      if (backlog === null && writer.buffered <= maxBuffered) engine.receive(line);
      else (backlog ??= []).push(line);
    },
    (error) => {
      if (backlog === null) engine.reportInvalid(error);
      else backlog.push(error);
    },
  );
  const drainBacklog = async () => {
    while (backlog !== null && !done && !stopping) {
      if (writer.buffered > maxBuffered) await Promise.race([writer.drained(), stopped]);
      if (stopping) break;
      const item = backlog[backlogHead++];
      if (backlogHead === backlog.length) {
        backlog = null;
        backlogHead = 0;
      }
      if (typeof item === "string") engine.receive(item);
      else engine.reportInvalid(item);
    }
    backlog = null;
  };
  const reader = input.getReader();
  const graceful = async () => {
    if (!stopping) {
      engine.markInputClosed();
      await bounded(engine.idle(), options.eofGraceMs ?? DEFAULT_EOF_GRACE_MS);
    }
    await engine.shutdown();
    await end();
  };
  const readLoop = async () => {
    try {
      for (;;) {
        await drainBacklog();
        if (writer.buffered > maxBuffered) await Promise.race([writer.drained(), stopped]);
        if (stopping) break;
        const { value, done: eof } = await reader.read();
        if (eof || done || stopping) break;
        splitter.push(value);
        if (engine.phase !== "running") break;
      }
    } catch (error) {
      options.logger?.warning(`Reading input failed: ${String(error)}`);
    }
    if (!stopping) {
      splitter.end();
      await drainBacklog();
    }
    try {
      reader.releaseLock();
    } catch {
      // still reading
    }
    if (!done && engine.phase === "running") await graceful();
  };
  return {
    engine,
    run: () => {
      readLoop();
      return finished;
    },
    stop: () => {
      if (done || stopping) return;
      stopping = true;
      wakeStop();
      reader.cancel().catch(() => {});
    },
  };
}
