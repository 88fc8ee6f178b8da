/**
 * The error of the world domain.
 * @module
 */

/**
 * A rejected world path or value: malformed path, writing through a non-container, an invalid list index,
 * a non-object root, a value nested too deeply or a value that is not JSON. The JSON-RPC layer maps it to
 * `-32054 world_error` with `data.path` = {@link WorldError.path}.
 *
 * @example
 * ```ts
 * import { WorldError, WorldState } from "@open-apple-models/bridge/engine";
 * const world = new WorldState({ player: { gold: 20 } });
 * try {
 *   world.set("player.gold.coins", 3); // gold is a number, not a container
 * } catch (error) {
 *   error instanceof WorldError; // true
 * }
 * ```
 */
export class WorldError extends Error {
  /** The path the error is about: as given for a malformed path, canonical (`"a.0.b"`) otherwise. */
  readonly path: string;

  /** Creates an error with its message and path. */
  constructor(message: string, path: string) {
    super(message);
    this.name = "WorldError";
    this.path = path;
  }
}
