/**
 * The answers kept for the tab ({@link KeptAnswers}) as they follow the persona in the editor: its id
 * renamed, they move to the new id; the persona replaced by another (a loaded file, a restored NPC), they go;
 * a tool renamed, its answer goes with the new name; a tool the persona no longer has, its answer goes. Owns
 * which persona id the kept answers are for now.
 * @module
 */
import type { JsonObject } from "../../../protocol/json.ts";
import type { KeptAnswers } from "./kept_answers.ts";

function toolNames(definitions: JsonObject[]): string[] {
  return definitions.flatMap((def) => typeof def.name === "string" ? [def.name] : []);
}

/**
 * The kept answers of the editor's persona.
 *
 * @example
 * ```ts ignore
 * const answers = new PersonaAnswers(kept, () => editor.doc.value.npc as string);
 * answers.follow(false); // the persona's id was renamed: its answers moved with it
 * ```
 */
export class PersonaAnswers {
  readonly kept: KeptAnswers;
  readonly #persona: () => string;
  /** The persona id {@link kept}'s answers are for now (see {@link PersonaAnswers.follow}). */
  #keptFor: string;

  /** `persona`: the editor's persona id now (its `npc`), under which answers typed but not sent are kept. */
  constructor(kept: KeptAnswers, persona: () => string) {
    this.kept = kept;
    this.#persona = persona;
    this.#keptFor = persona();
  }

  /**
   * The answers kept for the tab follow the persona in the editor: its id renamed, they move to the new id;
   * the persona replaced by another (`replaced`: a loaded file, a restored NPC), they go (they were typed for
   * the old one).
   */
  follow(replaced: boolean): void {
    const now = this.#persona();
    if (now === this.#keptFor) return;
    if (replaced) this.kept.drop(this.#keptFor);
    else this.kept.rename(this.#keptFor, now);
    this.#keptFor = now;
  }

  /** A tool renamed in the editor: the answer kept for it goes with the new name. */
  renamed(old: string, name: string): void {
    const kept = this.kept.take(this.#persona(), old);
    if (kept !== undefined) this.kept.set(this.#persona(), name, kept);
  }

  /** Drops the answers of tools not in `definitions` (the persona no longer has them). */
  prune(definitions: JsonObject[]): void {
    this.kept.prune(this.#persona(), toolNames(definitions));
  }

  /**
   * After a reload: the tools of `definitions` an answer is kept for (typed to calls of the old page's turn,
   * which went with its connection); those of tools the persona no longer has go.
   */
  keptAfterReload(definitions: JsonObject[]): string[] {
    this.prune(definitions);
    return this.kept.tools(this.#persona());
  }
}
