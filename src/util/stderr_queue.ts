/**
 * Log output to stderr that never stops the process: a game may pipe the bridge's stderr and never read it,
 * and a synchronous write into a full pipe would block the event loop (no more answers, no SIGTERM).
 * @module
 */

/** Most bytes waiting for stderr; lines past it are dropped and counted. */
export const STDERR_BUFFER_BYTES = 1 << 20;

const encoder = new TextEncoder();

/** Text for one stream, written in order by asynchronous writes, with at most `limit` bytes waiting. */
export class StderrQueue {
  readonly #out: { write(bytes: Uint8Array): Promise<number> } | null;
  readonly #limit: number;
  #pending: Uint8Array[] = [];
  #bytes = 0;
  #dropped = 0;
  #closed = false;
  #writing: Promise<void> | null = null;

  /** A queue writing to `out` (default: the process's stderr, looked up at the first write). */
  constructor(
    out: { write(bytes: Uint8Array): Promise<number> } | null = null,
    limit: number = STDERR_BUFFER_BYTES,
  ) {
    this.#out = out;
    this.#limit = limit;
  }

  /** Bytes not yet written. */
  get pendingBytes(): number {
    return this.#bytes;
  }

  /** Queues `text`; drops it (counted) when the queue is full, and everything once the stream has closed. */
  push(text: string): void {
    if (this.#closed) return;
    const bytes = encoder.encode(text);
    if (this.#bytes + bytes.length > this.#limit) {
      this.#dropped++;
      return;
    }
    this.#pending.push(bytes);
    this.#bytes += bytes.length;
    this.#writing ??= this.#pump();
  }

  /** Resolves when everything queued is written, or after `timeoutMs` (a stream nobody reads). */
  async flush(timeoutMs: number): Promise<void> {
    if (this.#writing === null) return;
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([this.#writing, new Promise<void>((r) => timer = setTimeout(r, timeoutMs))]);
    clearTimeout(timer);
  }

  async #pump(): Promise<void> {
    try {
      const out = this.#out ?? Deno.stderr;
      while (this.#pending.length > 0) {
        const chunk = concat(this.#pending);
        this.#pending = [];
        for (let at = 0; at < chunk.length;) at += await out.write(chunk.subarray(at));
        this.#bytes -= chunk.length;
        if (this.#dropped > 0 && this.#pending.length === 0) {
          const n = this.#dropped;
          this.#dropped = 0;
          const notice =
            `[open-apple-models] warning: ${n} log line${n === 1 ? " was" : "s were"} dropped: ` +
            "stderr was not being read.\n";
          this.#pending.push(encoder.encode(notice));
          this.#bytes += notice.length;
        }
      }
    } catch {
      // stderr closed: nothing more can be written
      this.#closed = true;
      this.#pending = [];
      this.#bytes = 0;
    } finally {
      this.#writing = null;
    }
  }
}

function concat(parts: Uint8Array[]): Uint8Array {
  if (parts.length === 1) return parts[0];
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** The process's stderr queue (shared by every logger, so lines keep their order). */
export const stderrQueue: StderrQueue = new StderrQueue();
