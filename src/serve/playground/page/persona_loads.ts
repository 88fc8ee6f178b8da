/// <reference lib="dom" />
/**
 * The persona editor's loads: the files chosen with Load (a persona file replaces the persona text, a script
 * goes to the Model tab, a save state is restored by the page), a restored NPC's settings copied into the
 * document, and "Undo load", which brings back the persona text from before the last of these. It owns the
 * Undo load button and the text it restores; the editor gives it a small {@link PersonaLoadsHost}.
 * @module
 */
import { isJsonObject, type JsonObject, type JsonValue } from "../../../protocol/json.ts";
import { parseJsonc, type PersonaDocument } from "./document.ts";
import { h } from "./dom.ts";
import { OPTION_DEFAULTS, PERSONA_DEFAULTS, withoutDefaults } from "./npc_defaults.ts";
import type { StartResult } from "./start_result.ts";

/** What the loads need from the editor. */
export interface PersonaLoadsHost {
  /** The persona document (every edit still waiting written first). */
  readonly doc: PersonaDocument;
  /**
   * The document was replaced: show `text` (the document's new text) in the JSONC box, and the other views;
   * `file`: the name of the file it was loaded from.
   */
  replaced(text: string, file?: string): void;
  /** Shows the outcome of a load in the editor's result line. */
  showResult(result: StartResult): void;
  /** The number of problems and of warnings the status line lists now. */
  counts(): { problems: number; warnings: number };
  /** A loaded file is a save state, not a persona file. */
  restoreFile(name: string, text: string): void;
  /** A loaded file is a script: the Model tab takes it. */
  setScript(text: string): void;
}

/**
 * Loading files into the editor, and Undo load.
 *
 * @example
 * ```ts ignore
 * const loads = new PersonaLoads(host);
 * toolbar.append(loads.undoButton);
 * await loads.load([file]); // a persona file, a script or a save state
 * ```
 */
export class PersonaLoads {
  /** The "Undo load" button (hidden until something was loaded). */
  readonly undoButton: HTMLButtonElement;
  readonly #host: PersonaLoadsHost;
  /** The persona text from before the last load, or null. */
  #undo: string | null = null;

  /** Makes the Undo load button; `host` is the editor. */
  constructor(host: PersonaLoadsHost) {
    this.#host = host;
    this.undoButton = h("button", {
      type: "button",
      id: "undo-load",
      text: "Undo load",
      hidden: true,
      on: { click: () => this.#undoLoad() },
    });
  }

  /** Replaces the persona text (a loaded file, named `file`), keeping the old text for "Undo load". */
  replaceText(text: string, file?: string): void {
    const doc = this.#host.doc;
    this.#undo = doc.text;
    this.undoButton.hidden = false;
    doc.setText(text);
    this.#host.replaced(text, file);
  }

  /** Copies a restored NPC's persona, options, tools and id into the document (undo keeps the old text). */
  adoptState(state: JsonObject): void {
    const doc = this.#host.doc;
    this.#undo = doc.text;
    this.undoButton.hidden = false;
    if (doc.problem) doc.setText("{}");
    // As a designer writes them: the bridge's defaults the state spells out are left out.
    const written: JsonObject = {
      npc: state.npc,
      persona: withoutDefaults(state.persona, PERSONA_DEFAULTS),
      options: withoutDefaults(state.options, OPTION_DEFAULTS),
      tools: state.tools,
    };
    for (const [key, value] of Object.entries(written)) {
      if (value !== undefined && !(key === "options" && isEmpty(value) && doc.get([key]) === undefined)) {
        doc.set([key], value);
      }
    }
    this.#host.replaced(doc.text);
  }

  #undoLoad(): void {
    if (this.#undo === null) return;
    const text = this.#undo;
    this.#undo = null;
    // The button hides: the focus goes on to the next control (Start) instead of the page's body, or to the
    // editor's open tab while Start is disabled (a start or restore still finishing).
    const hadFocus = document.activeElement === this.undoButton;
    this.undoButton.hidden = true;
    if (hadFocus) {
      const start = document.getElementById("start") as HTMLButtonElement | null;
      const next = start !== null && !start.disabled
        ? start
        : document.querySelector<HTMLElement>('#editor [role="tab"][aria-selected="true"]');
      next?.focus();
    }
    this.#host.doc.setText(text);
    this.#host.replaced(text);
    this.#host.showResult({ note: "The persona text from before the load is back." });
  }

  /** Loads the files chosen: each a save state, a script or a persona file; the result line says what it got. */
  async load(files: File[]): Promise<void> {
    const host = this.#host;
    const notes: string[] = [];
    for (const file of files) {
      const text = await file.text();
      const value = parseJsonc(text).value;
      if (isJsonObject(value) && (isJsonObject(value.state) || isJsonObject(value.transcript))) {
        host.restoreFile(file.name, text);
      } else if (
        /\.steps\.jsonc?$/i.test(file.name) ||
        Array.isArray(value) ||
        (isJsonObject(value) && !isJsonObject(value.persona) && Array.isArray(value.steps))
      ) {
        host.setScript(text);
        notes.push(`the script ${file.name} (new NPCs run on it)`);
      } else {
        this.replaceText(text, file.name);
        notes.push(file.name);
      }
    }
    if (notes.length === 0) return;
    // A file with problems is not "all good": the note says how many, in the warning's colour, and where.
    const { problems, warnings } = host.counts();
    const counted = [
      problems > 0 ? `${problems} problem${problems > 1 ? "s" : ""}` : "",
      warnings > 0 ? `${warnings} warning${warnings > 1 ? "s" : ""}` : "",
    ].filter(Boolean).join(" and ");
    if (counted === "") host.showResult({ note: `Loaded ${notes.join(" and ")}.` });
    else {
      host.showResult({
        warningNote: `Loaded ${notes.join(" and ")} with ${counted}: see the list above.`,
      });
    }
  }
}

/** Whether `value` is an object with no keys. */
function isEmpty(value: JsonValue): boolean {
  return isJsonObject(value) && Object.keys(value).length === 0;
}
