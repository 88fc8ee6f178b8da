/// <reference lib="dom" />
/**
 * The persona editor's loads: the files chosen with Load (a persona file replaces the persona text, a script
 * goes to the Model tab, a save state is restored by the page), a restored NPC's settings copied into the
 * document, and "Undo load", which brings back the persona text (and the Model tab's script, when a script was
 * loaded) from before the last of these. It owns the Undo load button and what it restores; the editor gives it
 * a small {@link PersonaLoadsHost}.
 * @module
 */
import { isJsonObject, type JsonObject, type JsonValue } from "../../../protocol/json.ts";
import type { PersonaDocument } from "./document.ts";
import { h } from "./dom.ts";
import { loadKind } from "./load_kind.ts";
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
  /** The Model tab's script and choice now (kept before a loaded script replaces them). */
  scriptChoice(): ScriptChoice;
  /** Puts back a script and choice kept by {@link PersonaLoadsHost.scriptChoice} (Undo load). */
  restoreScript(choice: ScriptChoice): void;
}

/** The Model tab's script, whether it is chosen, and whether the designer chose the model. */
export interface ScriptChoice {
  /** The script box's text. */
  text: string;
  /** The page's script is chosen (else the bridge's model). */
  useScript: boolean;
  /** The designer chose the model (else it follows the server's). */
  modelChosen: boolean;
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
  /** What the last load replaced: the persona text (null: not replaced) and the script (null: not replaced). */
  #undo: { text: string | null; script: ScriptChoice | null } | null = null;

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
    this.#undo = { text: doc.text, script: null };
    this.undoButton.hidden = false;
    doc.setText(text);
    this.#host.replaced(text, file);
  }

  /** Copies a restored NPC's persona, options, tools and id into the document (undo keeps the old text). */
  adoptState(state: JsonObject): void {
    const doc = this.#host.doc;
    this.#undo = { text: doc.text, script: null };
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
    const { text, script } = this.#undo;
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
    if (script !== null) this.#host.restoreScript(script);
    if (text !== null) {
      this.#host.doc.setText(text);
      this.#host.replaced(text);
    }
    const back = text === null
      ? "The script from before the load is back."
      : script === null
      ? "The persona text from before the load is back."
      : "The persona text and the script from before the load are back.";
    this.#host.showResult({ note: back });
  }

  /** Loads the files chosen: each a save state, a script or a persona file; the result line says what it got. */
  async load(files: File[]): Promise<void> {
    const host = this.#host;
    const notes: string[] = [];
    // What this load replaces, for Undo load: the persona text and the script as they were before it.
    let textBefore: string | null = null;
    let scriptBefore: ScriptChoice | null = null;
    // Every file is read and recognized first: one that is none of the kinds changes nothing, not even the
    // files chosen with it.
    const read = await Promise.all(files.map(async (file) => {
      const text = await file.text();
      return { file, text, kind: loadKind(file.name, text) };
    }));
    const refused = read.flatMap(({ kind }) => "refused" in kind ? [kind.refused] : []);
    if (refused.length > 0) {
      host.showResult({ error: refused.join(" "), marks: [] });
      return;
    }
    for (const { file, text, kind } of read) {
      if (!("kind" in kind)) continue;
      if (kind.kind === "state") {
        host.restoreFile(file.name, text);
      } else if (kind.kind === "script") {
        scriptBefore ??= host.scriptChoice();
        host.setScript(text);
        notes.push(`the script ${file.name} (new NPCs run on it)`);
      } else {
        textBefore ??= host.doc.text;
        host.doc.setText(text);
        host.replaced(text, file.name);
        notes.push(file.name);
      }
    }
    if (textBefore !== null || scriptBefore !== null) {
      this.#undo = { text: textBefore, script: scriptBefore };
      this.undoButton.hidden = false;
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
