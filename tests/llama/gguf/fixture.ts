/**
 * The GGUF tier's fixture: the tiny test model (`../shared/models/tiny-chat.gguf.gz` beside the repository)
 * unzipped once into a cache folder outside the repository, and the settings the tests load it with.
 *
 * The tier is opt-in: it runs with `OAM_GGUF_TESTS=1` (set by `deno task test:gguf`), which loads
 * node-llama-cpp (≈ 730 MB on first use); otherwise the tests are reported as ignored.
 * @module
 */
import type { LlamaModelConfig } from "../../../src/models/llama_config.ts";

/** Whether the GGUF tier runs. */
export const GGUF_ENABLED = Deno.env.get("OAM_GGUF_TESTS") === "1";

/** The README's permissions for a GGUF model run by `deno run` (with `--no-lock`, as its tasks pass it). */
export const GGUF_RUN_FLAGS = [
  "--no-lock",
  "--allow-read",
  "--allow-write",
  "--allow-env",
  "--allow-sys",
  "--allow-ffi",
  "--allow-run",
];

/** Why the tier is ignored otherwise. */
export const IGNORED_REASON = "set OAM_GGUF_TESTS=1 (deno task test:gguf) to run the GGUF tier";

function cacheRoot(): string {
  return Deno.env.get("OAM_GGUF_CACHE") ?? `${Deno.env.get("HOME") ?? "/tmp"}/.cache/oam-gguf-tests`;
}

/** The zipped fixture model. */
export function fixtureGzPath(): string {
  return Deno.env.get("OAM_LLAMA_MODEL_GZ") ??
    new URL("../../../../shared/models/tiny-chat.gguf.gz", import.meta.url).pathname;
}

let unzipped: Promise<string> | undefined;

/** The unzipped fixture model (made once, atomically). */
export function fixtureModelPath(): Promise<string> {
  unzipped ??= (async () => {
    const dir = cacheRoot();
    const path = `${dir}/tiny-chat.gguf`;
    try {
      const info = await Deno.stat(path);
      if (info.size > 0) return path;
    } catch {
      // not unzipped yet
    }
    await Deno.mkdir(dir, { recursive: true });
    const temp = `${path}.${Deno.pid}.tmp`;
    const input = await Deno.open(fixtureGzPath(), { read: true });
    const output = await Deno.open(temp, { write: true, create: true, truncate: true });
    await input.readable.pipeThrough(new DecompressionStream("gzip")).pipeTo(output.writable);
    await Deno.rename(temp, path);
    return path;
  })();
  return unzipped;
}

/**
 * Settings for the tests: CPU only and one thread (the model is tiny; more threads only contend on a
 * shared 2-core machine), a 2048-token context, two sequences.
 */
export async function fixtureConfig(overrides: Partial<LlamaModelConfig> = {}): Promise<LlamaModelConfig> {
  return {
    path: await fixtureModelPath(),
    gpu: false,
    threads: 1,
    contextSize: 2048,
    sequences: 2,
    ...overrides,
  };
}
