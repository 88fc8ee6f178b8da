/**
 * Checking the file a GGUF model names before node-llama-cpp loads it: that it exists (a name without a slash
 * may be a model in the cache of `oam models pull`), is a file, and starts with the GGUF header. What is wrong
 * is a `model_unavailable` BridgeError naming the problem and what to do.
 * @module
 */
import { BridgeError } from "../protocol/errors.ts";
import { forGood } from "./for_good.ts";
import { findCachedModel, listCachedModels, modelsCacheDir } from "./gguf_cache.ts";
import { oamCommandLine } from "./oam_hint.ts";
import { llamaPermissionAdvice, missingLlamaPermissions, scriptPermissionHint } from "./llama_permissions.ts";

/** The message of anything thrown. */
export function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** A missing Deno permission, by its name or by its message (node-llama-cpp rethrows some as plain errors). */
export function isPermissionError(error: unknown): boolean {
  return error instanceof Error &&
    (error.name === "NotCapable" || error.name === "PermissionDenied" ||
      /Requires \w+ access/.test(error.message));
}

/** A `model_unavailable` error with `text` and its `data` (`.withCause(error)` keeps what caused it). */
export function unavailable(text: string, data: Record<string, string> = {}): BridgeError {
  return BridgeError.of("model_unavailable", text, data);
}

/** Whether this process may read the environment (asked without prompting). */
function envGranted(): boolean {
  try {
    return Deno.permissions.querySync({ name: "env" }).state === "granted";
  } catch {
    return false;
  }
}

/**
 * The model file cannot be read for want of `--allow-read`: with the other permissions node-llama-cpp lacks
 * too, so that one run of the fix is enough, and where to give them.
 */
function readPermissionMessage(path: string): string {
  const text = `Reading the model file '${path}' needs --allow-read`;
  const missing = missingLlamaPermissions();
  if (missing.length === 0) return `${text}.`;
  const also = `${text}, and node-llama-cpp needs ${missing.join(" ")}`;
  const script = scriptPermissionHint();
  return script === null ? `${also}.${llamaPermissionAdvice()}` : `${also}: ${script}.`;
}

/** At most this many file names in a message; the rest are counted. */
const LISTED_FILES = 3;

/** The `.gguf` files in `dir` as `a.gguf, b.gguf and 2 more`, `""` for none, null when `dir` cannot be read. */
async function ggufFilesIn(dir: string): Promise<string | null> {
  const names: string[] = [];
  try {
    for await (const entry of Deno.readDir(dir)) {
      if (!entry.isDirectory && entry.name.toLowerCase().endsWith(".gguf")) names.push(entry.name);
    }
  } catch {
    return null;
  }
  names.sort();
  const shown = names.slice(0, LISTED_FILES).join(", ");
  return names.length > LISTED_FILES ? `${shown} and ${names.length - LISTED_FILES} more` : shown;
}

/** `path` without `.` and `..` segments (`/a/./b/../c` is `/a/c`), with `/` between segments. */
function normalize(path: string): string {
  const root = /^([A-Za-z]:)?[\\/]/.exec(path)?.[0] ?? "";
  const parts: string[] = [];
  for (const part of path.slice(root.length).split(/[\\/]+/)) {
    if (part === "" || part === ".") continue;
    if (part === ".." && parts.length > 0 && parts[parts.length - 1] !== "..") parts.pop();
    else if (part !== ".." || root === "") parts.push(part);
  }
  return `${root.replace(/\\$/, "/")}${parts.join("/")}`;
}

/** `path` made absolute against the working folder (null when the working folder cannot be read). */
function absolute(path: string): string | null {
  if (/^([A-Za-z]:)?[\\/]/.test(path)) return normalize(path);
  try {
    return normalize(`${Deno.cwd()}/${path}`);
  } catch {
    return null;
  }
}

/** The folder of an absolute path. */
function parent(path: string): string {
  const cut = path.lastIndexOf("/");
  return cut <= 0
    ? "/"
    : /^[A-Za-z]:$/.test(path.slice(0, cut))
    ? path.slice(0, cut + 1)
    : path.slice(0, cut);
}

/**
 * The message for a missing model file at `path` (with a slash): where it was looked for when `path` is
 * relative, and what the folder it names holds, so a typo or the wrong working folder shows at once.
 */
async function missingFileMessage(path: string): Promise<string> {
  const full = absolute(path);
  if (full === null) return `The model file '${path}' does not exist.`;
  const shown = full === path ? `'${path}'` : `'${path}' (${full})`;
  const dir = parent(full);
  const files = await ggufFilesIn(dir);
  const folder = files === null
    ? `there is no folder ${dir}`
    : files === ""
    ? `the folder ${dir} has no .gguf file`
    : `the folder ${dir} has: ${files}`;
  const tilde = /^~[\\/]/.test(path) ? " A '~' is not your home folder here: write the full path." : "";
  return `The model file ${shown} does not exist; ${folder}.${tilde}`;
}

/** What a file that does not start with `GGUF` is instead, from its first bytes, and what to do. */
function notGgufReason(path: string, head: Uint8Array): string {
  if (head.length === 0) return "it is empty (an interrupted download?). Download it again.";
  if (head[0] === 0x1f && head[1] === 0x8b) {
    return `it is gzip-compressed. Unpack it first (gunzip -k '${path}') and give the .gguf file.`;
  }
  if (head[0] === 0x50 && head[1] === 0x4b && head[2] === 0x03 && head[3] === 0x04) {
    return "it is a zip archive. Unpack it first and give the .gguf file inside.";
  }
  // safetensors: an 8-byte little-endian header length, then the JSON header.
  if (head.length > 8 && head[8] === 0x7b && head[6] === 0 && head[7] === 0) {
    return "it is a safetensors model, which llama.cpp cannot load. Use the model's GGUF build (on Hugging " +
      "Face, a repository named …-GGUF).";
  }
  const text = new TextDecoder().decode(head).trimStart();
  if (text.startsWith("version https://git-lfs")) {
    return "it is a Git LFS pointer, not the model. Fetch the model itself (git lfs pull), or download it " +
      `with ${oamCommandLine("models pull <url>")}.`;
  }
  if (/^<(!doctype html|html|\?xml|head|body)/i.test(text)) {
    return "it is a web page (HTML), such as an error or sign-in page a download saved. Download the model " +
      `again (${oamCommandLine("models pull <url>")} checks what it saves).`;
  }
  return "it does not start with 'GGUF'. Give a model in GGUF format (a .gguf file, such as one " +
    `${oamCommandLine("models pull <url>")} downloads).`;
}

/** The first bytes of an open file (as many as one read gives, up to 64). */
async function firstBytes(file: Deno.FsFile): Promise<Uint8Array> {
  const head = new Uint8Array(64);
  const n = await file.read(head);
  return head.subarray(0, n ?? 0);
}

/**
 * Checks that `path` is a readable GGUF file and returns its real path; cheap, no package needed. A `path`
 * without a slash that is no file names a model in the cache of `oam models pull` (see gguf_cache.ts).
 * Otherwise fails with a `model_unavailable` BridgeError (`data.path`) that names the problem and what to do:
 * a missing file with the folder it was looked for in and the `.gguf` files there, a folder with the
 * `.gguf` files in it, a file that is not GGUF with what it is instead (gzip, zip, safetensors, a Git LFS
 * pointer, a web page, empty).
 *
 * @example
 * ```ts
 * import { checkModelFile } from "./gguf_file.ts";
 * await checkModelFile("/models/tiny-chat.gguf").catch((error) => error.message);
 * // "The model file '/models/tiny-chat.gguf' does not exist; there is no folder /models."
 * ```
 */
export async function checkModelFile(path: string): Promise<string> {
  let real: string;
  try {
    real = await Deno.realPath(path).catch(async (error) => {
      if (!(error instanceof Deno.errors.NotFound)) throw error;
      const cached = await findCachedModel(path);
      if (cached === null) throw error;
      return await Deno.realPath(cached.path);
    });
    const info = await Deno.stat(real);
    if (info.isDirectory) {
      const files = await ggufFilesIn(real);
      const inside = files ? `give a .gguf file in it (it has: ${files})` : "give a .gguf file (it has none)";
      throw unavailable(`The model path '${path}' is a folder, not a file: ${inside}.`, { path });
    }
    if (!info.isFile) throw unavailable(`The model path '${path}' is not a file.`, { path });
    const file = await Deno.open(real, { read: true });
    try {
      const head = await firstBytes(file);
      if (new TextDecoder().decode(head.subarray(0, 4)) !== "GGUF") {
        throw unavailable(`The model file '${path}' is not a GGUF file: ${notGgufReason(path, head)}`, {
          path,
        });
      }
    } finally {
      file.close();
    }
  } catch (error) {
    if (error instanceof BridgeError) throw error;
    if (error instanceof Deno.errors.NotFound) {
      if (/[\\/]/.test(path)) throw unavailable(await missingFileMessage(path), { path });
      const dir = modelsCacheDir();
      if (dir === null && !envGranted()) {
        // The cache folder comes from the environment: without it the name cannot be looked up at all.
        throw forGood(unavailable(
          `The model file '${path}' does not exist, and without --allow-env no cached model can be looked up ` +
            `by that name.${llamaPermissionAdvice()}`,
          { path },
        ));
      }
      const where = dir === null
        ? ""
        : `, and no cached model is called that (in ${dir}: ${oamCommandLine("models list")} shows ` +
          `them, ${oamCommandLine("models pull <url>")} downloads one)`;
      const cached = dir === null ? "" : await cachedNames(dir);
      throw unavailable(`The model file '${path}' does not exist${where}.${cached}`, { path });
    }
    if (isPermissionError(error)) {
      throw forGood(unavailable(readPermissionMessage(path), { path }));
    }
    throw unavailable(`The model file '${path}' cannot be read: ${message(error)}`, { path }).withCause(
      error,
    );
  }
  return real;
}

/**
 * The models cached in `dir` as `--model` values (` Cached there: gguf:qwen, gguf:tiny-chat.`), so a name
 * mistyped or half remembered can be corrected at once; empty when none is cached.
 */
async function cachedNames(dir: string): Promise<string> {
  const models = await listCachedModels(dir).catch(() => []);
  if (models.length === 0) return "";
  const shown = models.slice(0, 5).map((m) => `gguf:${m.name.replace(/\.gguf$/i, "")}`);
  const more = models.length > shown.length ? ` and ${models.length - shown.length} more` : "";
  return ` Cached there: ${shown.join(", ")}${more}.`;
}
