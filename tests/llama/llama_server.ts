/**
 * Starts a real llama.cpp `llama-server` with the tiny fixture model for integration tests.
 *
 * The binary and the model come from `scripts/llama/build.sh` (cached in
 * `${OAM_LLAMA_CACHE:-$HOME/.cache/oam-llama}/<version>/`). The tests are an opt-in tier: they run only with
 * `OAM_LLAMA_TESTS=1` (set by the `test:llama` task) and then fail when the build is missing; otherwise
 * they are reported as ignored.
 * @module
 */

/** node-llama-cpp version whose bundled llama.cpp source is built. */
export const LLAMA_VERSION = Deno.env.get("OAM_LLAMA_VERSION") ?? "3.21.1";

/** Cache directory of the build. */
export function llamaCacheDir(): string {
  const root = Deno.env.get("OAM_LLAMA_CACHE") ?? `${Deno.env.get("HOME") ?? "/tmp"}/.cache/oam-llama`;
  return `${root}/${LLAMA_VERSION}`;
}

/** Paths of the binary and the model, or a reason why they are unusable. */
export function llamaFiles(): { binary: string; model: string } | { missing: string } {
  const dir = llamaCacheDir();
  const binary = `${dir}/bin/llama-server`;
  const model = `${dir}/tiny-chat.gguf`;
  for (const path of [binary, model]) {
    try {
      Deno.statSync(path);
    } catch {
      return { missing: `${path} not found; run scripts/llama/build.sh` };
    }
  }
  return { binary, model };
}

/** Whether the llama tier runs (`OAM_LLAMA_TESTS=1`); a missing build then fails the tests. */
export const LLAMA_ENABLED = Deno.env.get("OAM_LLAMA_TESTS") === "1";

/** A running llama-server. */
export interface LlamaServer {
  /** `http://127.0.0.1:<port>/v1`. */
  baseURL: string;
  pid: number;
  /** Everything the server wrote to stderr so far (for diagnostics). */
  log(): string;
  /** Stops the server by its pid (SIGTERM, then SIGKILL after 5 s) and waits for it. */
  stop(): Promise<void>;
}

function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}

/** Starts llama-server on 127.0.0.1 with a free port and waits until `/health` answers 200. */
export async function startLlamaServer(
  options: {
    contextSize?: number;
    slots?: number;
    readyTimeoutMs?: number;
    apiKey?: string;
    /** More llama-server arguments (e.g. `["--cache-ram", "0"]`). */
    extraArgs?: string[];
  } = {},
): Promise<LlamaServer> {
  const files = llamaFiles();
  if ("missing" in files) throw new Error(files.missing);
  const port = freePort();
  const child = new Deno.Command(files.binary, {
    args: [
      "-m",
      files.model,
      "--host",
      "127.0.0.1",
      "--port",
      String(port),
      "-c",
      String(options.contextSize ?? 4096),
      "-np",
      String(options.slots ?? 2),
      "-t",
      "2",
      "--no-webui",
      ...(options.apiKey === undefined ? [] : ["--api-key", options.apiKey]),
      ...(options.extraArgs ?? []),
    ],
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  let log = "";
  const decoder = new TextDecoder();
  const drained = (async () => {
    for await (const bytes of child.stderr) log += decoder.decode(bytes, { stream: true });
  })();
  let exited = false;
  const status = child.status.then((s) => {
    exited = true;
    return s;
  });
  const stop = async () => {
    if (!exited) {
      try {
        Deno.kill(child.pid, "SIGTERM");
      } catch {
        // already gone
      }
      const timer = setTimeout(() => {
        try {
          Deno.kill(child.pid, "SIGKILL");
        } catch {
          // already gone
        }
      }, 5000);
      await status;
      clearTimeout(timer);
    }
    await drained;
  };
  const baseURL = `http://127.0.0.1:${port}/v1`;
  const deadline = Date.now() + (options.readyTimeoutMs ?? 60_000);
  while (true) {
    if (exited) {
      await stop();
      throw new Error(`llama-server exited early:\n${log.slice(-2000)}`);
    }
    try {
      const response = await fetch(`http://127.0.0.1:${port}/health`);
      await response.body?.cancel();
      if (response.ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`llama-server did not become healthy:\n${log.slice(-2000)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { baseURL, pid: child.pid, log: () => log, stop };
}

/** Writes a diagnostic line to stderr (the lint config forbids `console`). */
export function note(text: string): void {
  Deno.stderr.writeSync(new TextEncoder().encode(`${text}\n`));
}
