/**
 * The extensions every transport serves by default.
 * @module
 */
import { GameExtension } from "../game/game_extension.ts";
import type { BridgeExtension } from "./extension.ts";

/**
 * A fresh instance of each standard extension (the game methods).
 *
 * @example
 * ```ts
 * import { standardExtensions } from "./standard_extensions.ts";
 * const extensions = standardExtensions();
 * ```
 */
export function standardExtensions(): BridgeExtension[] {
  return [new GameExtension()];
}
