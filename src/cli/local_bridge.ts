/**
 * The in-process bridge of the human-facing commands: a BridgeEngine reached through the typed client's
 * peer, with the notifications and `tool/call` requests of each call routed to its handlers (by
 * `requestId`), plus the model choice (`--model`, `--script`, `OAM_SCRIPT`, or the on-device model) and the
 * availability check with advice.
 * @module
 */
import { BridgeEngine } from "../composition.ts";
import type { BridgeConfiguration } from "../engine/configuration.ts";
import { BridgeError } from "../protocol/errors.ts";
import { compactJson, isJsonObject, type JsonObject, type JsonValue } from "../protocol/json.ts";
import { InProcessTransport } from "../client/in_process.ts";
import { Peer } from "../client/peer.ts";
import { type Script, ScriptedModel } from "../models/scripted.ts";
import type { LanguageModel } from "../models/language_model.ts";
import {
  checkedScript,
  hostModelFromEnvironment,
  modelFlagKind,
  modelFromEnvironmentValue,
  readEnvScript,
  warnOnStderr,
} from "./host_model.ts";
import { CliError } from "./cli_error.ts";
import {
  commandWithNet,
  currentProcess,
  denoRunWithNet,
  hasRepositoryTask,
  isLocalHost,
  oamCommandLineFor,
  type ProcessFacts,
} from "./invocation.ts";
import { readJsonInput } from "./input.ts";
import { envVar } from "../util/env.ts";

/** The script of a scripted model choice. */
export interface ChoiceScript {
  /** Identifies the script's content (a saved position is only reused with the same script). */
  digest: string;
  /** Steps every model made from now on skips (set when resuming a saved conversation). */
  start: number;
  /** The script's file, as it was named (`--script <file>`, `OAM_SCRIPT=<file>`). */
  file: string;
}

/** Which model "system" means for this command. */
export interface ModelChoice {
  /** Engine configuration replacing the system model (empty for the on-device model). */
  config: Partial<BridgeConfiguration>;
  /** Short name: `system`, `scripted`, `openai` or `llama` (a GGUF file in-process). */
  name: "system" | "scripted" | "openai" | "llama";
  /** Human description, e.g. "scripted (steps.json)". */
  label: string;
  /**
   * How to choose this model again on a command line (for printed hints): flags (`--script <file>`,
   * `--model <spec>`) and environment assignments (`OAM_SCRIPT=<file>`).
   */
  again?: { flags: string[]; env: string[] };
  /** The script, for scripted choices. */
  script?: ChoiceScript;
}

/** A short, stable digest of a parsed script (FNV-1a of its compact JSON). */
export function scriptDigest(script: Script): string {
  const text = compactJson(script as unknown as JsonValue);
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return `fnv1a-${hash.toString(16).padStart(8, "0")}-${text.length}`;
}

/** A scripted choice: every model made plays a fresh copy of `script` from `script.start`. */
function scriptedChoice(
  script: Script,
  file: string,
  label: string,
  again: { flags: string[]; env: string[] },
): ModelChoice {
  const state: ChoiceScript = { digest: scriptDigest(script), start: 0, file };
  return {
    config: {
      systemModel: () => {
        const model = new ScriptedModel(structuredClone(script), label);
        model.skip(state.start);
        return model;
      },
    },
    name: "scripted",
    label,
    again,
    script: state,
  };
}

/**
 * The `session/create` options a model choice adds: a scripted model's turn is tried once (`maxAttempts: 1`).
 * A script's error step, or an invalid answer it plays, is the answer of that turn, not a transient failure:
 * a retry would play the next step in its place and the script would run a step early from then on (`oam
 * serve` does not retry a scripted error either).
 *
 * @example
 * ```ts
 * import { choiceSessionOptions } from "./local_bridge.ts";
 * choiceSessionOptions({ config: {}, name: "system", label: "on-device model" }); // {}
 * ```
 */
export function choiceSessionOptions(choice: ModelChoice): JsonObject {
  return choice.name === "scripted" ? { maxAttempts: 1 } : {};
}

/**
 * Help lines describing the model flags, their descriptions starting at `column` (where the command's other
 * options have theirs).
 */
export function modelFlagsHelp(column = 26): string {
  const option = (flag: string) => `  ${flag}`.padEnd(column);
  return `${
    option("--model <spec>")
  }use openai:<baseURL>#<model> (a server) or gguf:<path|cached name> (a local
${" ".repeat(column)}GGUF file run in-process) instead of the on-device model; system for the
${" ".repeat(column)}on-device model even when OAM_SCRIPT or OAM_MODEL is set
${option("--script <file>")}use a scripted model: a JSON array of steps or {steps, fallback}
${" ".repeat(column)}(see PROTOCOL.md §10, "Scripted model")`;
}

/** {@link modelFlagsHelp} for commands whose descriptions start at column 26. */
export const MODEL_FLAGS_HELP: string = modelFlagsHelp();

/** Help lines about the environment. */
export const MODEL_ENV_HELP = `Environment:
  OAM_SCRIPT=<file>       scripted model for every use of the on-device model (like --script)
  OAM_MODEL=<spec>        default for --model (openai:… or gguf:…); OAM_SCRIPT wins over it
  OAM_MODELS_DIR=<dir>    where 'oam models pull' keeps GGUF files (gguf:<name> looks there)
  NO_COLOR=1              no colors (colors are only used on a terminal anyway)`;

/** Resolves `--model` / `--script` / `OAM_SCRIPT` into a model choice. */
export async function resolveModelChoice(flags: { model?: string; script?: string }): Promise<ModelChoice> {
  if (flags.model !== undefined && flags.script !== undefined) {
    throw CliError.usage("Use either --model or --script, not both.");
  }
  if (flags.script !== undefined) {
    const script = checkedScript(await readJsonInput(flags.script, "--script"), {
      path: "--script",
      label: flags.script,
      warn: warnOnStderr,
    });
    return scriptedChoice(script, flags.script, `scripted (${flags.script})`, {
      flags: ["--script", flags.script],
      env: [],
    });
  }
  const envScript = flags.model === undefined ? envVar("OAM_SCRIPT") : undefined;
  if (envScript) {
    const script = await readEnvScript(envScript);
    return scriptedChoice(script, envScript, `scripted (OAM_SCRIPT=${envScript})`, {
      flags: [],
      env: [`OAM_SCRIPT=${envScript}`],
    });
  }
  let factory;
  try {
    // No warning that a `gguf:` name is not cached: each command here says the model's error next (it fails,
    // or prints it as the model's availability), and that error says the same.
    factory = await hostModelFromEnvironment(flags.model, { warnUncached: false });
  } catch (error) {
    if (error instanceof CliError) throw error;
    throw CliError.usage(error instanceof Error ? error.message : String(error));
  }
  if (!factory) {
    const again = flags.model === "system" ? ["--model", "system"] : [];
    return { config: {}, name: "system", label: "on-device model", again: { flags: again, env: [] } };
  }
  const value = flags.model ?? modelFromEnvironmentValue() ?? "";
  return {
    config: { systemModel: factory },
    name: modelFlagKind(value),
    label: value.replace(/^(openai|gguf):/, ""),
    again: flags.model !== undefined
      ? { flags: ["--model", flags.model], env: [] }
      : { flags: [], env: [`OAM_MODEL=${value}`] },
  };
}

/** Why the on-device model is unavailable, in words, for each of the protocol's reason values. */
const ON_DEVICE_WHY: Record<string, string> = {
  device_not_eligible: "this device cannot run Apple Intelligence",
  apple_intelligence_not_enabled: "Apple Intelligence is turned off; turn it on in System Settings",
  model_not_ready: "the model is still downloading; try again in a few minutes",
};

/** Why another model is unavailable, in words (`unknown` says nothing: its detail says why). */
const MODEL_WHY: Record<string, string> = {
  device_not_eligible: "this device cannot run it",
  apple_intelligence_not_enabled: "Apple Intelligence is turned off",
  model_not_ready: "it is not ready yet",
};

/**
 * The advice printed when the on-device model is unavailable: why in words (the reason value stays in
 * `oam available --json`), then the other models to use.
 *
 * @example
 * ```ts
 * import { unavailableAdvice } from "./local_bridge.ts";
 * unavailableAdvice("device_not_eligible");
 * // "The on-device model is unavailable: this device cannot run Apple Intelligence. Use --model gguf:…"
 * ```
 */
export function unavailableAdvice(reason: string): string {
  const why = Object.hasOwn(ON_DEVICE_WHY, reason) ? ON_DEVICE_WHY[reason] : "it did not say why";
  return `The on-device model is unavailable: ${why}. Use --model gguf:<file.gguf> for a local ` +
    `GGUF model ('${
      oamCommandLineFor("models pull <url>")
    }' downloads one), --model openai:<baseURL>#<model> ` +
    `for an OpenAI-compatible server, or --script <file> (or OAM_SCRIPT=<file>) for a scripted model.`;
}

/**
 * How to grant network access to a model server, for a `Requires net access to "<host:port>"` detail: in the
 * repository's folder the `oam:local` task for this machine, or the `deno run` command with a scoped
 * `--allow-net` for another host; elsewhere this process's own command with that grant (neither the task nor
 * `cli.ts` is there); for a compiled oam, the grant to compile it with.
 */
export function netAccessAdvice(detail: string, facts: ProcessFacts = currentProcess()): string | null {
  const host = /Requires net access to "([^"]+)"/.exec(detail)?.[1];
  if (host === undefined) return null;
  const command = commandWithNet(host, facts);
  if (command === "compiled") {
    return `This oam has no network access to ${host}; it needs to be compiled with --allow-net=${host}.`;
  }
  if (command !== "task") {
    return `This oam has no network access to ${host}; run it again with that access: '${command} <command> …'.`;
  }
  return `This oam has no network access to ${host}. For a model server on this machine use ` +
    `'deno task oam:local <command> …'; for another host run 'deno run --allow-read --allow-env --allow-ffi ` +
    `--allow-run --allow-write --allow-net=${host} cli.ts <command> …' (a compiled oam needs to be compiled ` +
    `with that --allow-net).`;
}

/**
 * The availability of `model`; a failure to ask becomes unavailable with reason "unknown" and its message.
 *
 * @example
 * ```ts
 * import { ScriptedModel } from "../models/scripted.ts";
 * const availability = await availabilityOf(new ScriptedModel({ steps: [] }));
 * availability.available; // true
 * ```
 */
export function availabilityOf(
  model: LanguageModel,
): Promise<{ available: boolean; reason?: string; detail?: string; permanent?: boolean }> {
  return model.availability().catch((error) => ({
    available: false,
    reason: "unknown",
    detail: error instanceof Error ? error.message : String(error),
  }));
}

/**
 * Why the command's model cannot run, with advice: the reason in words (none for `unknown`, whose detail says
 * why), never the protocol's reason value.
 *
 * @example
 * ```ts
 * import { unavailableMessage } from "./local_bridge.ts";
 * unavailableMessage("unknown", { detail: "The model file 'a.gguf' does not exist." });
 * // the on-device model's advice (no choice given); with a GGUF choice:
 * // "The model a.gguf is unavailable: The model file 'a.gguf' does not exist."
 * ```
 */
export function unavailableMessage(
  reason: string,
  context: { detail: string | undefined; choice?: ModelChoice | undefined },
): string {
  const { detail, choice } = context;
  if (choice && choice.name !== "system") {
    const advice = detail === undefined ? null : netAccessAdvice(detail);
    const why = detail ? `: ${detail}${/[.!?]$/.test(detail) ? "" : "."}` : ".";
    const words = reason === "unknown"
      ? ""
      : ` (${Object.hasOwn(MODEL_WHY, reason) ? MODEL_WHY[reason] : `reason '${reason}'`})`;
    return `The model ${choice.label} is unavailable${words}${why}${advice === null ? "" : ` ${advice}`}`;
  }
  return unavailableAdvice(reason);
}

/** Handlers for the messages one request causes. */
export interface RequestHandlers {
  /** A `<namespace>/event` notification's `event`. */
  onEvent?(event: JsonObject): void;
  /** A `tool/call` request (`id` is the `t-<n>` id to answer with {@link LocalBridge.reply}). */
  onToolCall?(id: string, call: JsonObject, params: JsonObject): void;
  /** A `tool/cancel` notification. */
  onToolCancel?(params: JsonObject): void;
}

/**
 * An in-process bridge: a `BridgeEngine` behind the typed client's peer and in-process transport, so the
 * commands speak the same JSON-RPC as every other client. Events and `tool/call`s are routed to the handlers
 * of the request that caused them; a `tool/call` is answered later with {@link LocalBridge.reply}.
 *
 * @example
 * ```ts
 * import { LocalBridge } from "./local_bridge.ts";
 * const bridge = new LocalBridge({});
 * await bridge.call("ping"); // {}
 * await bridge.close();
 * ```
 */
export class LocalBridge {
  /** Receives `world/changed` notifications. */
  onWorldChanged?: (params: JsonObject) => void;
  /** The model choice the bridge was made for, if any. */
  readonly choice: ModelChoice | undefined;
  readonly #peer: Peer;
  #engine: BridgeEngine | null = null;
  /** `tool/call`s waiting for {@link reply}, by their `t-<n>` id. */
  readonly #toolCalls = new Map<string, (result: JsonObject) => void>();

  /** A bridge for a model choice (or a plain configuration). */
  constructor(config: ModelChoice | Partial<BridgeConfiguration>) {
    const isChoice = "name" in config && "label" in config && "config" in config;
    this.choice = isChoice ? config as ModelChoice : undefined;
    const engineConfig = isChoice ? (config as ModelChoice).config : config as Partial<BridgeConfiguration>;
    const transport = new InProcessTransport((send, onShutdown) =>
      this.#engine = new BridgeEngine({ ...engineConfig, onShutdown }, send)
    );
    this.#peer = new Peer(transport);
    this.#peer.setRequestHandler(
      "tool/call",
      () => ({ output: "The CLI cannot run this tool.", isError: true }),
    );
    this.#peer.onNotification("world/changed", (params) => this.onWorldChanged?.(params));
    // The in-process transport makes its engine at once: the peer is usable as soon as start() was called.
    this.#peer.start().catch(() => {});
  }

  /** The engine (for in-process inspection, e.g. a scripted model's position). */
  get engine(): BridgeEngine {
    return this.#engine!;
  }

  /**
   * Calls a method without handlers. Aborting `options.signal` stops the wait (the call rejects with
   * `cancelled`); the bridge is not asked to stop the work, and its late answer is dropped.
   */
  call(method: string, params: JsonObject = {}, options: { signal?: AbortSignal } = {}): Promise<JsonValue> {
    return this.#peer.request(method, params, options.signal ? { signal: options.signal } : {});
  }

  /** Calls `method` and routes the events and tool calls it causes to `handlers` until it finishes. */
  async run(method: string, params: JsonObject, handlers: RequestHandlers): Promise<JsonObject> {
    return await this.#peer.request(method, params, {
      onNotification: (notification, p) => {
        if (notification === "tool/cancel") {
          this.#peer.cancelIncoming(String(p.id)); // a late reply() is dropped
          handlers.onToolCancel?.(p);
        } else if (notification.endsWith("/event") && isJsonObject(p.event)) handlers.onEvent?.(p.event);
      },
      onRequest: (p, request) => {
        const id = String(request.id);
        if (!handlers.onToolCall || !isJsonObject(p.call)) {
          return { output: "The CLI cannot run this tool.", isError: true };
        }
        const answer = new Promise<JsonObject>((resolve) => this.#toolCalls.set(id, resolve));
        request.signal.addEventListener("abort", () => this.#toolCalls.delete(id), { once: true });
        handlers.onToolCall(id, p.call, p);
        return answer;
      },
    }) as JsonObject;
  }

  /** Answers a `tool/call` with an output. */
  reply(id: string, output: JsonValue, isError = false): void {
    const resolve = this.#toolCalls.get(id);
    this.#toolCalls.delete(id);
    resolve?.({ output, isError });
  }

  /** Answers a `tool/call` with an error output. */
  replyError(id: string, message: string): void {
    this.reply(id, message, true);
  }

  /** The availability of the command's model; throws `model_unavailable` (exit 3) with advice. */
  async requireAvailable(): Promise<JsonObject> {
    const availability = await this.call("model/availability") as JsonObject;
    if (availability.available !== true) {
      const reason = typeof availability.reason === "string" ? availability.reason : "unknown";
      const detail = typeof availability.detail === "string" ? availability.detail : undefined;
      throw new CliError(
        "model_unavailable",
        unavailableMessage(reason, { detail, choice: this.choice }),
        { reason },
      );
    }
    return availability;
  }

  /** Shuts the bridge down (bounded) and closes the connection. */
  async close(): Promise<void> {
    try {
      await this.#peer.request("shutdown");
    } catch (error) {
      if (!(error instanceof BridgeError)) throw error;
    }
    await this.#peer.close();
  }
}

/**
 * How to run `oam stdio` with network access to a model server at `host` (`"127.0.0.1:8080"`), for the
 * bridge's `netAccessAdvice`: in the repository's folder its `stdio:local` task for this machine's hosts, else
 * the `deno run` command with that grant and `--no-prompt` (a permission prompt would read the protocol's
 * stdin; in the repository also `--no-lock`, as its tasks run); for a compiled oam, the grant to compile it
 * with.
 *
 * @example
 * ```ts
 * import { stdioNetAccessAdvice } from "./local_bridge.ts";
 * stdioNetAccessAdvice("127.0.0.1:8080");
 * // in the repository: "This bridge has no network access to 127.0.0.1:8080: for a model server on this
 * // machine run it with 'deno task stdio:local'."
 * ```
 */
export function stdioNetAccessAdvice(host: string, facts: ProcessFacts = currentProcess()): string {
  const command = denoRunWithNet(host, facts);
  if (command === "compiled") {
    return `This bridge has no network access to ${host}; it needs to be compiled with --allow-net=${host}.`;
  }
  if (hasRepositoryTask("stdio:local", facts)) {
    if (isLocalHost(host)) {
      return `This bridge has no network access to ${host}: for a model server on this machine run it with ` +
        "'deno task stdio:local'.";
    }
    return `This bridge has no network access to ${host}: run it with that grant, '${
      command.replace(/^deno run /, "deno run --no-lock --no-prompt ")
    } stdio' ('deno task stdio:local' grants this machine's hosts only).`;
  }
  return `This bridge has no network access to ${host}: run it with that grant, '${
    command.replace(/^deno run /, "deno run --no-prompt ")
  } stdio'.`;
}
