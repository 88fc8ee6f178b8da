/**
 * Configuration of the in-process GGUF backend: the `{"type": "llama", "path", …}` model parameter and the
 * host-level `--model gguf:<path>` flag (also read from `OAM_MODEL`).
 * @module
 */
import { didYouMean, nearestName } from "../protocol/edit_distance.ts";
import { BridgeError } from "../protocol/errors.ts";
import { isJsonObject, type JsonObject, type JsonValue, ownValue, presentValue } from "../protocol/json.ts";
import { Params, showValue, unknownParameter } from "../protocol/params.ts";
import { grantedEnvVar } from "../util/env.ts";

/**
 * GPU choice: `"auto"` (Metal, CUDA or Vulkan when present, else CPU), a type, or `false` for CPU only.
 *
 * @example
 * ```ts
 * import { type LlamaGpu, parseLlamaModelSpec } from "@open-apple-models/bridge/engine";
 * const cpu: LlamaGpu = false;
 * parseLlamaModelSpec({ type: "llama", path: "model.gguf", gpu: cpu }, "model").gpu; // false
 * ```
 */
export type LlamaGpu = "auto" | false | "cuda" | "vulkan" | "metal";

/**
 * Settings of a GGUF model run in-process by node-llama-cpp.
 *
 * @example
 * ```ts
 * import { createLlamaModel, type LlamaModelConfig } from "@open-apple-models/bridge/engine";
 * const config: LlamaModelConfig = { path: "models/qwen2.5-1.5b-instruct-q4_k_m.gguf", contextSize: 4096 };
 * const model = createLlamaModel(config); // node-llama-cpp and the file are loaded on its first use
 * ```
 */
export interface LlamaModelConfig {
  /** Path of the `.gguf` file. */
  path: string;
  /** Tokens each sequence (session) can hold; default {@link DEFAULT_LLAMA_CONTEXT_SIZE}, capped at training size. */
  contextSize?: number;
  /** GPU use (default `"auto"`). */
  gpu?: LlamaGpu;
  /** CPU threads for evaluation (default: llama.cpp's count of math cores). */
  threads?: number;
  /** Sequences kept in memory: sessions served at once with their cache kept (default {@link DEFAULT_LLAMA_SEQUENCES}). */
  sequences?: number;
  /** Tokens evaluated per batch (default 512, or the context size when smaller). */
  batchSize?: number;
}

/** Default context size per sequence (capped at the model's training context). */
export const DEFAULT_LLAMA_CONTEXT_SIZE = 4096;
/** Default number of sequences (sessions whose KV cache stays loaded). */
export const DEFAULT_LLAMA_SEQUENCES = 4;

const KNOWN_KEYS = ["type", "path", "contextSize", "gpu", "threads", "sequences", "batchSize"];
const GPU_VALUES: JsonValue[] = ["auto", false, "cuda", "vulkan", "metal"];

function integer(value: JsonValue, min: number, max: number): number | undefined {
  return typeof value === "number" && Number.isInteger(value) && value >= min && value <= max
    ? value
    : undefined;
}

/** Bounds of the numeric settings: `[min, max]`. */
const BOUNDS: Record<"contextSize" | "threads" | "sequences" | "batchSize", [number, number]> = {
  contextSize: [64, 1 << 20],
  threads: [1, 1024],
  sequences: [1, 64],
  batchSize: [1, 1 << 16],
};

/**
 * Validates a `{"type": "llama", "path", "contextSize"?, "gpu"?, "threads"?, "sequences"?, "batchSize"?}`
 * model parameter. Members whose value is `null` count as absent; unknown members are ignored (see
 * {@link llamaModelSpecWarnings}). The file itself is checked when the model is used, not here.
 *
 * @throws {BridgeError} `invalid_params` naming the offending member.
 * @example
 * ```ts
 * import { parseLlamaModelSpec } from "@open-apple-models/bridge/engine";
 * const config = parseLlamaModelSpec({ type: "llama", path: "models/qwen.gguf", threads: 4 }, "model");
 * config.threads; // 4
 * ```
 */
export function parseLlamaModelSpec(spec: JsonObject, path: string): LlamaModelConfig {
  if (!isJsonObject(spec)) throw BridgeError.invalidParams(`'${path}' must be an object.`);
  const at = (key: string) => `${path}.${key}`;
  const type = presentValue(spec, "type");
  if (type !== undefined && type !== "llama") {
    throw BridgeError.invalidParams(`Parameter '${at("type")}' must be "llama"; got ${showValue(type)}.`);
  }
  const file = presentValue(spec, "path");
  if (file === undefined) {
    // The spec's unknown keys are warnings of a request that now fails: the error names them.
    const p = new Params(spec, at(""));
    p.expectKeys(KNOWN_KEYS);
    throw p.missingParameter("path");
  }
  if (typeof file !== "string" || file.trim() === "" || file.includes("\0")) {
    throw BridgeError.invalidParams(
      `Parameter '${at("path")}' must be the path of a .gguf file; got ${showValue(file)}.`,
    );
  }
  const config: LlamaModelConfig = { path: file };
  for (const key of Object.keys(BOUNDS) as (keyof typeof BOUNDS)[]) {
    const value = presentValue(spec, key);
    if (value === undefined) continue;
    const [min, max] = BOUNDS[key];
    const n = integer(value, min, max);
    if (n === undefined) {
      throw BridgeError.invalidParams(
        `Parameter '${at(key)}' must be an integer from ${min} to ${max}; got ${showValue(value)}.`,
      );
    }
    config[key] = n;
  }
  const gpu = ownValue(spec, "gpu");
  if (gpu !== undefined && gpu !== null) {
    if (!GPU_VALUES.includes(gpu)) {
      throw BridgeError.invalidParams(
        `Parameter '${at("gpu")}' must be "auto", false, "cuda", "vulkan" or "metal"; got ${showValue(gpu)}.`,
      );
    }
    config.gpu = gpu as LlamaGpu;
  }
  return config;
}

/** Warnings for members of a `llama` model parameter that {@link parseLlamaModelSpec} ignores. */
export function llamaModelSpecWarnings(spec: JsonObject, path: string): string[] {
  return Object.keys(spec).filter((key) => !KNOWN_KEYS.includes(key)).map((key) =>
    unknownParameter({ name: `${path}.${key}`, key }, KNOWN_KEYS)
  );
}

/** `~/…` as the home folder: the shell does not expand a `~` that follows `gguf:`. */
function expandHome(path: string): string {
  if (!/^~[\\/]/.test(path)) return path;
  const home = grantedEnvVar("HOME") || grantedEnvVar("USERPROFILE");
  return home ? `${home.replace(/[\\/]$/, "")}${path.slice(1)}` : path;
}

/** A model to download, as {@link ggufDownload} reads it. */
export interface GgufDownload {
  /** What `oam models pull` takes: the `hf:` name or the URL (without a `gguf:` before it). */
  source: string;
  /** The cached name to use after the pull (`gguf:<name>`), or `<name>` when the file's name is not one. */
  name: string;
}

/**
 * A `--model` value that names a model to download rather than a file here: `hf:<user>/<repo>/<file.gguf>` or
 * an http(s) URL of a `.gguf` file, with or without `gguf:` before it; null for anything else. The name is the
 * one `oam models pull` caches the file under.
 *
 * @example
 * ```ts
 * import { ggufDownload } from "./llama_config.ts";
 * ggufDownload("gguf:hf:Qwen/Qwen2.5-1.5B-Instruct-GGUF/qwen2.5-1.5b-instruct-q4_k_m.gguf");
 * // { source: "hf:Qwen/…/qwen2.5-1.5b-instruct-q4_k_m.gguf", name: "qwen2.5-1.5b-instruct-q4_k_m" }
 * ggufDownload("models/tiny.gguf"); // null
 * ```
 */
export function ggufDownload(value: string): GgufDownload | null {
  const source = value.startsWith("gguf:") ? value.slice("gguf:".length) : value;
  let file = "";
  if (source.startsWith("hf:")) {
    const [path, branch = "main"] = source.slice("hf:".length).split("#", 2);
    const parts = path.split("/").filter((part) => part !== "");
    if (parts.length >= 3 && branch !== "") file = parts[parts.length - 1];
  } else {
    let url: URL;
    try {
      url = new URL(source);
    } catch {
      return null;
    }
    if ((url.protocol !== "http:" && url.protocol !== "https:") || !/\.gguf$/i.test(url.pathname)) {
      return null;
    }
    file = decodeURIComponent(url.pathname.split("/").filter((part) => part !== "").pop() ?? "");
  }
  const name = file.replace(/\.gguf$/i, "");
  return { source, name: /^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(name) && file.length <= 200 ? name : "<name>" };
}

/**
 * Parses the host-level flag value `gguf:<path>[#key=value,…]`, e.g. `gguf:models/qwen.gguf` or
 * `gguf:models/qwen.gguf#contextSize=8192,threads=4,gpu=false`. The settings after `#` are those of
 * {@link LlamaModelConfig}. A path starting with `~/` starts in the home folder (`HOME`, else `USERPROFILE`),
 * as the shell does not expand it after `gguf:`.
 *
 * @throws {Error} with a message explaining the expected form.
 * @example
 * ```ts
 * import { parseGgufModelFlag } from "@open-apple-models/bridge/engine";
 * parseGgufModelFlag("gguf:models/tiny.gguf#threads=2"); // { path: "models/tiny.gguf", threads: 2 }
 * ```
 */
export function parseGgufModelFlag(flag: string): LlamaModelConfig {
  const usage = "expected gguf:<path>[#contextSize=…,threads=…,sequences=…,batchSize=…,gpu=…]";
  if (!flag.startsWith("gguf:")) throw new Error(`Invalid --model value '${flag}': ${usage}.`);
  const rest = flag.slice("gguf:".length);
  const hash = rest.lastIndexOf("#");
  const file = expandHome((hash < 0 ? rest : rest.slice(0, hash)).trim());
  if (file === "") throw new Error(`Invalid --model value '${flag}': missing the model path; ${usage}.`);
  const spec: JsonObject = { type: "llama", path: file };
  if (hash >= 0) {
    for (const part of rest.slice(hash + 1).split(",")) {
      if (part.trim() === "") continue;
      const eq = part.indexOf("=");
      const key = (eq < 0 ? part : part.slice(0, eq)).trim();
      const text = eq < 0 ? "" : part.slice(eq + 1).trim();
      if (!KNOWN_KEYS.includes(key) || key === "type" || key === "path") {
        const meant = nearestName(key, KNOWN_KEYS.slice(2));
        throw new Error(
          `Invalid --model value '${flag}': unknown setting '${key}'${didYouMean(meant)}; ${usage}.`,
        );
      }
      let value: JsonValue = text;
      if (key === "gpu") value = text === "false" ? false : text;
      else if (/^-?\d+$/.test(text)) value = Number(text);
      spec[key] = value;
    }
  }
  try {
    return parseLlamaModelSpec(spec, "--model");
  } catch (error) {
    // Named as written after '#': "setting 'threads' must be …", not the protocol's "Parameter 'model.threads'".
    const text = (error as Error).message.replace(/^Parameter '--model\.(\w+)'/, "setting '$1'");
    throw new Error(`Invalid --model value '${flag}': ${text}`);
  }
}

/** A stable key of the settings that need their own loaded context (same file + same settings = shared). */
export function llamaConfigKey(config: LlamaModelConfig): string {
  return JSON.stringify([
    config.path,
    config.gpu ?? "auto",
    config.contextSize ?? null,
    config.threads ?? null,
    config.sequences ?? null,
    config.batchSize ?? null,
  ]);
}
