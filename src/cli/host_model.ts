/**
 * The host-level default model of CLI commands: `--model openai:<baseURL>#<model>`, or `OAM_SCRIPT=<file>`
 * (every "system" use plays a fresh copy of the script).
 * @module
 */
import type { LanguageModel } from "../models/language_model.ts";
import { parseOpenAIModelFlag } from "../models/openai_config.ts";
import { createOpenAIModel } from "../models/openai_model.ts";
import { parseScript, ScriptedModel } from "../models/scripted.ts";

/** Reads a variable only when the permission is already granted: never prompts (stdin may be the protocol). */
function env(name: string): string | undefined {
  try {
    if (Deno.permissions.querySync({ name: "env", variable: name }).state !== "granted") return undefined;
    return Deno.env.get(name);
  } catch {
    return undefined;
  }
}

/** Returns a factory replacing the system model, or undefined to keep the real one. */
export async function hostModelFromEnvironment(flag?: string): Promise<(() => LanguageModel) | undefined> {
  if (flag !== undefined) {
    if (!flag.startsWith("openai:")) {
      throw new Error(`--model must look like openai:<baseURL>#<model>; got '${flag}'.`);
    }
    const config = parseOpenAIModelFlag(flag);
    const model = createOpenAIModel(config);
    return () => model;
  }
  const scriptPath = env("OAM_SCRIPT");
  if (scriptPath) {
    if (Deno.permissions.querySync({ name: "read", path: scriptPath }).state !== "granted") {
      throw new Error(`OAM_SCRIPT=${scriptPath} needs --allow-read=${scriptPath}.`);
    }
    const text = await Deno.readTextFile(scriptPath);
    const script = parseScript(JSON.parse(text), "OAM_SCRIPT");
    return () => new ScriptedModel(structuredClone(script), "scripted (OAM_SCRIPT)");
  }
  return undefined;
}
