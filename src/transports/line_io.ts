/**
 * Lines over byte streams: an ordered writer that batches a tick's lines into one write and reports what is
 * waiting, and a splitter that turns incoming bytes into lines within a length limit.
 * @module
 */
import { BridgeError } from "../protocol/errors.ts";
import { wakeAll } from "../util/waiters.ts";

/** Default output buffer high-water mark (bytes): reading pauses above it. */
export const DEFAULT_MAX_BUFFERED_OUTPUT = 32 * 1024 * 1024;
/** Most output (UTF-16 units) joined into one write; a longer single line is written alone. */
const MAX_WRITE_BATCH = 1 << 20;
/**
 * Most bytes of the reused output buffer (see {@link LineWriterOptions.reuseChunks}): room for a whole batch at
 * three bytes per UTF-16 unit; a longer single line is encoded into a byte array of its own.
 */
const MAX_REUSED_BYTES = 3 * MAX_WRITE_BATCH;
/** First size of the reused output buffer (it doubles as needed, up to {@link MAX_REUSED_BYTES}). */
const MIN_REUSED_BYTES = 64 * 1024;

/**
 * Options of a {@link LineWriter}.
 *
 * @example
 * ```ts
 * import { LineWriter, type LineWriterOptions } from "./line_io.ts";
 * const options: LineWriterOptions = { lowWater: 1 << 20, reuseChunks: true };
 * const writer = new LineWriter(Deno.stdout.writable, options);
 * ```
 */
export interface LineWriterOptions {
  /** Where paused readers resume (bytes waiting). */
  lowWater?: number;
  /**
   * True when the output is done with a chunk once its write has resolved (as `Deno.stdout.writable` is, which
   * hands the bytes to the operating system): the writer then encodes every batch into one reused byte array
   * instead of a new one per write (a fresh array per batch cost more than the encoding). Never for an output
   * that keeps or queues its chunks.
   */
  reuseChunks?: boolean;
}

/**
 * An ordered line writer that batches everything sent in one tick into one write and reports how many
 * bytes are waiting.
 *
 * @example
 * ```ts
 * import { LineWriter } from "./line_io.ts";
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
  readonly #reuseChunks: boolean;
  /** The reused byte array of {@link LineWriterOptions.reuseChunks} (grown on demand). */
  #bytes: Uint8Array | null = null;

  /** Writes to `output`. */
  constructor(output: WritableStream<Uint8Array>, options: LineWriterOptions = {}) {
    this.#writer = output.getWriter();
    this.#lowWater = options.lowWater ?? DEFAULT_MAX_BUFFERED_OUTPUT / 2;
    this.#reuseChunks = options.reuseChunks ?? false;
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
        await this.#writer.write(this.#encode(text));
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

  /** The UTF-8 bytes of `text`: in the reused byte array when the output allows it and they fit. */
  #encode(text: string): Uint8Array {
    const need = 3 * text.length; // UTF-8 bytes of a UTF-16 unit: at most 3 (a pair's 4 bytes cover 2 units)
    if (!this.#reuseChunks || need > MAX_REUSED_BYTES) return this.#encoder.encode(text);
    let bytes = this.#bytes;
    if (bytes === null || bytes.length < need) {
      bytes = this.#bytes = new Uint8Array(
        Math.min(MAX_REUSED_BYTES, Math.max(need, 2 * (bytes?.length ?? MIN_REUSED_BYTES / 2))),
      );
    }
    return bytes.subarray(0, this.#encoder.encodeInto(text, bytes).written);
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
    let start = 0;
    // A line begun in an earlier chunk is finished the slow way first. Reads of a pipe end anywhere, so most
    // chunks start inside a line: without this, every line of such a chunk went the slow way.
    if (this.#size > 0 || this.#skipping) {
      const nl = chunk.indexOf(10);
      if (nl === -1) {
        this.#take(chunk, false);
        return;
      }
      this.#take(chunk.subarray(0, nl), true);
      start = nl + 1;
    }
    // Fast path: the complete lines of the rest decode as UTF-8 as a whole and fit the limit. Then one
    // decode and a string split replace per-line byte work; the tail goes the slow way.
    const last = chunk.lastIndexOf(10);
    if (last >= start && last - start < this.#max) {
      const text = this.#decode(chunk.subarray(start, last + 1));
      if (text !== null) {
        let from = 0;
        for (;;) {
          const nl = text.indexOf("\n", from);
          if (nl === -1) break;
          let end = nl;
          if (end > from && text.charCodeAt(end - 1) === 13) end--;
          this.#onLine(text.slice(from, end));
          from = nl + 1;
        }
        if (last + 1 < chunk.length) this.#take(chunk.subarray(last + 1), false);
        return;
      }
    }
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
