/**
 * The GGUF model a script plays where `oam models pull` saved one (the cache of `--model gguf:<name>`).
 * @module
 */
import type { CachedModel } from "../models/gguf_cache.ts";

export type { CachedModel };

/**
 * The first cached model (by file name) of `oam models pull`, or null when the cache holds none: for a script
 * that plays a local GGUF model where there is one (`{ type: "llama", path: cached.path }`). It reads the cache
 * folder (`OAM_MODELS_DIR`, else the platform's cache folder; `--allow-read --allow-env`) and loads no model
 * runtime: the bridge loads node-llama-cpp only when an NPC or session uses the model (run such a script with
 * `deno run -A --no-lock`).
 *
 * @example
 * ```ts
 * import { firstCachedModel, type Model, modelFromArgs } from "@open-apple-models/bridge";
 * const cached = await firstCachedModel();
 * const model: Model = cached
 *   ? { type: "llama", path: cached.path }
 *   : modelFromArgs(Deno.args, [{ text: "Hi." }]);
 * ```
 */
export async function firstCachedModel(): Promise<CachedModel | null> {
  // Loaded here, not with mod.ts: a page that only connects over WebSocket carries no model module.
  const { firstCachedModel } = await import("../models/gguf_cache.ts");
  return await firstCachedModel();
}
