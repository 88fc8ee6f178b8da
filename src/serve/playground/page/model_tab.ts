/// <reference lib="dom" />
/**
 * The persona editor's Model tab: which model new NPCs run on (the bridge's `"system"` or the page's script),
 * the script's text, its check, its files, and what runs while the bridge's model is chosen. It owns the tab's
 * controls and the `useScript`, `script` and `modelChosen` parts of what the page saves; the editor gives it a
 * small {@link ModelTabHost} to tell when the choice or the script changed.
 * @module
 */
import type { JsonValue } from "../../../protocol/json.ts";
import { download, fileName, savedNote, toFix } from "./dom.ts";
import { modelPanel } from "./editor_panels.ts";
import { notAScript, scriptModel, scriptNotes, scriptProblem } from "./script_check.ts";
import { notAScriptLooks } from "./load_kind.ts";
import type { ScriptChoice } from "./persona_loads.ts";
import type { StartResult } from "./start_result.ts";
import type { Saved } from "./storage.ts";

/** What the Model tab needs from the editor. */
export interface ModelTabHost {
  /** What the page saves (its `useScript`, `script` and `modelChosen`). */
  readonly saved: Saved;
  /** The NPC's name (or "npc") for the script's file name. */
  npcName(): string;
  /** The model chosen changed what Start would give the NPC (update the views and persist). */
  modelChanged(): void;
  /** The script's text changed (persist it). */
  changed(): void;
  /** The script's check changed (show the status line again). */
  checked(): void;
  /** Shows the outcome of a load in the editor's result line. */
  showResult(result: StartResult): void;
}

/** What `"system"` is on this server (see {@link ModelTab.setBridgeModel}). */
export interface BridgeModel {
  /** What `"system"` is, with its availability. */
  text: string;
  /** Whether it is available (null: not known yet). */
  available: boolean | null;
  /** From the server's info: its label and, for `--script`, the file the bridge plays (null: not known). */
  model: { label: string; script?: string } | null;
}

/**
 * The Model tab.
 *
 * @example
 * ```ts ignore
 * const model = new ModelTab(host);
 * model.check(); // once the editor can show its status line
 * model.model(); // the script's model when chosen, else undefined (the bridge's `system`)
 * ```
 */
export class ModelTab {
  /** The tab's panel. */
  readonly panel: HTMLElement;
  /** The script's text box. */
  readonly script: HTMLTextAreaElement;
  readonly #host: ModelTabHost;
  readonly #scriptMessage: HTMLElement;
  readonly #useScript: HTMLInputElement;
  readonly #useBridge: HTMLInputElement;
  readonly #bridgeModel: HTMLElement;
  readonly #scriptInUse: HTMLElement;
  /** What `"system"` is on this server (from its info), once known. */
  #serverModel: { label: string; script?: string } | null = null;

  /** Builds the tab from what was saved; `host` is the editor. */
  constructor(host: ModelTabHost) {
    this.#host = host;
    const saved = host.saved;
    const model = modelPanel({
      useScript: saved.useScript,
      script: saved.script,
      onModelKind: (useScript) => {
        saved.useScript = useScript;
        saved.modelChosen = true;
        this.#showScriptInUse();
        host.modelChanged();
      },
      onScriptInput: (text) => {
        saved.script = text;
        this.check();
        host.changed();
      },
      onLoadScript: (file) => this.#loadScript(file),
      onSaveScript: () => {
        const name = fileName(host.npcName(), ".steps.json");
        download(name, { text: this.script.value.trimEnd() + "\n" });
        const saved = savedNote({ name, what: "the script", opener: "Load script…" });
        const problem = this.problem();
        host.showResult(problem ? { warningNote: `${saved} ${toFix(problem)}` } : { note: saved });
      },
    });
    this.panel = model.panel;
    this.#useScript = model.useScript;
    this.#useBridge = model.useBridge;
    this.#bridgeModel = model.bridgeModel;
    this.script = model.script;
    this.#scriptMessage = model.scriptMessage;
    this.#scriptInUse = model.scriptInUse;
  }

  /** Shows what `"system"` is on this server and whether it is available. */
  setBridgeModel({ text, available, model }: BridgeModel): void {
    this.#bridgeModel.textContent = text;
    this.#bridgeModel.className = `model-detail ${
      available === true ? "ok" : available === false ? "bad" : ""
    }`;
    this.#serverModel = model;
    this.#showScriptInUse();
  }

  /**
   * While the bridge's model is chosen, the page's script is not what runs: the Model tab says what does (the
   * file the bridge plays, for `--script`) and the script box is read-only until the page's script is chosen.
   */
  #showScriptInUse(): void {
    const bridge = !this.#host.saved.useScript;
    this.#scriptInUse.hidden = !bridge;
    this.script.readOnly = bridge;
    if (!bridge) {
      this.#scriptInUse.textContent = "";
      return;
    }
    const model = this.#serverModel;
    const runs = model?.script
      ? `New NPCs run on the bridge's model, which plays the script ${model.script} (given when the ` +
        "playground started)."
      : `New NPCs run on the bridge's model (${model?.label ?? "system"}).`;
    this.#scriptInUse.textContent =
      `${runs} The page's script below is not used: choose “The page's script” above to edit and run it.`;
  }

  /** Focuses the choice of the page's script (the way round a bridge's model that cannot answer). */
  focusChoice(): void {
    this.#useScript.focus();
  }

  /** Why the script cannot be used, or null. */
  problem(): string | null {
    return scriptProblem(this.script.value);
  }

  /** Checks the script and shows its problem by the box (and in the editor's status line). */
  check(): void {
    const problem = this.problem();
    // What the bridge would warn about at Start (a member it ignores) is said by the box too, without blocking.
    const notes = problem === null ? scriptNotes(this.script.value) : [];
    this.#scriptMessage.textContent = problem ?? notes.join(" ");
    this.#scriptMessage.classList.toggle("warning", problem === null && notes.length > 0);
    this.script.setAttribute("aria-invalid", String(problem !== null));
    this.script.closest(".field")?.classList.toggle("has-error", problem !== null);
    this.#host.checked();
  }

  /** Shows the bridge's error about the model by the script box. */
  markError(message: string): void {
    this.#scriptMessage.textContent = message;
  }

  /** The model of new NPCs: the script when chosen, else undefined (the bridge's `system`). */
  model(): JsonValue | undefined {
    return this.#host.saved.useScript ? scriptModel(this.script.value) : undefined;
  }

  /**
   * Until the designer chooses the model, new NPCs run on the bridge's model when the server was started
   * with one (`serverModel` is not `"system"`: `--script`, `--model`), else on the page's script.
   */
  followServerModel(serverModel: string): void {
    const saved = this.#host.saved;
    if (saved.modelChosen) return;
    const useScript = serverModel === "system";
    if (useScript === saved.useScript) return;
    this.#useScript.checked = useScript;
    this.#useBridge.checked = !useScript;
    saved.useScript = useScript;
    this.#showScriptInUse();
    this.#host.modelChanged();
  }

  /** A short description of the model in use. */
  label(): string {
    return this.#host.saved.useScript ? "scripted (the Model tab's script)" : "the bridge's model";
  }

  /**
   * Loads a script file into the box (and chooses the page's script). A persona file or a save state chosen
   * here by mistake leaves the script as it was (it has no undo) and says where that file goes.
   */
  async #loadScript(file: File): Promise<void> {
    const text = await file.text();
    const kind = notAScript(text);
    if (kind !== null) {
      this.#host.showResult({
        error: kind === "persona"
          ? `${file.name} is a persona file, not a script: load it with Load file… above. The script was not changed.`
          : `${file.name} is a save state, not a script: restore it with Load file… above (or State → Save). ` +
            "The script was not changed.",
      });
      return;
    }
    const looks = notAScriptLooks(text);
    if (looks !== null) {
      this.#host.showResult({
        error: `${file.name} looks like ${looks}, not a script: a script is a list of steps such as ` +
          '[{"text": "Hello."}]. The script was not changed.',
        marks: [],
      });
      return;
    }
    this.setScript(text);
    this.#host.showResult({ note: `Loaded the script ${file.name}; new NPCs run on it.` });
  }

  /** The script box's text and the model chosen (kept before a loaded script replaces them). */
  choice(): ScriptChoice {
    const saved = this.#host.saved;
    return { text: this.script.value, useScript: saved.useScript, modelChosen: saved.modelChosen === true };
  }

  /** Puts back a script and the model chosen (Undo load of a script). */
  restoreChoice(choice: ScriptChoice): void {
    const saved = this.#host.saved;
    this.script.value = choice.text;
    saved.script = choice.text;
    this.#useScript.checked = choice.useScript;
    this.#useBridge.checked = !choice.useScript;
    saved.useScript = choice.useScript;
    saved.modelChosen = choice.modelChosen;
    this.#showScriptInUse();
    this.check();
    this.#host.modelChanged();
  }

  /** Puts `text` in the script box and chooses the page's script (a loaded script file). */
  setScript(text: string): void {
    const saved = this.#host.saved;
    this.script.value = text;
    saved.script = text;
    this.#useScript.checked = true;
    saved.useScript = true;
    saved.modelChosen = true;
    this.#showScriptInUse();
    this.check();
    this.#host.changed();
  }
}
