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
import { oamCommandLineFor } from "./invocation.ts";
import { cachePath, type ModelNote, readModelNote } from "../models/gguf_cache.ts";
import { envVar } from "../util/env.ts";
import { endSentence } from "../util/text.ts";
import { fetchFailure } from "../util/fetch_failure.ts";

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
      // A path to a GGUF file: what to do with it instead of pulling it.
      const local = source.toLowerCase().endsWith(".gguf")
        ? `; a GGUF file on this machine needs no pull: ${useWhereItIs(source)}`
        : "";
      throw CliError.usage(`'${source}' is not a URL or an hf:<user>/<repo>/<file.gguf> name${local}.`);
    }
    if (url.protocol === "file:") {
      throw CliError.usage(
        `'${source}' is a file on this machine, which needs no pull: ${
          useWhereItIs(decodeURIComponent(url.pathname))
        }.`,
      );
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

/** The hint for a model file that is already on this machine. */
function useWhereItIs(path: string): string {
  return `use it where it is, with --model gguf:${path}`;
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
  const expected = expectedSha256(options.sha256);
  await Deno.mkdir(options.dir, { recursive: true });
  const path = cachePath(options.dir, source.name);
  if (!options.force) {
    const cached = await cachedModel(path, expected);
    if (cached !== null) return cached;
  }
  const partial = `${path}.partial`;
  const download: Download = {
    label: source.label,
    partial,
    dir: options.dir,
    offset: options.force ? 0 : await fileSize(partial),
    signal: options.signal,
    onProgress: options.onProgress,
  };
  let response = await requestModel(source.url, download);
  if (await isOtherFile(response, download)) {
    // The partial file is longer than the server's file (which changed since): start over.
    download.offset = 0;
    response = await requestModel(source.url, download);
  }
  const { resumedFrom, published } = await receive(response, download);
  const sha256 = await checkDownload(download, expected ?? published ?? undefined);
  const size = await keepModel(download, path, sha256);
  return { path, size, sha256, resumedFrom, alreadyCached: false };
}

/**
 * The `--sha256` option in lower case; a usage error when it is not a SHA-256.
 *
 * @example
 * ```ts
 * import { expectedSha256 } from "./models_pull.ts";
 * expectedSha256("AB".repeat(32)); // "ab…ab"
 * expectedSha256(undefined); // undefined
 * ```
 */
export function expectedSha256(option: string | undefined): string | undefined {
  const expected = option?.toLowerCase();
  if (expected !== undefined && !/^[0-9a-f]{64}$/.test(expected)) {
    throw CliError.usage("--sha256 must be 64 hexadecimal digits.");
  }
  return expected;
}

/** The cached model at `path`, unless there is none or it is not the `expected` one. */
async function cachedModel(path: string, expected: string | undefined): Promise<PullResult | null> {
  if (await fileSize(path) === 0) return null;
  const noted = (await readModelNote(path))?.sha256;
  const sha256 = typeof noted === "string" ? noted : await sha256Of(path);
  if (expected !== undefined && expected !== sha256) return null;
  return { path, size: await fileSize(path), sha256, resumedFrom: 0, alreadyCached: true };
}

/** One download into a `.partial` file. */
interface Download {
  /** How the model is named in messages. */
  label: string;
  /** The `.partial` file. */
  partial: string;
  /** The cache folder it is in. */
  dir: string;
  /** Its size when the download starts: the first byte asked for. */
  offset: number;
  signal?: AbortSignal;
  onProgress?: (progress: PullProgress) => void;
}

/** Sends the request (a range request when resuming); a failure to reach the server is a CliError. */
async function requestModel(url: string, download: Download): Promise<Response> {
  try {
    return await fetch(url, { headers: headersFor(url, download.offset), signal: download.signal });
  } catch (error) {
    if (download.signal?.aborted) {
      throw new CliError("interrupted", "The download was interrupted; run the same command to resume.");
    }
    const problem = fetchProblem(error);
    if (problem.permission) {
      throw new CliError("io_error", `Cannot download ${download.label}: ${problem.text}`);
    }
    throw new CliError(
      "io_error",
      `Cannot download ${download.label}: ${endSentence(problem.text)} ${unreachableAdvice(download)}`,
    );
  }
}

/**
 * What to do when the server cannot be reached: try again once the network is back (the partial file is
 * kept), or run a GGUF file already on this computer, which needs no download.
 */
function unreachableAdvice(download: Download): string {
  const again = download.offset > 0 ? "run the same command again to resume" : "run the same command again";
  return `When the network is back, ${again}; a GGUF file already on this computer needs no download: ` +
    `--model gguf:<path to the file>, or copy it into ${download.dir} to use it by name.`;
}

/**
 * Why a request failed: the connection's own reason (Deno's "fetch failed" keeps it in `cause`: a name that
 * does not resolve, a refused connection), or the permission that is missing and a command that has it where
 * this one runs (`deno task models pull …` in the repository, else `cli.ts` run with the network).
 */
function fetchProblem(error: unknown): { text: string; permission: boolean } {
  const text = error instanceof Error ? error.message : String(error);
  if (/Requires net access/.test(text)) {
    const command = oamCommandLineFor("models pull …");
    return { text: `${endSentence(text)} '${command}' has network access.`, permission: true };
  }
  return { text: fetchFailure(error), permission: false };
}

/**
 * Writes the response's body to the partial file and checks it has the size the server announced. Resolves
 * with the offset the body continued from (0 when the server sent the whole file) and the SHA-256 the server
 * published.
 */
/**
 * True when a resume was answered with HTTP 416 naming another length than the partial file's
 * (`Content-Range: bytes *\/<length>`): the partial file is not this file (the response is consumed).
 */
async function isOtherFile(response: Response, download: Download): Promise<boolean> {
  if (download.offset === 0 || response.status !== 416) return false;
  const length = /^bytes \*\/(\d+)\s*$/.exec(response.headers.get("content-range") ?? "");
  if (length === null || Number(length[1]) === download.offset) return false;
  await response.body?.cancel();
  return true;
}

async function receive(
  response: Response,
  download: Download,
): Promise<{ resumedFrom: number; published: string | null }> {
  if (download.offset > 0 && response.status === 416) {
    // The partial file is as long as the server's: check it as it is.
    await response.body?.cancel();
    return { resumedFrom: download.offset, published: null };
  }
  if (response.status !== 200 && response.status !== 206) {
    await response.body?.cancel();
    throw new CliError(
      "io_error",
      `Cannot download ${download.label}: the server answered HTTP ${response.status}.`,
    );
  }
  const offset = response.status === 200 ? 0 : download.offset; // 200: no range support, start over
  const total = announcedTotal(response, offset);
  const received = await writeBody(response, { ...download, offset }, total);
  if (total !== null && received !== total) {
    throw new CliError(
      "io_error",
      `The download of ${download.label} ended at ${received} of ${total} bytes; run the same command to resume.`,
    );
  }
  return { resumedFrom: offset, published: publishedSha256(response) };
}

/** The whole file's size from `Content-Range`, or the body's `Content-Length` after `offset`; null when unsaid. */
function announcedTotal(response: Response, offset: number): number | null {
  const range = /\/(\d+)\s*$/.exec(response.headers.get("content-range") ?? "");
  const length = Number(response.headers.get("content-length") ?? NaN);
  if (range) return Number(range[1]);
  if (Number.isFinite(length)) return offset + length;
  return null;
}

/**
 * Appends the body to the partial file (or replaces it when the offset is 0), reporting progress; resolves
 * with the bytes on disk. A broken connection or an interruption is a CliError that says how to resume.
 */
async function writeBody(response: Response, download: Download, total: number | null): Promise<number> {
  const file = await Deno.open(download.partial, {
    write: true,
    create: true,
    append: download.offset > 0,
    truncate: download.offset === 0,
  });
  let received = download.offset;
  try {
    download.onProgress?.({ received, total });
    if (response.body === null) {
      throw new CliError("io_error", `The server sent no body for ${download.label}.`);
    }
    for await (const chunk of response.body) {
      let written = 0;
      while (written < chunk.length) written += await file.write(chunk.subarray(written));
      received += chunk.length;
      download.onProgress?.({ received, total });
    }
    return received;
  } catch (error) {
    if (error instanceof CliError) throw error;
    if (download.signal?.aborted) {
      throw new CliError(
        "interrupted",
        `The download stopped at ${received} bytes; run the same command to resume.`,
      );
    }
    throw new CliError(
      "io_error",
      `The download of ${download.label} broke off at ${received} bytes (${(error as Error).message}); ` +
        `run the same command to resume.`,
    );
  } finally {
    file.close();
  }
}

/**
 * Checks the partial file against the SHA-256 it should have (when known) and the GGUF magic; removes it when
 * either check fails. Resolves with its SHA-256.
 */
async function checkDownload(download: Download, want: string | undefined): Promise<string> {
  const sha256 = await sha256Of(download.partial);
  if (want !== undefined && sha256 !== want) {
    await Deno.remove(download.partial);
    throw new CliError(
      "io_error",
      `The download of ${download.label} is corrupt: SHA-256 ${sha256}, expected ${want}.`,
    );
  }
  if (!await hasGgufMagic(download.partial)) {
    await Deno.remove(download.partial);
    throw new CliError("invalid_input", `${download.label} is not a GGUF model file.`);
  }
  return sha256;
}

/** Renames the checked partial file to `path` and writes its note beside it; resolves with its size. */
async function keepModel(download: Download, path: string, sha256: string): Promise<number> {
  const size = await fileSize(download.partial);
  await Deno.rename(download.partial, path);
  const note: ModelNote = { source: download.label, sha256, size, downloadedAt: new Date().toISOString() };
  await Deno.writeTextFile(`${path}.json.tmp`, `${JSON.stringify(note, null, 2)}\n`);
  await Deno.rename(`${path}.json.tmp`, `${path}.json`);
  return size;
}
