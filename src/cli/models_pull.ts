/**
 * Downloading a GGUF model into the cache folder: resumable (an interrupted download continues from its
 * `.partial` file with an HTTP range request), checked (the size the server announced, the SHA-256 given
 * with `--sha256` or published by the server as the file's ETag, and the GGUF magic bytes) and atomic (the
 * file appears under its name only when complete and checked).
 *
 * `hf:<user>/<repo>/<path/file.gguf>[#branch]` names a file of a Hugging Face repository (`HF_TOKEN` is sent
 * to huggingface.co when set).
 * @module
 */
import { createHash } from "node:crypto";
import { CliError } from "./cli_error.ts";
import { cachePath, type ModelNote } from "./models_cache.ts";
import { envVar } from "./tty.ts";

/** Where to get a model: its URL and the file name to keep it under. */
export interface ModelSource {
  /** The http(s) URL to download. */
  url: string;
  /** The cache file name. */
  name: string;
}

/** Progress of a download. */
export interface PullProgress {
  /** Bytes on disk so far (including a resumed part). */
  received: number;
  /** Total size, when the server said. */
  total: number | null;
}

/** What {@link pullModel} did. */
export interface PullResult {
  /** Path of the model file. */
  path: string;
  /** Its size. */
  size: number;
  /** Its SHA-256 (hex). */
  sha256: string;
  /** Bytes continued from an earlier partial download. */
  resumedFrom: number;
  /** True when the file was cached already (nothing downloaded). */
  alreadyCached: boolean;
}

const SAFE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

/**
 * Resolves a `pull` argument: an http(s) URL or an `hf:` name. The file name is `name` or the URL's last
 * path segment (with `.gguf` appended when missing).
 *
 * @example
 * ```ts
 * import { resolveModelSource } from "./models_pull.ts";
 * resolveModelSource("hf:Qwen/Qwen2.5-1.5B-Instruct-GGUF/qwen2.5-1.5b-instruct-q4_k_m.gguf").url;
 * // "https://huggingface.co/Qwen/Qwen2.5-1.5B-Instruct-GGUF/resolve/main/qwen2.5-1.5b-instruct-q4_k_m.gguf"
 * ```
 */
export function resolveModelSource(source: string, name?: string): ModelSource {
  let url: URL;
  if (source.startsWith("hf:")) {
    const [path, branch = "main"] = source.slice(3).replace(/^\/+/, "").split("#", 2);
    const parts = path.split("/").filter((p) => p !== "");
    if (parts.length < 3 || branch === "") {
      throw CliError.usage(
        `'${source}' is not a Hugging Face file name: use hf:<user>/<repo>/<file.gguf>[#branch].`,
      );
    }
    const [user, repo, ...file] = parts;
    url = new URL(
      `https://huggingface.co/${[user, repo].map(encodeURIComponent).join("/")}/resolve/` +
        `${encodeURIComponent(branch)}/${file.map(encodeURIComponent).join("/")}`,
    );
  } else {
    try {
      url = new URL(source);
    } catch {
      throw CliError.usage(`'${source}' is not a URL or an hf:<user>/<repo>/<file.gguf> name.`);
    }
    if (url.protocol !== "http:" && url.protocol !== "https:") {
      throw CliError.usage(`'${source}' must be an http(s) URL or an hf: name.`);
    }
  }
  let file = name ?? decodeURIComponent(url.pathname.split("/").filter((p) => p !== "").pop() ?? "");
  if (!file.toLowerCase().endsWith(".gguf")) file += ".gguf";
  if (!SAFE_NAME.test(file) || file.length > 200) {
    throw CliError.usage(
      `'${file}' cannot be a model file name (letters, digits, '.', '_' and '-' only); choose one with --name.`,
    );
  }
  return { url: url.href, name: file };
}

function headersFor(url: string, offset: number): Headers {
  const headers = new Headers();
  if (offset > 0) headers.set("Range", `bytes=${offset}-`);
  const token = envVar("HF_TOKEN");
  if (token && new URL(url).hostname.endsWith("huggingface.co")) {
    headers.set("Authorization", `Bearer ${token}`);
  }
  return headers;
}

/** A SHA-256 the server publishes: Hugging Face's `X-Linked-ETag` (or ETag) of an LFS file is its hex digest. */
function publishedSha256(response: Response): string | null {
  for (const header of ["x-linked-etag", "etag"]) {
    const value = response.headers.get(header)?.replace(/^W\//, "").replaceAll('"', "").toLowerCase();
    if (value !== undefined && /^[0-9a-f]{64}$/.test(value)) return value;
  }
  return null;
}

async function fileSize(path: string): Promise<number> {
  try {
    return (await Deno.stat(path)).size;
  } catch {
    return 0;
  }
}

async function sha256Of(path: string): Promise<string> {
  const hash = createHash("sha256");
  const file = await Deno.open(path, { read: true });
  for await (const chunk of file.readable) hash.update(chunk);
  return hash.digest("hex");
}

async function readNote(path: string): Promise<ModelNote | null> {
  try {
    return JSON.parse(await Deno.readTextFile(`${path}.json`)) as ModelNote;
  } catch {
    return null;
  }
}

async function hasGgufMagic(path: string): Promise<boolean> {
  const file = await Deno.open(path, { read: true });
  try {
    const magic = new Uint8Array(4);
    return (await file.read(magic)) === 4 && new TextDecoder().decode(magic) === "GGUF";
  } finally {
    file.close();
  }
}

/** Options of {@link pullModel}. */
export interface PullOptions {
  /** The cache folder (created when missing). */
  dir: string;
  /** Expected SHA-256 (hex), checked after the download. */
  sha256?: string;
  /** Download again even when the file is cached. */
  force?: boolean;
  /** Stops the download (the partial file is kept for a resume). */
  signal?: AbortSignal;
  /** Called as bytes arrive. */
  onProgress?: (progress: PullProgress) => void;
}

/** Downloads `source` into `options.dir` (see the module doc). Failures are CliErrors with the reason. */
export async function pullModel(
  source: ModelSource & { label: string },
  options: PullOptions,
): Promise<PullResult> {
  const expected = options.sha256?.toLowerCase();
  if (expected !== undefined && !/^[0-9a-f]{64}$/.test(expected)) {
    throw CliError.usage("--sha256 must be 64 hexadecimal digits.");
  }
  await Deno.mkdir(options.dir, { recursive: true });
  const path = cachePath(options.dir, source.name);
  const partial = `${path}.partial`;
  if (!options.force && await fileSize(path) > 0) {
    const note = await readNote(path);
    const sha256 = note?.sha256 ?? await sha256Of(path);
    if (expected === undefined || expected === sha256) {
      return { path, size: await fileSize(path), sha256, resumedFrom: 0, alreadyCached: true };
    }
  }
  let offset = options.force ? 0 : await fileSize(partial);
  let response: Response;
  try {
    response = await fetch(source.url, { headers: headersFor(source.url, offset), signal: options.signal });
  } catch (error) {
    if (options.signal?.aborted) {
      throw new CliError("interrupted", "The download was interrupted; run the same command to resume.");
    }
    throw new CliError("io_error", `Cannot download ${source.label}: ${(error as Error).message}`);
  }
  if (offset > 0 && response.status === 416) {
    // The partial file is as long as the server's: check it as it is.
    await response.body?.cancel();
  } else {
    if (response.status !== 200 && response.status !== 206) {
      await response.body?.cancel();
      throw new CliError(
        "io_error",
        `Cannot download ${source.label}: the server answered HTTP ${response.status}.`,
      );
    }
    if (response.status === 200) offset = 0; // no range support: start over
    let total: number | null = null;
    const range = /\/(\d+)\s*$/.exec(response.headers.get("content-range") ?? "");
    const length = Number(response.headers.get("content-length") ?? NaN);
    if (range) total = Number(range[1]);
    else if (Number.isFinite(length)) total = offset + length;
    const published = publishedSha256(response);
    const file = await Deno.open(partial, {
      write: true,
      create: true,
      append: offset > 0,
      truncate: offset === 0,
    });
    let received = offset;
    try {
      options.onProgress?.({ received, total });
      if (response.body === null) {
        throw new CliError("io_error", `The server sent no body for ${source.label}.`);
      }
      for await (const chunk of response.body) {
        let written = 0;
        while (written < chunk.length) written += await file.write(chunk.subarray(written));
        received += chunk.length;
        options.onProgress?.({ received, total });
      }
    } catch (error) {
      if (error instanceof CliError) throw error;
      if (options.signal?.aborted) {
        throw new CliError(
          "interrupted",
          `The download stopped at ${received} bytes; run the same command to resume.`,
        );
      }
      throw new CliError(
        "io_error",
        `The download of ${source.label} broke off at ${received} bytes (${(error as Error).message}); ` +
          `run the same command to resume.`,
      );
    } finally {
      file.close();
    }
    if (total !== null && received !== total) {
      throw new CliError(
        "io_error",
        `The download of ${source.label} ended at ${received} of ${total} bytes; run the same command to resume.`,
      );
    }
    if (expected === undefined && published !== null) options = { ...options, sha256: published };
  }
  const want = options.sha256?.toLowerCase();
  const sha256 = await sha256Of(partial);
  if (want !== undefined && sha256 !== want) {
    await Deno.remove(partial);
    throw new CliError(
      "io_error",
      `The download of ${source.label} is corrupt: SHA-256 ${sha256}, expected ${want}.`,
    );
  }
  if (!await hasGgufMagic(partial)) {
    await Deno.remove(partial);
    throw new CliError("invalid_input", `${source.label} is not a GGUF model file.`);
  }
  const size = await fileSize(partial);
  await Deno.rename(partial, path);
  const note: ModelNote = { source: source.label, sha256, size, downloadedAt: new Date().toISOString() };
  await Deno.writeTextFile(`${path}.json.tmp`, `${JSON.stringify(note, null, 2)}\n`);
  await Deno.rename(`${path}.json.tmp`, `${path}.json`);
  return { path, size, sha256, resumedFrom: offset, alreadyCached: false };
}
