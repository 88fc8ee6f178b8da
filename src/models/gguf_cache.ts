/**
 * The GGUF model cache of `oam models pull|list`, `--model gguf:<name>` and `{"type": "llama", "path": <name>}`:
 * one folder of `.gguf` files, each with a `<file>.json` note of where it came from.
 *
 * Folder: `OAM_MODELS_DIR`, else `$XDG_CACHE_HOME/oam/models`, else the platform's cache folder
 * (`~/Library/Caches/oam/models` on macOS, `%LOCALAPPDATA%\oam\models` on Windows, `~/.cache/oam/models`).
 * @module
 */
import { envVar } from "../util/env.ts";

/**
 * A cached model file.
 *
 * @example
 * ```ts
 * import { type CachedModel, firstCachedModel } from "@open-apple-models/bridge";
 * const cached: CachedModel | null = await firstCachedModel();
 * const label = cached ? `${cached.name} (${(cached.size / 1e9).toFixed(1)} GB)` : "no cached model";
 * ```
 */
export interface CachedModel {
  /** File name (`qwen2.5-1.5b-instruct-q4_k_m.gguf`). */
  name: string;
  /** Full path. */
  path: string;
  /** Size in bytes. */
  size: number;
  /** Last modification time, when known. */
  modified: Date | null;
  /** Where it was downloaded from, when recorded. */
  source?: string;
  /** SHA-256 of the file, when recorded. */
  sha256?: string;
}

/** What `oam models pull` records beside a model (`<file>.json`). */
export interface ModelNote {
  /** The URL or `hf:` name it was pulled from. */
  source: string;
  /** SHA-256 (hex) of the file. */
  sha256: string;
  /** Size in bytes. */
  size: number;
  /** ISO time of the download. */
  downloadedAt: string;
}

function join(dir: string, name: string): string {
  const sep = Deno.build.os === "windows" ? "\\" : "/";
  return dir.endsWith("/") || dir.endsWith("\\") ? `${dir}${name}` : `${dir}${sep}${name}`;
}

/** The cache folder (see the module doc); `null` when no home folder is known. */
export function modelsCacheDir(): string | null {
  const explicit = envVar("OAM_MODELS_DIR");
  if (explicit) return explicit;
  const xdg = envVar("XDG_CACHE_HOME");
  if (xdg) return join(join(xdg, "oam"), "models");
  if (Deno.build.os === "windows") {
    const local = envVar("LOCALAPPDATA");
    return local ? join(join(local, "oam"), "models") : null;
  }
  const home = envVar("HOME");
  if (!home) return null;
  if (Deno.build.os === "darwin") return join(home, "Library/Caches/oam/models");
  return join(home, ".cache/oam/models");
}

/** The path of a file in the cache folder. */
export function cachePath(dir: string, name: string): string {
  return join(dir, name);
}

/** The note written beside a cached model (`<model>.json`), or null when there is none or it is not an object. */
export async function readModelNote(path: string): Promise<ModelNote | null> {
  try {
    const note = JSON.parse(await Deno.readTextFile(`${path}.json`));
    return typeof note === "object" && note !== null ? note as ModelNote : null;
  } catch {
    return null;
  }
}

/** The complete `.gguf` files in `dir`, by name; an absent folder lists nothing. */
export async function listCachedModels(dir: string): Promise<CachedModel[]> {
  const out: CachedModel[] = [];
  try {
    for await (const entry of Deno.readDir(dir)) {
      if (!entry.isFile || !entry.name.toLowerCase().endsWith(".gguf")) continue;
      const path = join(dir, entry.name);
      const info = await Deno.stat(path);
      const note = await readModelNote(path);
      const model: CachedModel = { name: entry.name, path, size: info.size, modified: info.mtime };
      if (typeof note?.source === "string") model.source = note.source;
      if (typeof note?.sha256 === "string") model.sha256 = note.sha256;
      out.push(model);
    }
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return [];
    throw error;
  }
  return out.sort((a, b) => a.name.localeCompare(b.name));
}

/** Partial downloads (`*.gguf.partial`) in `dir`. */
export async function listPartialDownloads(dir: string): Promise<string[]> {
  const out: string[] = [];
  try {
    for await (const entry of Deno.readDir(dir)) {
      if (entry.isFile && entry.name.endsWith(".gguf.partial")) out.push(entry.name);
    }
  } catch {
    return [];
  }
  return out.sort();
}

/**
 * Resolves the path of a `gguf:` model: an existing file as given, else a cached model by name (with or
 * without `.gguf`). Returns the input unchanged when neither exists (the model then reports it missing).
 */
export async function resolveModelPath(nameOrPath: string): Promise<string> {
  try {
    await Deno.stat(nameOrPath);
    return nameOrPath;
  } catch {
    // not a file path (or not readable): try the cache
  }
  return (await findCachedModel(nameOrPath))?.path ?? nameOrPath;
}

/**
 * The cached model called `name` (with or without `.gguf`, any case), or null: also when `name` is a path
 * (it has a slash) or there is no cache folder.
 */
export async function findCachedModel(name: string): Promise<CachedModel | null> {
  if (/[\\/]/.test(name)) return null;
  const dir = modelsCacheDir();
  if (dir === null) return null;
  const models = await listCachedModels(dir).catch(() => []);
  const wanted = name.toLowerCase();
  return models.find((m) => m.name.toLowerCase() === wanted) ??
    models.find((m) => m.name.toLowerCase() === `${wanted}.gguf`) ?? null;
}

/** The first cached model, for commands that use one when no other model is available. */
export async function firstCachedModel(): Promise<CachedModel | null> {
  const dir = modelsCacheDir();
  if (dir === null) return null;
  const models = await listCachedModels(dir).catch(() => []);
  return models[0] ?? null;
}
