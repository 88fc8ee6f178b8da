/**
 * The `"system"` model: Apple's on-device FoundationModels through the Swift plugin (`swift/`), loaded
 * lazily with `Deno.dlopen` (see `ffi/`). Nothing is loaded at import or construction; the first
 * `availability()`, `step()` or `countTokens()` locates and opens the library. All models of one library
 * path share one plugin handle and one event pump.
 *
 * Permissions: `--allow-ffi`, `--allow-read` and `--allow-env=OAM_FM_LIBRARY`. Without them the model simply
 * reports itself unavailable.
 * @module
 */
import { type FmHandle, FmLibrary, FmRemoteError, FmTransportError } from "../../ffi/plugin.ts";
import {
  denoEnvironment,
  fileExists,
  granted,
  isEligiblePlatform,
  libraryCandidates,
  type LibrarySource,
  PLUGIN_FILE_NAME,
} from "../../ffi/locate.ts";
import { OAMFM_STATUS } from "../../ffi/symbols.ts";
import { BridgeError, toBridgeError } from "../protocol/errors.ts";
import type { JsonObject, JsonValue } from "../protocol/json.ts";
import { SERVER_INFO } from "../protocol/version.ts";
import type { LanguageModel, ModelAvailability, StepRequest, StepResult } from "./language_model.ts";
import { modelUnavailableError, pluginErrorToBridge } from "./system_errors.ts";
import {
  NATIVE_SESSION_CAPACITY,
  NativeSessions,
  type NativeStepInfo,
  parseNativeReport,
} from "./system_sessions.ts";
import {
  countTokensRequestBody,
  DEFAULT_CAPTURE_WINDOW_MS,
  DEFAULT_CONTEXT_SIZE,
  estimateTokens,
  MalformedResultError,
  parseAvailability,
  parseFeatures,
  parseStepResult,
  stepRequestBody,
  unavailable,
} from "./system_request.ts";

/**
 * Options of {@link createSystemModel}.
 *
 * @example
 * ```ts
 * import { createSystemModel, type SystemModelOptions } from "@open-apple-models/bridge/engine";
 * const options: SystemModelOptions = { libraryPath: "./libOAMFoundationModels.dylib", nativeSessions: 4 };
 * const model = createSystemModel(options);
 * (await model.availability()).available; // false where the plugin cannot load (it says why in `reason`)
 * ```
 */
export interface SystemModelOptions {
  /** Explicit library path (wins over `OAM_FM_LIBRARY` and the search). */
  libraryPath?: string;
  /** Environment reader (default `Deno.env.get`; a throwing reader counts as "not set"). */
  env?: (name: string) => string | undefined;
  /** Adds fields to every plugin request before it is sent (tests script the C test double with `x-double`). */
  decorateRequest?: (body: JsonObject) => void;
  /** Quiescence window after the first captured tool call (default 25 ms). */
  captureWindowMs?: number;
  /**
   * How many live native sessions the plugin keeps (default 8; 0 turns continuing sessions off). Applies
   * when this model opens the shared plugin handle of its library.
   */
  nativeSessions?: number;
  /** Told after every step what the plugin did with native sessions (tests and benchmarks). */
  onNativeStep?: (info: NativeStepInfo) => void;
}

interface SharedPlugin {
  path: string;
  source: LibrarySource;
  handle: FmHandle;
  availability?: ModelAvailability;
  features: Record<string, boolean>;
  tokenCountUnsupported: boolean;
  sessions: NativeSessions;
}

interface Absent {
  reason: string;
  detail?: string;
}

const CLIENT = `open-apple-models-deno/${SERVER_INFO.version}`;
const shared = new Map<string, SharedPlugin>();
const retired = new Set<FmHandle>();

function isShared(value: SharedPlugin | Absent): value is SharedPlugin {
  return "handle" in value;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

class SystemModel implements LanguageModel {
  readonly kind = "system";
  readonly trimsHistory = true;
  readonly #options: SystemModelOptions;
  #last: SharedPlugin | null = null;

  constructor(options: SystemModelOptions) {
    this.#options = options;
  }

  get contextSize(): number {
    const known = this.#last && !this.#last.handle.closed ? this.#last : this.#peek();
    return known?.availability?.contextSize ?? DEFAULT_CONTEXT_SIZE;
  }

  /** An already opened shared plugin for this model's library, without loading anything. */
  #peek(): SharedPlugin | null {
    for (const c of libraryCandidates(denoEnvironment(this.#options.env), this.#options.libraryPath)) {
      const entry = shared.get(c.path);
      if (entry && !entry.handle.closed) return entry;
    }
    return null;
  }

  #acquire(): SharedPlugin | Absent {
    const probe = denoEnvironment(this.#options.env);
    const eligible = isEligiblePlatform(probe.os, probe.arch);
    const absentReason = eligible ? "unknown" : "device_not_eligible";
    const candidates = libraryCandidates(probe, this.#options.libraryPath);
    for (const candidate of candidates) {
      const existing = shared.get(candidate.path);
      if (existing && !existing.handle.closed) return (this.#last = existing);
      const explicit = candidate.source === "option" || candidate.source === "env";
      if (!explicit && !fileExists(candidate.path)) continue;
      if (granted({ name: "ffi", path: candidate.path }) && !granted({ name: "ffi" })) {
        // A path-scoped grant opens the library, but reading its results (UnsafePointerView) would then
        // throw inside the event pump and end the process.
        return {
          reason: absentReason,
          detail: `Loading the plugin library '${candidate.path}' needs --allow-ffi without a path: ` +
            `Deno's pointer functions, which read the plugin's results, are not path-scoped.`,
        };
      }
      try {
        const capacity = this.#options.nativeSessions ?? NATIVE_SESSION_CAPACITY;
        const handle = FmLibrary.load(candidate.path).open({ client: CLIENT, nativeSessions: capacity });
        const entry: SharedPlugin = {
          path: candidate.path,
          source: candidate.source,
          handle,
          features: Object.create(null),
          tokenCountUnsupported: false,
          sessions: new NativeSessions(capacity),
        };
        shared.set(candidate.path, entry);
        return (this.#last = entry);
      } catch (error) {
        return { reason: absentReason, detail: messageOf(error) };
      }
    }
    if (!eligible) return { reason: absentReason };
    return {
      reason: absentReason,
      detail: `The plugin library ${PLUGIN_FILE_NAME} was not found (set OAM_FM_LIBRARY or build swift/).`,
    };
  }

  #decorate(body: JsonObject): JsonObject {
    this.#options.decorateRequest?.(body);
    return body;
  }

  async availability(): Promise<ModelAvailability> {
    const plugin = this.#acquire();
    if (!isShared(plugin)) return unavailable(plugin.reason, plugin.detail);
    try {
      const raw = await plugin.handle.request(this.#decorate({ op: "availability" }));
      const availability = parseAvailability(raw);
      plugin.availability = availability;
      plugin.features = parseFeatures(raw);
      return availability;
    } catch (error) {
      return unavailable("unknown", messageOf(error));
    }
  }

  /**
   * Known at once when no plugin can be loaded (absent library, load failure, wrong platform) or when the
   * loaded plugin has answered an availability check before (its last answer); undefined otherwise.
   */
  availabilityNow(): ModelAvailability | undefined {
    const plugin = this.#acquire();
    if (!isShared(plugin)) return unavailable(plugin.reason, plugin.detail);
    return plugin.availability === undefined ? undefined : { ...plugin.availability };
  }

  async step(request: StepRequest): Promise<StepResult> {
    const signal = request.signal;
    if (signal.aborted) throw BridgeError.cancelled();
    const plugin = this.#acquire();
    if (!isShared(plugin)) throw modelUnavailableError(plugin.reason, plugin.detail);
    if (!plugin.availability?.available) {
      // Not asked yet, or unavailable last time: the model may have finished downloading since.
      const availability = await this.availability();
      if (!availability.available) {
        throw modelUnavailableError(availability.reason ?? "unknown", availability.detail);
      }
    }
    if (signal.aborted) throw BridgeError.cancelled();
    const unsent = stepRequestBody(request, this.#options.captureWindowMs ?? DEFAULT_CAPTURE_WINDOW_MS);
    // After stepRequestBody: the history's ids are assigned, so the claim compares what is sent.
    const claim = plugin.sessions.claim(request);
    unsent.native = NativeSessions.body(claim);
    const body = this.#decorate(unsent);
    let raw: unknown;
    try {
      raw = await plugin.handle.request(body, {
        signal,
        onEvent: (event) => {
          if (!request.stream) return;
          if (event.type === "text" && typeof event.text === "string") request.onText?.(event.text);
          else if (event.type === "partial" && Object.hasOwn(event, "value")) {
            request.onPartial?.(event.value as JsonValue);
          }
        },
      });
    } catch (error) {
      throw signal.aborted ? BridgeError.cancelled() : stepError(error);
    }
    if (signal.aborted) throw BridgeError.cancelled();
    let result: StepResult;
    try {
      result = parseStepResult(raw);
    } catch (error) {
      if (error instanceof MalformedResultError) {
        throw BridgeError.of(
          "generation_failed",
          `The system model plugin returned a malformed result: ${error.message}.`,
        ).withCause(error);
      }
      throw error;
    }
    const report = parseNativeReport(raw);
    plugin.sessions.settle(claim, request, result, report);
    if (report) this.#options.onNativeStep?.({ ...report, requested: claim.continue });
    return result;
  }

  async countTokens(request: Omit<StepRequest, "signal">): Promise<number> {
    const plugin = this.#acquire();
    if (!isShared(plugin) || plugin.tokenCountUnsupported || plugin.features.tokenCount === false) {
      return estimateTokens(request);
    }
    try {
      const raw = await plugin.handle.request(this.#decorate(countTokensRequestBody(request)));
      const tokens = typeof raw === "object" && raw !== null
        ? (raw as Record<string, unknown>).tokens
        : undefined;
      if (typeof tokens === "number" && Number.isInteger(tokens) && tokens >= 0) return tokens;
      return estimateTokens(request);
    } catch (error) {
      if (error instanceof FmRemoteError && error.code === "unsupported") {
        plugin.tokenCountUnsupported = true;
        return estimateTokens(request);
      }
      throw stepError(error);
    }
  }
}

function stepError(error: unknown): BridgeError {
  if (error instanceof FmRemoteError) {
    return pluginErrorToBridge(error.code, { message: error.message, detail: error.detail }).withCause(error);
  }
  if (error instanceof FmTransportError) {
    if (error.status === OAMFM_STATUS.closed) return BridgeError.cancelled("The system model was closed.");
    return BridgeError.of("generation_failed", error.message).withCause(error);
  }
  return toBridgeError(error);
}

/**
 * Creates a `"system"` LanguageModel backed by the FoundationModels plugin. Nothing is loaded until the
 * first `availability()`, `step()` or `countTokens()`; `availability()` never throws, and `step()` rejects
 * with `-32001 model_unavailable` (naming the reason) when the plugin is absent or the model unavailable.
 *
 * @example
 * ```ts
 * import { closeSystemModels, createSystemModel } from "@open-apple-models/bridge/engine";
 * const model = createSystemModel();
 * const availability = await model.availability();
 * if (!availability.available) console.error(`system model unavailable: ${availability.reason}`);
 * closeSystemModels();
 * ```
 */
export function createSystemModel(options: SystemModelOptions = {}): LanguageModel {
  return new SystemModel({ ...options });
}

/**
 * Closes every open plugin handle (in-flight steps reject with `cancelled`). Models stay usable: their
 * next call opens the library again. The libraries themselves stay mapped for the life of the process.
 *
 * @example
 * ```ts
 * import { closeSystemModels } from "@open-apple-models/bridge/engine";
 * // A host that unloads the bridge (a game leaving its dialogue scene):
 * closeSystemModels();
 * ```
 */
export function closeSystemModels(): void {
  for (const entry of shared.values()) {
    entry.handle.close();
    if (entry.handle.pumping) {
      retired.add(entry.handle);
      entry.handle.whenIdle().then(() => retired.delete(entry.handle));
    }
  }
  shared.clear();
}

/** Resolves once no plugin handle has a poll outstanding (await it after {@link closeSystemModels}). */
export async function systemModelsIdle(): Promise<void> {
  const handles = [...retired, ...[...shared.values()].map((e) => e.handle)];
  await Promise.all(handles.map((h) => h.whenIdle()));
}
