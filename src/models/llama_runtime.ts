/**
 * Loading node-llama-cpp and GGUF files, once per process.
 *
 * The package is imported on first use through a specifier built at run time, so no static analysis (type
 * checking, `deno test`, a user's `deno run` of `mod.ts`) ever fetches it. A model file is loaded once per
 * process and GPU setting; each distinct set of context settings gets one context whose sequences form a
 * {@link SequencePool} shared by every session using those settings.
 * @module
 */
import { BridgeError } from "../protocol/errors.ts";
import type {
  ChatWrapper,
  Llama,
  LlamaContext,
  LlamaContextSequence,
  LlamaGrammar,
  LlamaModel,
  LlamaModule,
} from "./llama_api.ts";
import {
  DEFAULT_LLAMA_CONTEXT_SIZE,
  DEFAULT_LLAMA_SEQUENCES,
  llamaConfigKey,
  type LlamaGpu,
  type LlamaModelConfig,
} from "./llama_config.ts";
import { checkModelFile, isPermissionError, message, unavailable } from "./gguf_file.ts";
import { forGood } from "./for_good.ts";
import { SequencePool } from "./llama_pool.ts";
import { loadOnce } from "./load_once.ts";
import { grammarWithRules } from "./llama_grammar.ts";
import type { GrammarPlan } from "./llama_schema.ts";
import { oamCommandLine } from "./oam_hint.ts";
import { LLAMA_PERMISSIONS, llamaPermissionAdvice, missingLlamaPermissions } from "./llama_permissions.ts";
import { endSentence } from "../util/text.ts";
import { stderrQueue } from "../util/stderr_queue.ts";
import { SaidOnce } from "../util/said_once.ts";

export { checkModelFile, LLAMA_PERMISSIONS, missingLlamaPermissions };

/** The npm package and version the backend loads. */
export const NODE_LLAMA_CPP_VERSION = "3.21.1";
const PACKAGE = ["npm:node-llama-cpp", NODE_LLAMA_CPP_VERSION].join("@");

/**
 * What to do when the package cannot be imported for another reason than a permission: Deno fetches it from
 * the npm registry on first use, so the registry was unreachable (or refused it).
 */
const FETCH_HINT = ` Deno downloads node-llama-cpp ${NODE_LLAMA_CPP_VERSION} (≈ 730 MB, once) from the npm ` +
  "registry the first time a GGUF model is used: check the connection to the registry (or NPM_CONFIG_REGISTRY, " +
  `for a mirror), or download it ahead with 'deno cache --no-lock ${PACKAGE}'.`;

/** Grammars kept per loaded model (by schema). */
const MAX_GRAMMARS = 64;

/** A loaded model with its context, sequence pool and chat template. */
export interface LlamaRuntime {
  /** The imported package. */
  readonly module: LlamaModule;
  /** The llama.cpp binding. */
  readonly llama: Llama;
  /** The loaded model. */
  readonly model: LlamaModel;
  /** The context whose sequences the pool hands out. */
  readonly context: LlamaContext;
  /** Sequences for sessions. */
  readonly pool: SequencePool<LlamaContextSequence>;
  /** The model's chat template. */
  readonly chatWrapper: ChatWrapper;
  /** Tokens per sequence. */
  readonly contextSize: number;
  /** Model name (GGUF `general.name`, else the file name). */
  readonly variant: string;
  /**
   * The grammar of a structured answer (cached): node-llama-cpp's JSON-schema grammar with the plan's rules
   * in place of their placeholders, or its grammar of the plain schema when there are none or llama.cpp
   * refuses the text (the answer is validated either way).
   */
  grammar(plan: GrammarPlan): Promise<LlamaGrammar>;
}

let modulePromise: Promise<LlamaModule> | undefined;
const llamas = new Map<string, Promise<Llama>>();
const models = new Map<string, Promise<LlamaModel>>();
/** A context being loaded or loaded, with the model file it uses and when a session last asked for it. */
interface RuntimeEntry {
  readonly promise: Promise<LlamaRuntime>;
  /** The key of its model in `models`. */
  readonly modelKey: string;
  runtime?: LlamaRuntime;
  lastUsed: number;
}

const runtimes = new Map<string, RuntimeEntry>();
let runtimeClock = 0;

/**
 * Loaded contexts kept (one per file and settings). Loading one more unloads the least recently used idle ones
 * beyond this (a session of theirs loads its context again on its next turn, with a cold cache), and a model
 * file no context uses any more with them.
 */
export const MAX_LLAMA_CONTEXTS = 4;

function stderrLine(text: string): void {
  stderrQueue.push(`[node-llama-cpp] ${text.trimEnd()}\n`);
}

/** Imports node-llama-cpp (once). */
export function loadLlamaModule(): Promise<LlamaModule> {
  const missing = missingLlamaPermissions();
  if (missing.length > 0) {
    return Promise.reject(forGood(unavailable(
      `node-llama-cpp cannot run without ${missing.join(" ")}.${llamaPermissionAdvice()}`,
    )));
  }
  modulePromise ??= (import(PACKAGE) as Promise<LlamaModule>).catch((error) => {
    modulePromise = undefined;
    const hint = isPermissionError(error) ? llamaPermissionAdvice() : FETCH_HINT;
    // Deno's fetch failure is a chain of causes, one per line ("…\n    0: error sending request …").
    const why = message(error).replace(/\s*\n\s*(\d+: )?/g, ": ");
    const failure = unavailable(`node-llama-cpp could not be loaded: ${endSentence(why)}${hint}`).withCause(
      error,
    );
    throw isPermissionError(error) ? forGood(failure) : failure;
  });
  return modulePromise;
}

/** node-llama-cpp's `NoBinaryFoundError` (its message is only the class name). */
function isNoBinaryError(error: unknown): boolean {
  return error instanceof Error &&
    (error.constructor?.name === "NoBinaryFoundError" || error.message === "NoBinaryFoundError");
}

/** Why no llama.cpp binary runs, for a GPU choice: a named GPU type whose runtime is missing, or none at all. */
function noBinaryMessage(gpu: LlamaGpu): string {
  const here = `on this ${Deno.build.os} ${Deno.build.arch} machine`;
  if (gpu === "auto" || gpu === false) {
    return `llama.cpp could not start: node-llama-cpp ${NODE_LLAMA_CPP_VERSION} has no prebuilt binary that ` +
      `runs ${here}.`;
  }
  return `llama.cpp could not start with gpu "${gpu}": none of node-llama-cpp ${NODE_LLAMA_CPP_VERSION}'s ` +
    `${gpu} binaries runs ${here} (is the ${gpu} runtime installed?). Use gpu "auto", which falls back to ` +
    `the CPU, or false (on the command line: #gpu=auto or #gpu=false).`;
}

function getLlamaFor(gpu: LlamaGpu): Promise<Llama> {
  const key = String(gpu);
  let promise = llamas.get(key);
  if (promise === undefined) {
    promise = loadLlamaModule().then((module) =>
      module.getLlama({
        gpu,
        build: "never",
        logLevel: "error",
        // stdout is the protocol: llama.cpp's messages go to stderr.
        logger: (_level, text) => stderrLine(text),
        progressLogs: false,
      })
    ).then(async (llama) => {
      // A named GPU type it has no binary for fails (see noBinaryMessage), except metal off macOS: there
      // node-llama-cpp hands out its CPU binary without a word. Asked for a GPU, the user gets one or hears why.
      if (gpu !== "auto" && gpu !== false && llama.gpu !== gpu) {
        await llama.dispose().catch(() => {});
        throw unavailable(
          `llama.cpp could not start with gpu "${gpu}": node-llama-cpp ${NODE_LLAMA_CPP_VERSION} would run ` +
            `on ${llama.gpu === false ? "the CPU" : `gpu "${llama.gpu}"`} instead on this ${Deno.build.os} ` +
            `${Deno.build.arch} machine. Use gpu "auto", which picks what this machine has, or false for the ` +
            `CPU (on the command line: #gpu=auto or #gpu=false).`,
        );
      }
      return llama;
    }).catch((error) => {
      llamas.delete(key);
      if (error instanceof BridgeError) throw error;
      if (isNoBinaryError(error)) throw unavailable(noBinaryMessage(gpu)).withCause(error);
      const hint = isPermissionError(error) ? llamaPermissionAdvice() : "";
      const failure = unavailable(`llama.cpp could not start: ${message(error)}.${hint}`).withCause(error);
      throw isPermissionError(error) ? forGood(failure) : failure;
    });
    llamas.set(key, promise);
  }
  return promise;
}

/**
 * The model file loaded (once per file and GPU setting). Starting its load says so on stderr, in one line: the
 * first load (node-llama-cpp's with it the first time) takes seconds, which a script would otherwise wait
 * through without a word. Not when the permissions it needs are missing: that fails at once.
 */
function loadModelFile(real: string, gpu: LlamaGpu, shownPath: string): Promise<LlamaModel> {
  return loadOnce(models, {
    key: JSON.stringify([real, gpu]),
    notice: missingLlamaPermissions().length === 0 ? `[oam] Loading the model '${shownPath}'…` : null,
    load: () => loadModelFileNow(real, gpu, shownPath),
  });
}

/** Loads a model file (see {@link loadModelFile}); a failure is a `model_unavailable` BridgeError. */
function loadModelFileNow(real: string, gpu: LlamaGpu, shownPath: string): Promise<LlamaModel> {
  return getLlamaFor(gpu).then((llama) => llama.loadModel({ modelPath: real })).catch((error) => {
    if (error instanceof BridgeError) throw error;
    // llama.cpp says only "Failed to load model": name the usual causes and the fix.
    throw unavailable(
      `node-llama-cpp could not load '${shownPath}': ${endSentence(message(error))} The file may be ` +
        `incomplete or damaged (download it again: ${
          oamCommandLine("models pull --force <url>")
        }), or its model ` +
        `architecture may be newer than this llama.cpp (node-llama-cpp ${NODE_LLAMA_CPP_VERSION}).`,
      { path: shownPath },
    ).withCause(error);
  });
}

/** Model files already said to have no chat template (by real path). */
const warnedWithoutTemplate = new Set<string>();

/**
 * Says on stderr, once per file, that a model has no chat template node-llama-cpp knows: it then falls back
 * to its general format (`General`), which the model was not trained on, and the answers and tool calls come
 * out poor without a word otherwise.
 */
function warnWithoutTemplate(chatWrapper: ChatWrapper, real: string, shownPath: string): void {
  if (chatWrapper.wrapperName !== "General" || warnedWithoutTemplate.has(real)) return;
  warnedWithoutTemplate.add(real);
  stderrQueue.push(
    `[oam] The model '${shownPath}' has no chat template node-llama-cpp knows: it writes the prompts in a ` +
      "general format the model was not trained on, so answers and tool calls may be poor. Use an instruct " +
      "(chat) model with a template, such as Qwen2.5-1.5B-Instruct (README: A local model in two commands).\n",
  );
}

/** Contexts already said to be capped at the training size (file and size asked for). */
const notedCaps = new Set<string>();

/** Says on stderr, once per file and size, that a `contextSize` larger than the training size was capped. */
function noteCappedContext(real: string, shownPath: string, asked: number, got: number): void {
  const key = JSON.stringify([real, asked]);
  if (notedCaps.has(key)) return;
  notedCaps.add(key);
  stderrQueue.push(
    `[oam] The model '${shownPath}' was trained for ${got} tokens of context: its contextSize is ${got}, not ` +
      `the ${asked} asked for.\n`,
  );
}

async function createRuntime(config: LlamaModelConfig, real: string): Promise<LlamaRuntime> {
  const gpu = config.gpu ?? "auto";
  const [module, llama, model] = await Promise.all([
    loadLlamaModule(),
    getLlamaFor(gpu),
    loadModelFile(real, gpu, config.path),
  ]);
  const asked = config.contextSize ?? DEFAULT_LLAMA_CONTEXT_SIZE;
  const wanted = Math.min(asked, model.trainContextSize);
  if (config.contextSize !== undefined && wanted < asked) noteCappedContext(real, config.path, asked, wanted);
  const sequences = config.sequences ?? DEFAULT_LLAMA_SEQUENCES;
  let context: LlamaContext;
  try {
    context = await model.createContext({
      contextSize: wanted,
      sequences,
      threads: config.threads ?? llama.cpuMathCores,
      ...(config.batchSize !== undefined ? { batchSize: config.batchSize } : {}),
    });
  } catch (error) {
    throw unavailable(
      `node-llama-cpp could not create a ${wanted}-token context with ${sequences} sequences for ` +
        `'${config.path}': ${message(error)}`,
      { path: config.path },
    ).withCause(error);
  }
  const grammars = new Map<string, Promise<LlamaGrammar>>();
  const chatWrapper = module.resolveChatWrapper(model);
  warnWithoutTemplate(chatWrapper, real, config.path);
  const name = model.fileInfo.metadata.general?.name;
  return {
    module,
    llama,
    model,
    context,
    pool: new SequencePool(sequences, () => context.getSequence()),
    chatWrapper,
    contextSize: context.contextSize,
    variant: typeof name === "string" && name !== "" ? name : real.split(/[\\/]/).pop() ?? real,
    grammar(plan) {
      const key = JSON.stringify([plan.schema, [...plan.rules]]);
      let grammar = grammars.get(key);
      if (grammar === undefined) {
        grammar = planGrammar(llama, plan);
        grammar.catch(() => grammars.delete(key));
        if (grammars.size >= MAX_GRAMMARS) grammars.delete(grammars.keys().next().value!);
      } else grammars.delete(key);
      grammars.set(key, grammar);
      return grammar;
    },
  };
}

/** Schemas whose grammar text llama.cpp refused (each said once on stderr), as many as grammars are kept. */
const refusedPlans = new SaidOnce(MAX_GRAMMARS);

/** The grammar of a plan (see {@link LlamaRuntime.grammar}). */
async function planGrammar(llama: Llama, plan: GrammarPlan): Promise<LlamaGrammar> {
  if (plan.rules.size === 0) return await llama.createGrammarForJsonSchema(plan.plain);
  try {
    const base = await llama.createGrammarForJsonSchema(plan.schema);
    const text = grammarWithRules(base.grammar, plan.rules);
    if (text === undefined) throw new Error("no placeholder is in node-llama-cpp's grammar text");
    return await llama.createGrammar({
      grammar: text,
      stopGenerationTriggers: base.stopGenerationTriggers,
      trimWhitespaceSuffix: base.trimWhitespaceSuffix,
    });
  } catch (error) {
    const key = JSON.stringify(plan.schema);
    if (refusedPlans.first(key)) {
      stderrLine(`numeric ranges and literals are left to validation for one schema: ${message(error)}`);
    }
    return await llama.createGrammarForJsonSchema(plan.plain);
  }
}

/**
 * The shared runtime of a configuration: loads the package, the binding and the file on first use. Failures
 * are `model_unavailable` BridgeErrors with the reason and are not cached (a later call tries again).
 */
export async function openLlamaRuntime(config: LlamaModelConfig): Promise<LlamaRuntime> {
  const real = await checkModelFile(config.path);
  const key = llamaConfigKey({ ...config, path: real });
  let entry = runtimes.get(key);
  if (entry === undefined) {
    const created: RuntimeEntry = {
      promise: createRuntime(config, real),
      modelKey: JSON.stringify([real, config.gpu ?? "auto"]),
      lastUsed: 0,
    };
    created.promise.then((runtime) => {
      created.runtime = runtime;
      unloadIdleRuntimes();
    }, () => {
      if (runtimes.get(key) === created) runtimes.delete(key);
    });
    runtimes.set(key, created);
    entry = created;
  }
  entry.lastUsed = ++runtimeClock;
  return await entry.promise;
}

/** Unloads the least recently used idle contexts beyond {@link MAX_LLAMA_CONTEXTS}. */
function unloadIdleRuntimes(): void {
  const loaded = [...runtimes].filter(([, entry]) => entry.runtime !== undefined)
    .sort(([, a], [, b]) => a.lastUsed - b.lastUsed);
  let excess = loaded.length - MAX_LLAMA_CONTEXTS;
  for (const [key, entry] of loaded) {
    if (excess <= 0) break;
    const pool = entry.runtime!.pool;
    if (pool.busy > 0 || pool.waiting > 0) continue;
    runtimes.delete(key);
    pool.close();
    excess--;
    unloadRuntime(entry).catch((error) => stderrLine(`unloading a context failed: ${message(error)}`));
  }
}

async function unloadRuntime(entry: RuntimeEntry): Promise<void> {
  const runtime = entry.runtime!;
  // Decided at once: a context loaded later for the same file finds the model gone and loads it again.
  const modelUnused = ![...runtimes.values()].some((other) => other.modelKey === entry.modelKey);
  const model = modelUnused ? models.get(entry.modelKey) : undefined;
  if (modelUnused) models.delete(entry.modelKey);
  for (const sequence of runtime.pool.sequences()) if (!sequence.disposed) sequence.dispose();
  await runtime.context.dispose();
  if (model !== undefined) await (await model).dispose();
}

/** The contexts loaded now (one per file and settings; see {@link MAX_LLAMA_CONTEXTS}). */
export function loadedLlamaContexts(): number {
  return [...runtimes.values()].filter((entry) => entry.runtime !== undefined).length;
}

/**
 * Frees every loaded context, model and binding (for tests and hosts that unload the backend). Sessions
 * still using them fail afterwards; a later use loads again.
 *
 * @example
 * ```ts
 * import { closeLlamaModels } from "@open-apple-models/bridge/engine";
 * await closeLlamaModels();
 * ```
 */
export async function closeLlamaModels(): Promise<void> {
  const settled = async <T>(promises: Iterable<Promise<T>>) =>
    (await Promise.allSettled(promises)).flatMap((r) => r.status === "fulfilled" ? [r.value] : []);
  const loaded = await settled([...runtimes.values()].map((entry) => entry.promise));
  const loadedModels = await settled(models.values());
  const loadedLlamas = await settled(llamas.values());
  runtimes.clear();
  models.clear();
  llamas.clear();
  for (const runtime of loaded) {
    for (const sequence of runtime.pool.sequences()) if (!sequence.disposed) sequence.dispose();
    await runtime.context.dispose();
  }
  for (const model of loadedModels) await model.dispose();
  for (const llama of loadedLlamas) await llama.dispose();
}
