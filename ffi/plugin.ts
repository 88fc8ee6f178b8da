/**
 * Loading the plugin library and talking to it: `FmLibrary` (dlopen + ABI handshake, one per path per
 * process, never unloaded) and `FmHandle` (an opened plugin: requests, cancellation and the event pump).
 *
 * The pump polls only while at least one request is in flight, so an idle handle holds no pending async op:
 * `deno run` scripts exit and `deno test`'s sanitizers stay quiet. One pump per handle serves every request.
 * This module imports nothing from `src/`.
 * @module
 */
import { granted } from "./locate.ts";
import { cString, FM_SYMBOLS, type FmSymbols, OAMFM_ABI_MAJOR, OAMFM_STATUS, statusName } from "./symbols.ts";

/** The library could not be loaded or opened (missing file, dlopen failure, ABI mismatch, open refused). */
export class FmLoadError extends Error {
  /** Creates the error; `options.cause` keeps the failure it wraps (e.g. the `Deno.dlopen` error). */
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "FmLoadError";
  }
}

/** `oamfm_submit`/`oamfm_cancel` refused the call (closed handle, malformed request, duplicate id). */
export class FmTransportError extends Error {
  /** The transport status code (see `OAMFM_STATUS`). */
  readonly status: number;
  /** Creates the error. */
  constructor(status: number, message?: string) {
    super(message ?? `The plugin refused the request: ${statusName(status)}.`);
    this.name = "FmTransportError";
    this.status = status;
  }
}

/** A request ended with an `error` event (`code` is a protocol `data.code` string or `unsupported`). */
export class FmRemoteError extends Error {
  /** The error code string from the plugin. */
  readonly code: string;
  /** The plugin's `detail` object, if any. */
  readonly detail: Record<string, unknown>;
  /** Creates the error. */
  constructor(code: string, message: string, detail: Record<string, unknown> = {}) {
    super(message);
    this.name = "FmRemoteError";
    this.code = code;
    this.detail = detail;
  }
}

/** One event from `oamfm_poll`. */
export interface FmEvent {
  /** The request id (absent for handle-level events such as `closed`). */
  id?: string;
  /** `text`, `partial`, `result`, `error`, `closed`, `echo`, `log`, … */
  type: string;
  /** Type-specific members. */
  [key: string]: unknown;
}

/** Per-request options. */
export interface FmRequestOptions {
  /** Cancels the request (`oamfm_cancel`); the promise then rejects with `FmRemoteError("cancelled")`. */
  signal?: AbortSignal;
  /** Receives the request's non-terminal events (`text`, `partial`, `echo`, …) in order. */
  onEvent?: (event: FmEvent) => void;
}

/** Tuning of a handle. */
export interface FmHandleOptions {
  /** Timeout of each `oamfm_poll` while requests are in flight (default 1000 ms). */
  pollTimeoutMs?: number;
  /** How long a cancelled request waits for its terminal event before it is abandoned (default 5000 ms). */
  cancelGraceMs?: number;
}

/** Counters for tests and benchmarks. */
export interface FmStats {
  /** `oamfm_poll` calls that returned. */
  polls: number;
  /** Polls that returned a batch. */
  batches: number;
  /** Events dispatched. */
  events: number;
  /** Requests accepted by `oamfm_submit`. */
  submitted: number;
}

interface Pending {
  id: string;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
  onEvent?: (event: FmEvent) => void;
  signal?: AbortSignal;
  onAbort?: () => void;
  aborted: boolean;
  failure?: unknown;
  graceTimer?: ReturnType<typeof setTimeout>;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function cancelledError(message = "The request was cancelled."): FmRemoteError {
  return new FmRemoteError("cancelled", message);
}

const libraries = new Map<string, Deno.DynamicLibrary<typeof FM_SYMBOLS>>();

/** A loaded plugin library (shared per path within the process; never unloaded, see README). */
export class FmLibrary {
  /** The path it was loaded from. */
  readonly path: string;
  /** The library's ABI version. */
  readonly abi: { major: number; minor: number };
  readonly #symbols: FmSymbols;

  private constructor(path: string, symbols: FmSymbols, abi: { major: number; minor: number }) {
    this.path = path;
    this.#symbols = symbols;
    this.abi = abi;
  }

  /**
   * Loads (or reuses) the library at `path` and checks its ABI major version.
   * Throws `FmLoadError` on any failure, including missing `--allow-ffi`.
   */
  static load(path: string, options: { expectedAbiMajor?: number } = {}): FmLibrary {
    const expected = options.expectedAbiMajor ?? OAMFM_ABI_MAJOR;
    let lib = libraries.get(path);
    if (!lib) {
      if (!granted({ name: "ffi", path })) {
        throw new FmLoadError(`Loading the plugin library '${path}' needs --allow-ffi.`);
      }
      try {
        lib = Deno.dlopen(path, FM_SYMBOLS);
      } catch (error) {
        // Deno's message says "Could not open library: " twice before the system's reason.
        const why = (error instanceof Error ? error.message : String(error)).replace(
          /^(?:Could not open library: )+/,
          "Could not open library: ",
        );
        throw new FmLoadError(`Could not load the plugin library '${path}': ${why}`, { cause: error });
      }
      libraries.set(path, lib);
    }
    const version = lib.symbols.oamfm_abi_version();
    const abi = { major: version >>> 16, minor: version & 0xffff };
    if (abi.major !== expected) {
      throw new FmLoadError(
        `ABI mismatch: '${path}' implements plugin ABI ${abi.major}.${abi.minor}, this bridge needs ${expected}.x.`,
      );
    }
    return new FmLibrary(path, lib.symbols, abi);
  }

  /** Opens a plugin handle. Throws `FmLoadError` when the plugin refuses to open. */
  open(options: Record<string, unknown> = {}, handleOptions: FmHandleOptions = {}): FmHandle {
    const json = JSON.stringify({ abi: { major: this.abi.major, minor: this.abi.minor }, ...options });
    const pointer = this.#symbols.oamfm_open(cString(json));
    if (pointer === null) throw new FmLoadError(`The plugin '${this.path}' refused to open.`);
    return new FmHandle(this.#symbols, pointer, handleOptions);
  }
}

/** An open plugin: submits requests, routes their events, cancels and closes. */
export class FmHandle {
  /** Counters (polls, non-empty batches, events, submitted requests). */
  readonly stats: FmStats = { polls: 0, batches: 0, events: 0, submitted: 0 };
  readonly #symbols: FmSymbols;
  #pointer: Deno.PointerObject | null;
  readonly #pending = new Map<string, Pending>();
  readonly #pollTimeoutMs: number;
  readonly #cancelGraceMs: number;
  #nextId = 1;
  #pump: Promise<void> | null = null;

  /** Wraps an opened pointer (use `FmLibrary.open`). */
  constructor(symbols: FmSymbols, pointer: Deno.PointerObject, options: FmHandleOptions = {}) {
    this.#symbols = symbols;
    this.#pointer = pointer;
    this.#pollTimeoutMs = options.pollTimeoutMs ?? 1000;
    this.#cancelGraceMs = options.cancelGraceMs ?? 5000;
  }

  /** True after `close()`. */
  get closed(): boolean {
    return this.#pointer === null;
  }

  /** Requests still waiting for their terminal event. */
  get inFlight(): number {
    return this.#pending.size;
  }

  /** True while the pump has a poll outstanding or is about to issue one. */
  get pumping(): boolean {
    return this.#pump !== null;
  }

  /** Resolves once the pump has stopped (immediately when it is not running). */
  whenIdle(): Promise<void> {
    return this.#pump ?? Promise.resolve();
  }

  /**
   * Sends one request (`{op, …}`; the id is assigned here) and resolves with its `result` payload.
   * Rejects with `FmRemoteError` for an `error` event (and `cancelled` when `signal` aborts), or
   * `FmTransportError` when the plugin refuses the submission.
   */
  request(body: Record<string, unknown>, options: FmRequestOptions = {}): Promise<unknown> {
    const pointer = this.#pointer;
    if (pointer === null) return Promise.reject(new FmTransportError(OAMFM_STATUS.closed));
    if (options.signal?.aborted) return Promise.reject(cancelledError());
    const id = `r${this.#nextId++}`;
    const { id: _ignored, ...rest } = body;
    const json = JSON.stringify({ id, ...rest });
    const status = this.#symbols.oamfm_submit(pointer, cString(json));
    if (status !== OAMFM_STATUS.ok) return Promise.reject(new FmTransportError(status));
    this.stats.submitted++;
    return new Promise<unknown>((resolve, reject) => {
      const pending: Pending = { id, resolve, reject, onEvent: options.onEvent, aborted: false };
      const signal = options.signal;
      if (signal) {
        pending.signal = signal;
        pending.onAbort = () => this.#abort(pending);
        signal.addEventListener("abort", pending.onAbort, { once: true });
      }
      this.#pending.set(id, pending);
      this.#ensurePump();
    });
  }

  /**
   * Closes the plugin handle: every in-flight request rejects with `cancelled`, a waiting poll wakes up.
   * Idempotent. Await `whenIdle()` afterwards to be sure the last poll has returned.
   */
  close(): void {
    const pointer = this.#pointer;
    if (pointer === null) return;
    this.#pointer = null;
    this.#symbols.oamfm_close(pointer);
    for (const pending of [...this.#pending.values()]) {
      this.#settle(pending, () => pending.reject(cancelledError("The system model plugin was closed.")));
    }
  }

  #abort(pending: Pending): void {
    if (pending.aborted || !this.#pending.has(pending.id)) return;
    pending.aborted = true;
    const pointer = this.#pointer;
    if (pointer !== null) {
      // OK: the plugin queued the terminal "cancelled" event; NOT_FOUND: its terminal event is already queued.
      this.#symbols.oamfm_cancel(pointer, cString(pending.id));
    }
    pending.graceTimer = setTimeout(() => {
      pending.graceTimer = undefined;
      this.#settle(pending, () => pending.reject(cancelledError()));
    }, this.#cancelGraceMs);
  }

  #settle(pending: Pending, finish: () => void): void {
    if (!this.#pending.delete(pending.id)) return;
    if (pending.graceTimer !== undefined) clearTimeout(pending.graceTimer);
    if (pending.signal && pending.onAbort) pending.signal.removeEventListener("abort", pending.onAbort);
    finish();
  }

  #ensurePump(): void {
    if (this.#pump !== null) return;
    // Any failure inside the pump (reading or parsing a batch) fails the waiting requests instead of
    // becoming an unhandled rejection that would end the process.
    this.#pump = this.#runPump().catch((error) => this.#failAll(error)).finally(() => {
      this.#pump = null;
      // A request submitted while the last poll was being processed keeps the pump going.
      if (this.#pending.size > 0 && this.#pointer !== null) this.#ensurePump();
    });
  }

  async #runPump(): Promise<void> {
    while (this.#pending.size > 0) {
      const pointer = this.#pointer;
      if (pointer === null) return;
      let batch: Deno.PointerValue;
      try {
        batch = await this.#symbols.oamfm_poll(pointer, this.#pollTimeoutMs);
      } catch (error) {
        this.#failAll(error);
        return;
      }
      this.stats.polls++;
      if (batch === null) continue;
      let text: string;
      try {
        text = Deno.UnsafePointerView.getCString(batch);
      } finally {
        this.#symbols.oamfm_free(batch);
      }
      this.stats.batches++;
      this.#dispatch(text);
    }
  }

  #failAll(error: unknown): void {
    for (const pending of [...this.#pending.values()]) this.#settle(pending, () => pending.reject(error));
  }

  #dispatch(text: string): void {
    let events: unknown;
    try {
      events = JSON.parse(text);
    } catch {
      events = undefined;
    }
    if (!Array.isArray(events)) {
      this.#failAll(new FmRemoteError("generation_failed", "The system model plugin sent malformed events."));
      return;
    }
    for (const event of events) {
      if (!isRecord(event) || typeof event.type !== "string") continue;
      this.stats.events++;
      if (event.type === "closed") {
        for (const pending of [...this.#pending.values()]) {
          this.#settle(pending, () => pending.reject(cancelledError("The system model plugin was closed.")));
        }
        continue;
      }
      if (typeof event.id !== "string") continue;
      const pending = this.#pending.get(event.id);
      if (!pending) continue; // late event of an abandoned request
      if (event.type === "result") {
        this.#settle(pending, () => {
          if (pending.failure !== undefined) pending.reject(pending.failure);
          else if (pending.aborted) pending.reject(cancelledError());
          else pending.resolve(event.result);
        });
      } else if (event.type === "error") {
        const err = isRecord(event.error) ? event.error : {};
        const code = typeof err.code === "string" ? err.code : "generation_failed";
        const message = typeof err.message === "string" ? err.message : "";
        const detail = isRecord(err.detail) ? err.detail : {};
        this.#settle(pending, () => {
          if (pending.failure !== undefined) pending.reject(pending.failure);
          else if (pending.aborted) pending.reject(cancelledError());
          else pending.reject(new FmRemoteError(code, message, detail));
        });
      } else if (!pending.aborted && pending.failure === undefined && pending.onEvent) {
        try {
          pending.onEvent(event as FmEvent);
        } catch (error) {
          // A throwing listener fails its own request (after the plugin confirms the cancellation).
          pending.failure = error;
          this.#abort(pending);
        }
      }
    }
  }
}
