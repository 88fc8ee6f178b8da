/**
 * The file name Save persona uses: the NPC's id (else its name) in the persona text. While the text has a
 * syntax problem its name cannot be read, and the name is one the designer can predict, said with the save:
 * the file the text was loaded from (a file loaded with the problem), else the last valid version's name.
 * Pure functions: no DOM.
 * @module
 */
import { fileName } from "./dom.ts";

/** What {@link personaFileName} names the file from. */
export interface PersonaFileNameFrom {
  /** The NPC's id or name in the text, or in its last valid version while it has a syntax problem (or null). */
  name: string | null;
  /** Whether the text has a syntax problem (its name cannot be read). */
  broken: boolean;
  /** The file the text was loaded from, while it has not been valid since (else undefined). */
  loadedFrom?: string;
}

/**
 * The file name Save persona uses, and, when the NPC's name cannot be read from the text, a sentence saying
 * which name it used instead (else null).
 *
 * @example
 * ```ts ignore
 * personaFileName({ name: "mira", broken: true, loadedFrom: "guard.jsonc" }).file; // "guard.jsonc"
 * personaFileName({ name: "mira", broken: false }).file; // "mira.jsonc"
 * ```
 */
export function personaFileName(
  { name, broken, loadedFrom }: PersonaFileNameFrom,
): { file: string; why: string | null } {
  const file = fileName(name ?? "npc", ".jsonc");
  if (!broken) return { file, why: null };
  const unread = "The NPC's name cannot be read from the text (it has a syntax problem), so it is saved";
  if (loadedFrom !== undefined && loadedFrom.trim() !== "") {
    const loaded = /\.jsonc?$/i.test(loadedFrom) ? loadedFrom : fileName(loadedFrom, ".jsonc");
    return { file: loaded, why: `${unread} under the name of the file it was loaded from.` };
  }
  if (name === null) return { file, why: `${unread} as ${file}.` };
  return { file, why: `${unread} under the name of its last valid version (${name}).` };
}
