/**
 * PLACEHOLDER — being written. Registers nothing yet.
 * @module
 */
import type { BridgeEngine } from "../../engine/engine.ts";
import type { MethodRegistry } from "../../engine/extension.ts";
import type { GameContext } from "../game_context.ts";

/** Placeholder method set. */
export class NpcMethods {
  /** Registers the methods. */
  register(_registry: MethodRegistry, _engine: BridgeEngine, _game: GameContext): void {}
}
