/**
 * A small JSON-RPC client for a bridge running as a child process (`oam stdio`): what a game engine does,
 * used by `oam demo`. Requests get numeric ids; `tool/call` requests from the bridge go to `onRequest`;
 * notifications go to `onNotification`.
 * @module
 */
import { isJsonObject, type JsonObject, type JsonValue } from "../protocol/json.ts";
import { CliError } from "./cli_error.ts";

/** An error response of the bridge. */
export class RpcError extends CliError {
  /** The JSON-RPC error number. */
  readonly rpcCode: number;

  /** From an `error` object `{code, message, data}`. */
  constructor(error: JsonValue) {
    const e = isJsonObject(error) ? error : {};
    const data = isJsonObject(e.data) ? e.data : {};
    super(
      typeof data.code === "string" ? data.code : "failure",
      typeof e.message === "string" ? e.message : "The bridge reported an error.",
      data,
    );
    this.rpcCode = typeof e.code === "number" ? e.code : 0;
  }
}

/**
 * A client over a spawned bridge's stdin/stdout.
 *
 * @example
 * ```ts
 * import { StdioRpcClient } from "./rpc_client.ts";
 * const child = new Deno.Command("oam", { args: ["stdio"], stdin: "piped", stdout: "piped" }).spawn();
 * const client = new StdioRpcClient(child);
 * await client.request("ping");
 * ```
 */
export class StdioRpcClient {
  /** Receives notifications (`npc/event`, `world/changed`, …). */
  onNotification: (method: string, params: JsonObject) => void = () => {};
  /** Answers bridge requests (`tool/call`); the value is the `result`. A throw becomes an error reply. */
  onRequest: (method: string, params: JsonObject) => Promise<JsonValue> | JsonValue = () => {
    throw new Error("No handler for bridge requests.");
  };
  readonly #child: Deno.ChildProcess;
  readonly #writer: WritableStreamDefaultWriter<Uint8Array>;
  readonly #pending = new Map<number, { resolve: (v: JsonValue) => void; reject: (e: Error) => void }>();
  readonly #encoder = new TextEncoder();
  #next = 0;
  #closed: Error | null = null;
  /** Resolves when the bridge's stdout ends. */
  readonly done: Promise<void>;

  /** Starts reading the child's stdout. `describeExit` explains an unexpected end. */
  constructor(child: Deno.ChildProcess, describeExit: () => Promise<string> = () => Promise.resolve("")) {
    this.#child = child;
    this.#writer = child.stdin.getWriter();
    this.done = this.#read().then(async () => {
      const why = await describeExit();
      this.#fail(new CliError("failure", `The bridge stopped unexpectedly${why ? `: ${why}` : "."}`));
    });
  }

  #fail(error: Error): void {
    this.#closed ??= error;
    for (const p of this.#pending.values()) p.reject(this.#closed);
    this.#pending.clear();
  }

  async #read(): Promise<void> {
    let buffer = "";
    try {
      for await (const chunk of this.#child.stdout.pipeThrough(new TextDecoderStream())) {
        buffer += chunk;
        let nl: number;
        while ((nl = buffer.indexOf("\n")) >= 0) {
          const line = buffer.slice(0, nl).trim();
          buffer = buffer.slice(nl + 1);
          if (line !== "") this.#handle(line);
        }
      }
    } catch {
      // the pipe broke: treated as the end
    }
  }

  #handle(line: string): void {
    let message: JsonValue;
    try {
      message = JSON.parse(line);
    } catch {
      return;
    }
    if (!isJsonObject(message)) return;
    const params = isJsonObject(message.params) ? message.params : {};
    if (typeof message.method === "string") {
      if (message.id === undefined) this.onNotification(message.method, params);
      else this.#answer(message.id, message.method, params);
      return;
    }
    if (typeof message.id !== "number") return;
    const pending = this.#pending.get(message.id);
    if (!pending) return;
    this.#pending.delete(message.id);
    if (Object.hasOwn(message, "error")) pending.reject(new RpcError(message.error));
    else pending.resolve(message.result ?? null);
  }

  async #answer(id: JsonValue, method: string, params: JsonObject): Promise<void> {
    try {
      const result = await this.onRequest(method, params);
      await this.#send({ jsonrpc: "2.0", id, result });
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      await this.#send({ jsonrpc: "2.0", id, error: { code: -32000, message } }).catch(() => {});
    }
  }

  async #send(message: JsonObject): Promise<void> {
    if (this.#closed) throw this.#closed;
    await this.#writer.write(this.#encoder.encode(`${JSON.stringify(message)}\n`));
  }

  /** Sends a request; resolves with its result or rejects with an {@link RpcError}. */
  request(method: string, params: JsonObject = {}): Promise<JsonValue> {
    if (this.#closed) return Promise.reject(this.#closed);
    const id = ++this.#next;
    return new Promise<JsonValue>((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      this.#send({ jsonrpc: "2.0", id, method, params }).catch((error) => {
        this.#pending.delete(id);
        reject(error);
      });
    });
  }

  /** Sends `shutdown`, closes stdin and waits (bounded) for the process to exit. */
  async close(timeoutMs = 3000): Promise<void> {
    if (!this.#closed) {
      await this.request("shutdown").catch(() => {});
      this.#closed = new CliError("failure", "The bridge was closed.");
      await this.#writer.close().catch(() => {});
    }
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<void>((resolve) => timer = setTimeout(resolve, timeoutMs));
    await Promise.race([this.#child.status.then(() => {}), timeout]);
    clearTimeout(timer);
    try {
      this.#child.kill("SIGKILL");
    } catch {
      // already exited
    }
  }
}
