/**
 * The model a script runs on, from its command line: the scripted steps by default, the on-device model with
 * `--system`, anything else with `--model`.
 * @module
 */
import { ggufDownload, parseGgufModelFlag } from "../models/llama_config.ts";
import { parseOpenAIModelFlag } from "../models/openai_config.ts";
import { isJsonObject } from "../protocol/json.ts";
import { didYouMean, editDistance } from "../protocol/edit_distance.ts";
import type { Model, ScriptStep } from "./types.ts";

const USAGE =
  "--model takes system, scripted, openai:<baseURL>#<model>, gguf:<path|cached name>, or a model object as JSON " +
  `(e.g. '{"type": "openai", "baseURL": "http://127.0.0.1:8080/v1", "model": "qwen"}')`;

function modelFlag(args: readonly string[]): string | undefined {
  for (let i = 0; i < args.length; i++) {
    if (args[i] === "--model") {
      if (i + 1 >= args.length) throw new Error(`${USAGE}; got nothing.`);
      return args[i + 1];
    }
    if (args[i].startsWith("--model=")) return args[i].slice("--model=".length);
  }
  return undefined;
}

/** A `--model` value (so a flag before it that is close to `--model` was meant to be `--model`). */
function looksLikeModel(value: string | undefined): boolean {
  if (value === undefined) return false;
  const v = value.trim();
  return /^(openai:|gguf:|\{)/.test(v) || v === "system" || v === "scripted" || /\.gguf$/i.test(v);
}

/** Throws for `--system=<value>` anywhere in `args` (the flag takes none), also beside `--system` or `--model`. */
function refuseSystemValue(args: readonly string[]): void {
  const arg = args.find((a) => a.startsWith("--system="));
  if (arg !== undefined) {
    throw new Error(`modelFromArgs: '${arg}': --system takes no value (write --system, or --model system).`);
  }
}

/**
 * The flag `args` misspells in place of `--model` or `--system`, as `[typed, meant]`, or null. One edit from
 * `--system` is enough (`--stem`, two, may be a script's own flag); close to `--model` only with a model after
 * it (`--mode fast` is a script's own flag).
 */
function misspeltFlag(args: readonly string[]): [string, string] | null {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (!arg.startsWith("-")) continue;
    const eq = arg.indexOf("=");
    const name = eq < 0 ? arg : arg.slice(0, eq);
    if (editDistance(name, "--system") <= 1) return [name, "--system"];
    const value = eq < 0 ? args[i + 1] : arg.slice(eq + 1);
    if (editDistance(name, "--model") <= 2 && looksLikeModel(value)) return [name, "--model"];
  }
  return null;
}

/**
 * A scripted model's steps and the step it plays once they run out, for {@link modelFromArgs}
 * (`loadPersona`'s result is one).
 *
 * @example
 * ```ts
 * import { modelFromArgs, type StepScript } from "@open-apple-models/bridge";
 * const script: StepScript = { steps: [{ text: "Halt." }], fallback: { text: "Move along." } };
 * const model = modelFromArgs(Deno.args, script);
 * ```
 */
export interface StepScript {
  /** The steps, played in order. */
  steps: readonly ScriptStep[];
  /** Played for every turn after the steps run out (a steps file's `fallback`). */
  fallback?: ScriptStep;
}

function isStepList(script: readonly ScriptStep[] | StepScript): script is readonly ScriptStep[] {
  return Array.isArray(script);
}

/** `script` as steps and fallback; a TypeError naming the fix when there is none or it is no script. */
function stepScript(script: readonly ScriptStep[] | StepScript | undefined): StepScript {
  if (script === undefined || script === null) {
    throw new TypeError(
      "modelFromArgs: no script for the scripted model it plays without --system or --model: pass its steps, " +
        'modelFromArgs(Deno.args, [{ text: "Hello." }]) (or a persona file\'s loadPersona(…) result), or run ' +
        "with --system or --model <model>.",
    );
  }
  if (isStepList(script)) return { steps: script };
  if (typeof script !== "object" || !Array.isArray(script.steps)) {
    const got = Array.isArray(script)
      ? "a list"
      : typeof script === "object"
      ? "an object without 'steps'"
      : `a ${typeof script}`;
    throw new TypeError(
      `modelFromArgs: the script must be a list of steps or { steps, fallback }; got ${got}.`,
    );
  }
  return script;
}

/**
 * The `model` for a script's NPCs and sessions from its arguments:
 *
 * - `--system`: the on-device model (`"system"`);
 * - `--model openai:<baseURL>#<model>`: an OpenAI-compatible server (run with `--allow-net=<host:port>`);
 * - `--model gguf:<path|cached name>[#contextSize=…,threads=…]`: a local GGUF model through the llama backend: a
 *   file, or the name of a model `oam models pull` saved (the bridge looks a name without a slash up in its cache);
 * - `--model '<JSON object>'`: any model type the bridge supports, e.g. `{"type": "openai", …, "apiKey": …}`;
 * - `--model system`; `--model scripted` (as no flag: the scripted model playing `steps`);
 * - otherwise the scripted model playing the script (deterministic; works everywhere): its steps, then its
 *   `fallback` once they run out when `script` has one (pass `loadPersona`'s result itself, which carries a
 *   steps file's `fallback`, or a list of steps). A script that only ever runs with `--system` or `--model`
 *   may leave `script` out; without one the default is a `TypeError` that says to pass it.
 *
 * Other arguments are ignored. Throws an `Error` with the accepted forms for a `--model` it cannot read, and
 * one naming the flag it meant for a misspelt one (`--sytem`, `-system`, `--modle gguf:…`) or saying that
 * `--system` takes no value (`--system=yes`), instead of letting the scripted model play unasked.
 *
 * @example
 * ```ts
 * import { modelFromArgs } from "@open-apple-models/bridge";
 * modelFromArgs([], [{ text: "Hi." }]); // { type: "scripted", steps: [{ text: "Hi." }] }
 * modelFromArgs([], { steps: [{ text: "Hi." }], fallback: { text: "Bye." } });
 * // { type: "scripted", steps: [{ text: "Hi." }], fallback: { text: "Bye." } }
 * modelFromArgs(["--system"], []); // "system"
 * modelFromArgs(["--system"]); // "system" (no script needed when a flag names the model)
 * modelFromArgs(["--model", "openai:http://127.0.0.1:8080/v1#qwen"], []);
 * // { type: "openai", baseURL: "http://127.0.0.1:8080/v1", model: "qwen" }
 * ```
 */
export function modelFromArgs(args: readonly string[], script?: readonly ScriptStep[] | StepScript): Model {
  const scripted = (): Model => {
    const { steps, fallback } = stepScript(script);
    return { type: "scripted", steps, ...(fallback === undefined ? {} : { fallback }) };
  };
  refuseSystemValue(args);
  const flag = modelFlag(args)?.trim();
  if (flag === undefined) {
    if (args.includes("--system")) return "system";
    const misspelt = misspeltFlag(args);
    if (misspelt !== null) {
      throw new Error(
        `modelFromArgs: '${misspelt[0]}' is not an option it reads${
          didYouMean(misspelt[1], { as: "clause" })
        } ` +
          `(Without it ` +
          `the scripted model plays.)`,
      );
    }
    return scripted();
  }
  if (flag === "system") return flag;
  if (flag === "scripted") return scripted();
  if (flag.startsWith("openai:")) {
    const { baseURL, model } = parseOpenAIModelFlag(flag);
    return { type: "openai", baseURL, model };
  }
  const download = ggufDownload(flag);
  if (download !== null) {
    throw new Error(
      `modelFromArgs: --model ${flag} names a model to download, not a file on this computer: 'oam models pull ` +
        `${download.source}' downloads it once; then use --model gguf:${download.name}.`,
    );
  }
  if (flag.startsWith("gguf:")) {
    return { type: "llama", ...parseGgufModelFlag(flag) };
  }
  if (flag.startsWith("{")) {
    let value;
    try {
      value = JSON.parse(flag);
    } catch (error) {
      throw new Error(`${USAGE}; the JSON is invalid: ${error instanceof Error ? error.message : error}`);
    }
    // Any type, a host's included: the bridge checks the spec when a method names it.
    if (isJsonObject(value) && typeof value.type === "string") return { ...value, type: value.type } as Model;
  }
  // A model file given without its prefix: say the form that runs it.
  const gguf = flag.toLowerCase().endsWith(".gguf") ? ` For a GGUF file: --model gguf:${flag}` : "";
  throw new Error(`${USAGE}; got '${flag}'.${gguf}`);
}
