/// <reference lib="dom" />
/**
 * What the page keeps in the browser's local storage, so nothing typed is lost to a reload, a closed tab
 * or a bridge that went away: the persona text, the script, drafts that are not valid yet, the tool answer
 * settings, the conversation inputs and the last NPC state.
 * @module
 */
import type { JsonValue } from "../../../protocol/json.ts";

/** How a client tool is answered. */
export interface ToolAnswer {
  /** `manual`: the designer answers each call; `auto`: the canned answer is sent at once. */
  mode: "manual" | "auto";
  /** The canned answer (JSON or text). */
  text: string;
  /** Send it as an error output. */
  asError: boolean;
  /**
   * How an answer typed by hand is sent (its box's "Send as"), as the designer last picked it for this tool:
   * `auto` (JSON if it parses, else text; the default), `json` or `text`.
   */
  sendAs?: SendAs;
}

/** How an answer typed by hand is sent: JSON if it parses (else text), JSON only, or text. */
export type SendAs = "auto" | "json" | "text";

/** A typed value that is not valid yet (kept as typed), with the document value it was typed over. */
export interface Draft {
  /** What was typed. */
  text: string;
  /** JSON of the document value when the draft was typed (a changed document value replaces the draft). */
  base: string;
}

/** Everything the page remembers. */
export interface Saved {
  /** The persona file's JSONC text. */
  doc: string;
  /** The last valid persona text (what the form shows while `doc` has a syntax problem). */
  validDoc?: string;
  /**
   * The name of the file the persona text was loaded from, while the text has a syntax problem it was loaded
   * with (Save persona saves it under this name: the NPC's cannot be read).
   */
  loadedFrom?: string;
  /** The script editor's text. */
  script: string;
  /** Whether NPCs are created with the script (else the bridge's own model). */
  useScript: boolean;
  /**
   * True once the designer chose the model (in the Model tab, or by loading a script). Until then the page
   * follows the server: the bridge's model when it was started with one (`--script`, `--model`), else the
   * page's script.
   */
  modelChosen?: boolean;
  /** Tool answer settings by tool name. */
  answers: Record<string, ToolAnswer>;
  /** Drafts by field (`tools.0.parameters`, `world`). */
  drafts: Record<string, Draft>;
  /** The player's line being typed. */
  line: string;
  /** The line of a turn a reload cut off: back in the player's box, and said once by the next page. */
  cutLine?: string;
  /** The turn context being typed. */
  context: string;
  /** The bark situation being typed. */
  situation: string;
  /** The last `npc/state` seen (offered after a reconnect), with the world snapshot. */
  lastState: JsonValue | null;
  /** Whether the raw log is shown. */
  logOpen: boolean;
}

const KEY = "oam-playground/v1";

/** Reads what was saved, filling gaps with `defaults`. */
export function loadSaved(defaults: Saved): Saved {
  try {
    const raw = localStorage.getItem(KEY);
    if (raw === null) return defaults;
    const saved = JSON.parse(raw) as Partial<Saved>;
    return { ...defaults, ...saved };
  } catch {
    return defaults;
  }
}

/** Writes `saved` (quietly keeping the old value when storage is full or off). */
export function storeSaved(saved: Saved): boolean {
  try {
    localStorage.setItem(KEY, JSON.stringify(saved));
    return true;
  } catch {
    return false;
  }
}
