/**
 * The designer's edits of the NPC's world still running, and who made a world change: the designer, the
 * NPC during a turn, or the bridge (the State panel's world tree logs each change as theirs). Owns the
 * world paths of the edits still running.
 * @module
 */

/**
 * The designer's world edits still running.
 *
 * @example
 * ```ts
 * import { WorldEdits } from "./world_edits.ts";
 * const edits = new WorldEdits();
 * let by = "";
 * await edits.run("gold", () => {
 *   by = edits.changedBy("gold", false);
 *   return Promise.resolve();
 * });
 * // by === "you"; edits.changedBy("gold", false) === "the bridge" now
 * ```
 */
export class WorldEdits {
  /** The world paths of the designer's edits still running (their changes are logged as theirs). */
  readonly #paths: string[] = [];

  /** Runs the designer's edit of the world at `path` (its changes arrive before its response). */
  async run(path: string, edit: () => Promise<unknown>): Promise<void> {
    this.#paths.push(path);
    try {
      await edit();
    } finally {
      this.#paths.splice(this.#paths.indexOf(path), 1);
    }
  }

  /**
   * Who made a world change at `path`: the designer when one of their edits still running is at, inside or
   * above it (also while a turn runs: a call may wait for its answer meanwhile), else the NPC during a turn
   * (`turnRunning`), else the bridge.
   */
  changedBy(path: string, turnRunning: boolean): string {
    const under = (a: string, b: string) => b === "" || a === b || a.startsWith(`${b}.`);
    if (this.#paths.some((edit) => under(path, edit) || under(edit, path))) return "you";
    return turnRunning ? "the NPC, during a turn" : "the bridge";
  }
}
