/**
 * The tools renamed in the editor since the running NPC was started or applied: the NPC still calls them
 * by the names it was made with, and its calls are answered with the settings the editor now keeps under
 * the new names.
 * @module
 */

/**
 * Renames since the running NPC took the editor's tools.
 *
 * @example
 * ```ts
 * const renames = new ToolRenames();
 * renames.renamed("check_stock", "stock_check");
 * renames.renamed("stock_check", "look_up_stock");
 * renames.nameNow("check_stock"); // "look_up_stock"
 * renames.reset(); // the NPC was applied: it calls look_up_stock now
 * renames.nameNow("check_stock"); // "check_stock"
 * ```
 */
export class ToolRenames {
  /** The name each renamed tool had when the NPC took it → its name now. */
  readonly #now = new Map<string, string>();

  /** A tool was renamed from `old` to `name` in the editor. */
  renamed(old: string, name: string): void {
    let first = false;
    for (const [from, to] of this.#now) {
      if (to === old) {
        this.#now.set(from, name);
        first = true;
      }
    }
    if (!first && !this.#now.has(old)) this.#now.set(old, name);
  }

  /** The editor's name now of the tool the running NPC calls `name`. */
  nameNow(name: string): string {
    return this.#now.get(name) ?? name;
  }

  /** The running NPC took the editor's tools (Start, Apply, a restore): their names are its names. */
  reset(): void {
    this.#now.clear();
  }
}
