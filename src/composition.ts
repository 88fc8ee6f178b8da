/**
 * The composition of the default bridge: the engine core with the built-in method sets (core and session
 * methods), the standard extensions (the game methods) and the model backends. The engine core knows none of
 * them; this module, one level above, puts them together for `mod.ts` and the CLI.
 * @module
 */
import { EngineCore } from "./engine/engine.ts";
import type { BridgeConfiguration, EngineParts } from "./engine/configuration.ts";
import type { BridgeExtension } from "./engine/extension.ts";
import type { JsonValue } from "./protocol/json.ts";
import { CoreMethods } from "./methods/core_methods.ts";
import { SessionMethods } from "./methods/session_methods.ts";
import { GameExtension } from "./game/game_extension.ts";
import { createModel, parseModelSpec } from "./models/registry.ts";
import { createSystemModel } from "./models/system.ts";

/**
 * A fresh instance of each standard extension (the game methods), which every transport serves by default.
 *
 * @example
 * ```ts
 * import { standardExtensions } from "@open-apple-models/bridge/engine";
 * const extensions = standardExtensions(); // [GameExtension]
 * ```
 */
export function standardExtensions(): BridgeExtension[] {
  return [new GameExtension()];
}

/**
 * The bridge engine with everything the protocol defines: core and session methods, the standard extensions
 * (unless `config.extensions` replaces them) and the model types `system`, `scripted` and `openai` (plus the
 * host's `modelFactory`).
 *
 * @example
 * ```ts
 * import { BridgeEngine } from "@open-apple-models/bridge/engine";
 * const lines: string[] = [];
 * const engine = new BridgeEngine({}, (line) => lines.push(line));
 * engine.receive('{"jsonrpc":"2.0","id":1,"method":"ping"}');
 * // lines[0] === '{"jsonrpc":"2.0","id":1,"result":{}}'
 * const result = await engine.call("session/list"); // { sessions: [] }
 * ```
 */
export class BridgeEngine extends EngineCore {
  /** The built-in session methods (the session store). */
  readonly sessions: SessionMethods;
  readonly #core: CoreMethods;

  /** Creates an engine that writes each outgoing message (one JSON line, no newline) to `send`. */
  constructor(config: Partial<BridgeConfiguration> = {}, send: (line: string) => void = () => {}) {
    const core = new CoreMethods();
    const sessions = new SessionMethods();
    super(standardParts(core, sessions), config, send);
    this.sessions = sessions;
    this.#core = core;
  }

  /** The `client` object the last `initialize` sent (null before one). */
  get client(): JsonValue {
    return this.#core.client;
  }
}

function standardParts(core: CoreMethods, sessions: SessionMethods): EngineParts {
  return {
    builtins: [core, sessions],
    // The project's own: the built-ins and the game methods, also when the host builds them itself (a
    // subclass is the host's).
    ownsMethodSet: (set) => set === core || set === sessions || set.constructor === GameExtension,
    defaults: { systemModel: () => createSystemModel(), extensions: standardExtensions },
    models: { parse: parseModelSpec, create: createModel },
  };
}
