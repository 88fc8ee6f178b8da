/**
 * The method registry and the extension interface (§11): method sets plug into the engine by registering
 * handlers. A handler runs synchronously in arrival order; it validates and does its order-sensitive part,
 * then returns a result, or a Promise for long work (deferred work runs concurrently).
 * @module
 */
import type { JsonValue } from "../protocol/json.ts";
import type { LanguageModel } from "../models/language_model.ts";
import type { Logger } from "../util/logger.ts";
import type { Pending } from "../util/work_queue.ts";
import type { HandlerContext } from "./context.ts";
import type { BridgeSettings } from "./settings.ts";

/**
 * What a handler returns: a result now, or a Promise of it (deferred work), or a {@link Pending} of it
 * (deferred work answered the moment it finishes, as queued work is: see `WorkQueue.enqueue`).
 *
 * @example
 * ```ts
 * import type { HandlerResult } from "@open-apple-models/bridge/engine";
 * const now: HandlerResult = { pong: true };
 * const later: HandlerResult = Promise.resolve({ quest: "crypt", done: true });
 * ```
 */
export type HandlerResult = JsonValue | Promise<JsonValue> | Pending<JsonValue>;

/**
 * A method handler. It must not await anything before its order-sensitive part is done.
 *
 * @example
 * ```ts
 * import { type MethodHandler, MethodRegistry } from "@open-apple-models/bridge/engine";
 * const echo: MethodHandler = (ctx) => ({ text: ctx.params.string("text") });
 * new MethodRegistry().register("quest/echo", echo);
 * ```
 */
export type MethodHandler = (ctx: HandlerContext) => HandlerResult;

/** A watcher of registrations: the method, whether it replaces one, and its handler. */
type RegistrationWatcher = (method: string, replaces: boolean, handler: MethodHandler) => void;

/** Watchers of registrations (the engine's, while a method set registers). */
const watchers = new WeakMap<MethodRegistry, RegistrationWatcher>();

/**
 * Runs `register` (a method set registering into `registry`) with `watch` called before each registration it
 * makes. Not on the dispatch path: only `register` looks at it.
 */
export function watchRegistrations(
  registry: MethodRegistry,
  during: { watch: RegistrationWatcher; register: () => void },
): void {
  const { watch, register } = during;
  watchers.set(registry, watch);
  try {
    register();
  } finally {
    watchers.delete(registry);
  }
}

/**
 * Method name → handler. Later registrations replace earlier ones (extensions may override built-ins and
 * earlier extensions' methods); an extension that registers the same name twice is refused when the engine is
 * built, since its first handler could never run.
 *
 * @example
 * ```ts
 * import { MethodRegistry } from "@open-apple-models/bridge/engine";
 * const registry = new MethodRegistry();
 * registry.register("quest/ping", () => ({ pong: true }));
 * ```
 */
export class MethodRegistry {
  readonly #handlers = new Map<string, MethodHandler>();
  #lastMethod = "";
  #lastHandler: MethodHandler | undefined = undefined;

  /** Registers (or replaces) a method. */
  register(method: string, handler: MethodHandler): void {
    watchers.get(this)?.(method, this.#handlers.has(method), handler);
    this.#handlers.set(method, handler);
    this.#lastMethod = "";
    this.#lastHandler = undefined;
  }

  /** The handler of a method. */
  get(method: string): MethodHandler | undefined {
    return this.#handlers.get(method);
  }

  /**
   * {@link get} for the engine's dispatch: remembers the last method looked up. Each incoming method name
   * is a fresh string, which a map must hash every time; pipelined traffic mostly repeats one method, and
   * comparing two short strings is cheaper.
   */
  lookup(method: string): MethodHandler | undefined {
    if (method === this.#lastMethod) return this.#lastHandler;
    const handler = this.#handlers.get(method);
    if (handler !== undefined) {
      this.#lastMethod = method;
      this.#lastHandler = handler;
    }
    return handler;
  }

  /** Every registered method name, sorted. */
  names(): string[] {
    return [...this.#handlers.keys()].sort();
  }
}

/**
 * A set of methods plugged into the engine.
 *
 * @example
 * ```ts
 * import type { BridgeExtension } from "@open-apple-models/bridge/engine";
 * const quests: BridgeExtension = {
 *   notificationMethods: ["quest/event"],
 *   register(registry) {
 *     registry.register("quest/ping", () => ({ pong: true }));
 *   },
 * };
 * ```
 */
export interface BridgeExtension {
  /** Registers the extension's methods; `host` is what the bridge offers outside a single request. */
  register(registry: MethodRegistry, host: ExtensionHost): void;
  /** Notification methods the extension sends (listed in `initialize`'s capabilities). */
  readonly notificationMethods?: readonly string[];
  /** Cancels the extension's work and frees its state (bounded by the engine's grace period). */
  shutdown?(): Promise<void> | void;
}

/**
 * What the engine offers a method set outside a single request (handlers get a {@link HandlerContext}).
 *
 * @example
 * ```ts
 * import type { BridgeExtension } from "@open-apple-models/bridge/engine";
 * const status: BridgeExtension = {
 *   register(registry, host) {
 *     registry.register("status/limits", () => ({ maxSessions: host.settings.maxSessions }));
 *   },
 * };
 * ```
 */
export interface ExtensionHost {
  /** The bridge's limits and switches. */
  readonly settings: Readonly<BridgeSettings>;
  /** The bridge's logger (stderr). */
  readonly logger: Logger;
  /** Notification methods the bridge may send (built-ins, then extensions'). */
  readonly notificationMethods: readonly string[];
  /** Creates the model `"system"` stands for. */
  systemModel(): LanguageModel;
  /** Shuts the bridge down (what the `shutdown` method does). */
  shutdown(): Promise<void>;
}
