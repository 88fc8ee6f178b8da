/**
 * NPC test helpers: a wire client whose `{"type": "capture", "steps": [...]}` model plays a script like the
 * scripted model and records every step request, and small accessors for NPC results and events.
 */
import type { BridgeConfiguration } from "../../../src/engine/configuration.ts";
import type { LanguageModel, StepRequest, StepResult } from "../../../src/models/language_model.ts";
import { parseScript, ScriptedModel } from "../../../src/models/scripted.ts";
import type { JsonObject, JsonValue } from "../../../src/protocol/json.ts";
import { GameExtension } from "../../../src/game/game_extension.ts";
import { WireClient } from "../../helpers/wire.ts";
import { withDeadline } from "../../helpers/deadline.ts";

/** A step request as recorded (signal and callbacks dropped). */
export type Captured = Omit<StepRequest, "signal" | "onText" | "onPartial">;

/**
 * A scripted model that records its step requests. `unchecked` makes it stand for a backend that does not
 * constrain decoding: structured answers reach the NPC as they are, even where the schema (an enum, a count)
 * rules them out, which is what the reply parser's defensive cleanup is for. The scripted model itself
 * rejects such answers like an invalid real answer.
 */
export class CaptureModel implements LanguageModel {
  readonly kind = "scripted";
  readonly contextSize: number;
  readonly trimsHistory = false;
  readonly requests: Captured[] = [];
  readonly #inner: ScriptedModel;
  readonly #unchecked: boolean;
  #waiters: Array<() => void> = [];

  constructor(inner: ScriptedModel, unchecked = false, contextSize = 8192) {
    this.#inner = inner;
    this.#unchecked = unchecked;
    this.contextSize = contextSize;
  }

  availability() {
    return this.#inner.availability();
  }

  /** Resolves once the model has been asked for `n` steps (bounded by the test deadline). */
  async requested(n: number): Promise<void> {
    while (this.requests.length < n) {
      await withDeadline(new Promise<void>((r) => this.#waiters.push(r)), `model step request #${n}`);
    }
  }

  async step(req: StepRequest): Promise<StepResult> {
    const { signal: _s, onText: _t, onPartial: _p, ...rest } = req;
    this.requests.push(structuredClone(rest));
    for (const wake of this.#waiters.splice(0)) wake();
    if (!this.#unchecked || req.responseSchema === null) return await this.#inner.step(req);
    // Played as a text turn (no schema check), then handed back as the structured answer.
    const result = await this.#inner.step({ ...req, responseSchema: null, onText: undefined });
    if (result.kind !== "text") return result;
    const value = JSON.parse(result.text) as JsonValue;
    req.onPartial?.(value);
    return { kind: "structured", value, text: result.text, usage: result.usage };
  }
}

/** A wire client with the game extension and the `capture` model type. */
export class NpcClient extends WireClient {
  readonly game: GameExtension;
  /** Capture models in creation order. */
  readonly models: CaptureModel[] = [];

  constructor(config: Partial<BridgeConfiguration> = {}) {
    const game = new GameExtension();
    const models: CaptureModel[] = [];
    super({
      extensions: [game],
      modelFactory: (spec) => {
        if (spec.type !== "capture" || !("raw" in spec)) return undefined;
        const model = new CaptureModel(
          new ScriptedModel(parseScript(spec.raw, spec.path)),
          spec.raw.unchecked === true,
          typeof spec.raw.contextSize === "number" ? spec.raw.contextSize : 8192,
        );
        models.push(model);
        return model;
      },
      ...config,
    });
    this.game = game;
    this.models = models;
  }

  /** The latest capture model. */
  get model(): CaptureModel {
    return this.models[this.models.length - 1];
  }

  /** Sends a request and waits for its error object (fails when it succeeds). */
  async error(method: string, params?: JsonObject): Promise<JsonObject> {
    const id = this.request(method, params);
    const r = await this.response(id);
    if (!("error" in r)) throw new Error(`${method} succeeded: ${JSON.stringify(r.result)}`);
    return r.error as JsonObject;
  }

  /** The `npc/event` events of request `id`, in order. */
  events(id: JsonValue): JsonObject[] {
    return this.messages
      .filter((m) => m.method === "npc/event" && (m.params as JsonObject).requestId === id)
      .map((m) => (m.params as JsonObject).event as JsonObject);
  }

  /** The result of request `id` (fails on an error response). */
  async result(id: JsonValue): Promise<JsonObject> {
    const r = await this.response(id);
    if (!("result" in r)) throw new Error(`request ${String(id)} failed: ${JSON.stringify(r.error)}`);
    return r.result as JsonObject;
  }
}

/** A capture model spec. */
export function capture(...steps: JsonValue[]): JsonObject {
  return { type: "capture", steps };
}

/** A capture model spec with a given context size (in tokens). */
export function captureWithContext(contextSize: number, ...steps: JsonValue[]): JsonObject {
  return { type: "capture", contextSize, steps };
}

/** A capture model spec whose structured answers are not checked against the schema (see {@link CaptureModel}). */
export function uncheckedCapture(...steps: JsonValue[]): JsonObject {
  return { type: "capture", unchecked: true, steps };
}

/**
 * A complete structured reply step for an NPC with the default options (all emotions, 3 player options,
 * `ends_conversation` offered); `extra` replaces fields.
 */
export function reply(line: string, extra: JsonObject = {}): JsonObject {
  return {
    json: {
      emotion: "neutral",
      line,
      player_options: ["Go on.", "Why?", "Goodbye."],
      ends_conversation: false,
      ...extra,
    },
  };
}

/** What the player sees after applying `lineDelta`/`lineReset` events. */
export function displayed(events: JsonObject[]): string {
  let line = "";
  for (const e of events) {
    if (e.type === "lineDelta") line += e.delta as string;
    else if (e.type === "lineReset") line = e.line as string;
  }
  return line;
}

/** Drops the random call ids and durations from a talk result's tool records. */
export function stableToolCalls(result: JsonObject): JsonObject[] {
  return (result.toolCalls as JsonObject[]).map((r) => ({
    name: (r.call as JsonObject).name,
    arguments: (r.call as JsonObject).arguments,
    output: r.output,
    isError: r.isError,
  }));
}

/** The text of the prompt of a captured step 0 request. */
export function promptOf(req: Captured): string {
  return req.prompt;
}

/** A client tool definition (the shared test helper). */
export { tool } from "../../helpers/messages.ts";

/** One scripted behaviour of a {@link FnModel}. */
export type StepFn = (req: StepRequest) => Promise<StepResult> | StepResult;

/** A model whose steps are functions (for partial output followed by failures, rewrites, …). */
export class FnModel implements LanguageModel {
  readonly kind: string;
  readonly contextSize = 8192;
  readonly trimsHistory = false;
  readonly #steps: StepFn[];
  #next = 0;

  constructor(steps: StepFn[], kind = "scripted") {
    this.#steps = steps;
    this.kind = kind;
  }

  availability() {
    return Promise.resolve({ available: true, contextSize: 8192, supportedLanguages: [] });
  }

  async step(req: StepRequest): Promise<StepResult> {
    const fn = this.#steps[this.#next++];
    if (!fn) return { kind: "text", text: "(no more steps)", usage: null };
    return await fn(req);
  }
}

/** A client whose `{"type": "fn"}` model plays `steps`. */
export function fnClient(steps: StepFn[]): NpcClient {
  return new NpcClient({ modelFactory: (spec) => spec.type === "fn" ? new FnModel(steps) : undefined });
}
