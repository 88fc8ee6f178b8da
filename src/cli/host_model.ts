/**
 * The host-level default model of CLI commands: `--model openai:<baseURL>#<model>` or
 * `--model gguf:<path|cached name>` (or the same value in `OAM_MODEL`), or `OAM_SCRIPT=<file>` (every
 * "system" use plays a fresh copy of the script). The flag wins over `OAM_SCRIPT`, which wins over
 * `OAM_MODEL`.
 * @module
 */
import type { LanguageModel } from "../models/language_model.ts";
import { ggufDownload, parseGgufModelFlag } from "../models/llama_config.ts";
import { createLlamaModel } from "../models/llama_model.ts";
import { parseOpenAIModelFlag } from "../models/openai_config.ts";
import { createOpenAIModel } from "../models/openai_model.ts";
import { parseScript, type Script, ScriptedModel } from "../models/scripted.ts";
import type { JsonValue } from "../protocol/json.ts";
import { CliError } from "./cli_error.ts";
import { oamCommandLineFor, shellWord } from "./invocation.ts";
import { readJsonInput } from "./input.ts";
import { modelsCacheDir, resolveModelPath } from "../models/gguf_cache.ts";
import { stderrStyle, writeErr } from "./tty.ts";
import { scriptFileProblem, scriptFileWarnings } from "./script_file_messages.ts";
import { grantedEnvVar } from "../util/env.ts";

/** The usage line of a model value. */
export const MODEL_VALUE_USAGE = "openai:<baseURL>#<model> or gguf:<path|cached name>";

/**
 * A factory for a `--model` value. A GGUF model gets a new instance per session (each keeps its own
 * sequence and prompt cache; the loaded file is shared); an OpenAI-compatible one is shared. A `gguf:` name
 * that is neither a file nor a cached model is a warning (`from.warn`, stderr by default) naming where the value
 * came from (`from.source`, `--model` by default), where the cache is and how to fill it; the model then
 * reports the file missing (`from.warnUncached: false` leaves the warning to that error, for a command that
 * says it next). Without a cache folder (no `--allow-env` for its variables) there is no warning:
 * the model's error says why the name could not be looked up.
 */
export async function modelFromFlag(
  flag: string,
  from: {
    source?: string;
    warn?: (message: string) => void;
    warnUncached?: boolean;
    netAccessAdvice?: (host: string) => string | null;
  } = {},
): Promise<() => LanguageModel> {
  const { source = "--model", warn = warnOnStderr, warnUncached = true, netAccessAdvice } = from;
  if (flag.startsWith("openai:")) {
    const model = createOpenAIModel(parseOpenAIModelFlag(flag), netAccessAdvice ? { netAccessAdvice } : {});
    return () => model;
  }
  if (flag.startsWith("gguf:")) {
    const config = parseGgufModelFlag(flag);
    const given = config.path;
    // `gguf:hf:…` or `gguf:https://…/x.gguf`: a download, which gguf: does not do (unless such a file is here).
    const download = downloadAdvice(given, source);
    if (download !== null && await isMissing(given)) {
      throw new Error(
        `${source === "--model" ? "--model " : ""}${flag} names a model to download, not a file on this ` +
          `computer: ${download}.`,
      );
    }
    config.path = await resolveModelPath(given);
    // Without a cache folder (its variables not granted, no home folder) whether the name is cached is
    // unknown: the model's own error says so and names the permissions.
    const dir = modelsCacheDir();
    if (
      warnUncached && config.path === given && dir !== null && !/[\\/]/.test(given) && await isMissing(given)
    ) {
      warn(
        `${source}: '${given}' is neither a file in ${workingDir()} nor a cached model in ${dir}; ` +
          `'${oamCommandLineFor("models list")}' shows the cached models, '${
            oamCommandLineFor("models pull <url>")
          }' downloads one.`,
      );
    }
    return () => createLlamaModel(config);
  }
  throw new Error(
    `${source === "--model" ? "--model " : ""}must look like ${MODEL_VALUE_USAGE}; got '${flag}'.${
      modelValueHint(flag, source)
    }`,
  );
}

/** A guess at what a value without a kind meant: a model to download, a GGUF file, or a server's URL. */
function modelValueHint(flag: string, source: string): string {
  const download = downloadAdvice(flag, source);
  if (download !== null) return ` That is a model to download: ${download}.`;
  if (/\.gguf$/i.test(flag)) return ` For a GGUF file write gguf:${flag}.`;
  if (/^https?:\/\//i.test(flag)) return ` For a server write openai:${flag.replace(/#.*$/, "")}#<model>.`;
  return "";
}

/**
 * For a model to download (`hf:<user>/<repo>/<file.gguf>`, or an http(s) URL of a `.gguf` file), the `oam
 * models pull` command that fetches it and the value that names it once cached; null for anything else.
 */
function downloadAdvice(value: string, source: string): string | null {
  const download = ggufDownload(value);
  if (download === null) return null;
  const use = source === "--model" ? `--model gguf:${download.name}` : `${source}=gguf:${download.name}`;
  return `'${
    oamCommandLineFor(`models pull ${shellWord(download.source)}`)
  }' downloads it once; then use ${use}`;
}

/** The folder relative paths start from (a `deno task` runs in the repository's folder). */
function workingDir(): string {
  try {
    return Deno.cwd();
  } catch {
    return "the working folder";
  }
}

/** Whether nothing is at `path` (false when it exists or cannot be looked at). */
async function isMissing(path: string): Promise<boolean> {
  try {
    await Deno.stat(path);
    return false;
  } catch (error) {
    return error instanceof Deno.errors.NotFound;
  }
}

/** Which kind of model a `--model` value names. */
export function modelFlagKind(flag: string): "openai" | "llama" {
  return flag.startsWith("gguf:") ? "llama" : "openai";
}

/**
 * Returns a factory replacing the system model, or undefined to keep the real one (`flag` "system" keeps
 * it whatever the environment says). A bad `OAM_SCRIPT` or
 * `OAM_MODEL` is an `invalid_input` {@link CliError} that names the variable (and the script file: "No such
 * file", "not valid JSON" with the place, a step that is not one); a bad `flag` throws a plain error. The
 * script's unknown members go to `how.warn` (see {@link readEnvScript}); an `openai:` model that may not reach its
 * server says `how.netAccessAdvice` for the host, and `how.warnUncached: false` leaves out the warning for a
 * `gguf:` name that is not cached (see {@link modelFromFlag}).
 */
export async function hostModelFromEnvironment(
  flag?: string,
  how: {
    warn?: (message: string) => void;
    warnUncached?: boolean;
    netAccessAdvice?: (host: string) => string | null;
  } = {},
): Promise<(() => LanguageModel) | undefined> {
  const { warn = warnOnStderr, warnUncached = true, netAccessAdvice } = how;
  const advice = { warnUncached, ...(netAccessAdvice ? { netAccessAdvice } : {}) };
  if (flag === "system") return undefined; // the on-device model, whatever OAM_SCRIPT and OAM_MODEL say
  if (flag !== undefined) return await modelFromFlag(flag, { source: "--model", warn, ...advice });
  const scriptPath = grantedEnvVar("OAM_SCRIPT");
  if (scriptPath) {
    if (Deno.permissions.querySync({ name: "read", path: scriptPath }).state !== "granted") {
      throw CliError.invalidInput(`OAM_SCRIPT=${scriptPath} needs --allow-read=${scriptPath}.`);
    }
    const script = await readEnvScript(scriptPath, warn);
    return () => new ScriptedModel(structuredClone(script), "scripted (OAM_SCRIPT)");
  }
  const fromEnv = grantedEnvVar("OAM_MODEL");
  if (fromEnv) {
    try {
      return await modelFromFlag(fromEnv, { source: "OAM_MODEL", warn, ...advice });
    } catch (error) {
      throw CliError.invalidInput(`OAM_MODEL: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  return undefined;
}

/** Writes a warning to stderr as the commands do: `warning: <message>` (yellow on a terminal). */
export function warnOnStderr(message: string): void {
  writeErr(`${stderrStyle().yellow("warning:")} ${message}\n`);
}

/**
 * A script read from a file, checked: problems are `invalid_input` errors that start with `at.label`
 * (`OAM_SCRIPT=steps.json: step 1 must contain one of …`), and each member nothing reads is a warning with
 * the same start (`OAM_SCRIPT=steps.json: step 1: unknown key 'delay' was ignored (did you mean 'delayMs'?).`),
 * handed to `at.warn` once the whole script parsed. Steps are counted from 1, as `loadPersona` counts them;
 * `at.path` is the name the scripted model's messages use for the script, reworded here.
 */
export function checkedScript(
  value: JsonValue,
  at: { path: string; label: string; warn: (message: string) => void },
): Script {
  let script;
  try {
    script = parseScript(value, at.path);
  } catch (error) {
    throw CliError.invalidInput(`${at.label}: ${scriptFileProblem((error as Error).message, at.path)}`);
  }
  for (const warning of scriptFileWarnings(value)) at.warn(`${at.label}: ${warning}`);
  return script;
}

/**
 * The script `OAM_SCRIPT=<path>` names, read (JSON or JSONC) and checked. Problems are `invalid_input` errors
 * that name the variable: "OAM_SCRIPT: No such file: 'steps.json'.", "OAM_SCRIPT=steps.json: step 1
 * must contain one of …"; members nothing reads go to `warn` ("OAM_SCRIPT=steps.json: step 1: unknown key
 * 'delay' was ignored (did you mean 'delayMs'?).").
 */
export async function readEnvScript(
  path: string,
  warn: (message: string) => void = warnOnStderr,
): Promise<Script> {
  let value;
  try {
    value = await readJsonInput(path);
  } catch (error) {
    throw CliError.invalidInput(`OAM_SCRIPT: ${(error as Error).message}`);
  }
  return checkedScript(value, { path: "OAM_SCRIPT", label: `OAM_SCRIPT=${path}`, warn });
}

/** The `OAM_MODEL` value when it is set and readable (for labels). */
export function modelFromEnvironmentValue(): string | undefined {
  return grantedEnvVar("OAM_MODEL") || undefined;
}
