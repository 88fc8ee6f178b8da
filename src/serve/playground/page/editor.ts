/// <reference lib="dom" />
/**
 * The persona editor: a form with every persona field and NPC option (defaults, limits and checks shown
 * inline), the client tools, the initial world and memory, the model (the bridge's or a script), and the
 * raw JSONC text, all editing one persona document so they stay in sync. Loads and saves persona files.
 *
 * editor_panels.ts builds the tabs' panels and the toolbars, editor_status.ts the status line (the running NPC
 * compared with the editor, the summary and the list of checks), world_tab.ts the World tab and its draft,
 * model_tab.ts the Model tab and the script, persona_loads.ts loading files and Undo load, deferred_writes.ts
 * holds a long document's edits until a pause in typing, field_check.ts checks a field, start_result.ts shows
 * the outcome of a start; this module keeps the document, the form's field widgets, the syncing between the
 * views, the checks and saves.
 * @module
 */
import { isJsonObject, type JsonObject, type JsonValue } from "../../../protocol/json.ts";
import { errorCount, npcToolNames, PersonaDocument, type Review, reviewDocument } from "./document.ts";
import { download, h, savedNote, tabs, toFix } from "./dom.ts";
import {
  fileToolbar,
  type FormParts,
  jsoncPanel,
  memoryPanel,
  optionsPanel,
  personaPanel,
  startToolbar,
} from "./editor_panels.ts";
import {
  checkItem,
  reviewItems,
  RunningNpc,
  settingsKey,
  showChecking,
  statusLine,
} from "./editor_status.ts";
import { DEFER_SYNC_ABOVE, DeferredWrites } from "./deferred_writes.ts";
import { fieldCheck } from "./field_check.ts";
import { CHECKING, type FieldWidget, fieldWidget } from "./field_widgets.ts";
import { type Check, FIELDS, type Section } from "./fields.ts";
import { contextWarning, SCRIPT_CONTEXT_SIZE } from "./prompt_size.ts";
import { ModelTab, type ModelTabHost } from "./model_tab.ts";
import { personaFileName } from "./persona_file_name.ts";
import { PersonaLoads, type PersonaLoadsHost } from "./persona_loads.ts";
import { pathsIn } from "./bridge_paths.ts";
import { resultItems, type StartResult } from "./start_result.ts";
import type { Saved } from "./storage.ts";
import { ToolEditor } from "./tool_editor.ts";
import { WorldTab, type WorldTabHost } from "./world_tab.ts";

/** What the editor tells the page. */
export interface EditorEvents {
  /**
   * Something typed changed (persist it). `replaced`: the persona document was replaced (a loaded file, a
   * restored NPC, Undo load) rather than edited.
   */
  changed(replaced?: boolean): void;
  /** Start (or restart) the NPC; `force` starts despite problems the page found. */
  start(force: boolean): void;
  /** Apply the persona, options and tools to the running NPC, keeping its conversation and memory. */
  apply(): void;
  /** A loaded file is a save state, not a persona file. */
  restoreFile(name: string, text: string): void;
  /** Export the NPC as the JSON an engine sends. */
  exportForEngine(): void;
  /** A tool's rename was committed (its answer settings moved from `old` to `name`). */
  toolRenamed(old: string, name: string): void;
}

/** The persona editor. */
export class Editor {
  readonly #doc: PersonaDocument;
  /** Edits not written into the document yet: a long one's wait for a pause in typing (see {@link DEFER_SYNC_ABOVE}). */
  readonly #writes = new DeferredWrites((pending) => pending && this.#showChecking());
  /** Form fields edited since the document was last written. */
  readonly #pending = new Set<FieldWidget>();
  /** What the page saves. */
  readonly saved: Saved;
  /** The editor's element. */
  readonly root: HTMLElement;
  /** The last review of the document. */
  review: Review;
  readonly #events: EditorEvents;
  readonly #widgets: FieldWidget[] = [];
  readonly #synced = new Map<string, string>();
  readonly #tools: ToolEditor;
  /** The bridge's checks of the tools (see {@link Editor.setToolNotes}), with the tools it checked. */
  #bridgeChecks: { tools: string[]; notes: Map<number, Check[]> } = { tools: [], notes: new Map() };
  readonly #jsonc: HTMLTextAreaElement;
  readonly #jsoncCaret: HTMLElement;
  readonly #jsoncProblem: HTMLElement;
  readonly #status: HTMLElement;
  /** The name of the NPC running now (the status line says so), or null. */
  readonly #running = new RunningNpc();
  readonly #result: HTMLElement;
  readonly #staleBanners: HTMLElement[] = [];
  readonly #world: WorldTab;
  readonly #model: ModelTab;
  readonly #loads: PersonaLoads;
  /** The context size of the bridge's model (from its availability), once known. */
  #bridgeContext: number | null = null;
  /** The bridge's model as the Model tab says it ("…, unavailable: …") while it is known not to answer. */
  #bridgeUnavailable: string | null = null;
  readonly #select: (id: string) => void;

  /** Builds the editor in `host` from what was saved. */
  constructor(host: HTMLElement, saved: Saved, events: EditorEvents) {
    this.saved = saved;
    this.#events = events;
    this.#doc = new PersonaDocument(saved.validDoc ?? saved.doc);
    if (this.doc.text !== saved.doc) this.doc.setText(saved.doc);
    this.review = reviewDocument(this.doc.value);
    this.root = host;

    const form: FormParts = {
      banner: () => this.#staleBanner(),
      fields: (section, keys) => this.#fieldWidgets(section, keys),
    };
    const persona = personaPanel(form);
    const options = optionsPanel(form);
    const memory = memoryPanel(form);
    // (The tools tab reads the document through the getter: a form edit still pending is written first.)
    const doc = () => this.doc;
    this.#tools = new ToolEditor({
      get doc() {
        return doc();
      },
      drafts: saved.drafts,
      answers: saved.answers,
      changed: () => this.#documentChanged("form"),
      edit: (key, write) => this.#writes.edit(key, write, this.#defer()),
      flush: () => this.flush(),
      renamed: (old, name) => this.#events.toolRenamed(old, name),
    });
    const tools = h("div", {}, form.banner(), this.#tools.root);
    this.#world = new WorldTab(form, this.#worldTabHost());
    this.#model = new ModelTab(this.#modelTabHost());
    const jsonc = jsoncPanel({
      text: this.doc.text,
      onInput: () => this.#jsoncInput(),
      onCaret: () => this.#showCaret(),
    });
    this.#jsonc = jsonc.input;
    this.#jsonc.addEventListener("focusout", () => this.flush());
    this.#jsoncCaret = jsonc.caret;
    this.#jsoncProblem = jsonc.problem;

    this.#loads = new PersonaLoads(this.#loadsHost());
    this.#status = h("div", { id: "editor-status", class: "status", role: "status", "aria-live": "polite" });
    this.#result = h("div", { id: "start-result", class: "status", role: "alert" });
    const tabHost = h("div", { class: "tabs" });
    host.append(...this.#toolbars(), this.#status, this.#result, tabHost);
    this.#select = tabs(tabHost, {
      name: "Persona editor",
      // Another tab shows what was typed: an edit still waiting for a pause in typing is written first.
      onSelect: () => this.flush(),
      items: [
        { id: "persona", label: "Persona", panel: persona },
        { id: "options", label: "Options", panel: options },
        { id: "tools", label: "Tools", panel: tools },
        { id: "world", label: "World", panel: this.#world.panel },
        { id: "memory", label: "Memory", panel: memory },
        { id: "model", label: "Model", panel: this.#model.panel },
        { id: "jsonc", label: "JSONC", panel: jsonc.panel },
      ],
    });
    this.#syncFromDocument();
    this.#model.check();
    this.#world.restoreDraft();
  }

  /**
   * The persona document, with every form edit written into it: an edit still waiting for a pause in typing
   * (see {@link DEFER_SYNC_ABOVE}) is written first, so Start, Apply, Save and every other reader get every key.
   */
  get doc(): PersonaDocument {
    this.flush();
    return this.#doc;
  }

  /** The widgets of a section's fields (only `keys`, when given), kept for syncing and checks. */
  #fieldWidgets(section: Section, keys?: readonly string[]): HTMLElement[] {
    const onField = (widget: FieldWidget) => this.#fieldInput(widget);
    return FIELDS.filter((f) => f.section === section && (!keys || keys.includes(f.key))).map((spec) => {
      const widget = fieldWidget(spec, onField);
      // Leaving a field writes its edit at once (the JSONC tab, a click elsewhere).
      widget.root.addEventListener("focusout", () => this.flush());
      this.#widgets.push(widget);
      return widget.root;
    });
  }

  /** The banner a form panel shows while the JSONC text has a syntax problem. */
  #staleBanner(): HTMLElement {
    const banner = h("p", { class: "banner warning", hidden: true, role: "status" });
    this.#staleBanners.push(banner);
    return banner;
  }

  /** The file toolbar (load, save, export, undo a load) and the start toolbar (start, apply). */
  #toolbars(): HTMLElement[] {
    return [
      fileToolbar({
        onLoad: (files) => this.#loads.load(files),
        onSave: () => this.savePersona(),
        onExport: () => this.#events.exportForEngine(),
        undo: this.#loads.undoButton,
      }),
      startToolbar({ onStart: () => this.#events.start(false), onApply: () => this.#events.apply() }),
    ];
  }

  /** What the World tab needs from the editor ({@link WorldTab}). */
  #worldTabHost(): WorldTabHost {
    // (The tab reads the document through the getter: a form edit still pending is written first.)
    const doc = () => this.doc;
    return {
      get doc() {
        return doc();
      },
      saved: this.saved,
      defer: () => this.#defer(),
      edit: (write, defer) => this.#writes.edit("world", write, defer),
      flush: () => this.flush(),
      documentChanged: () => this.#documentChanged("form"),
      changed: () => {
        this.#events.changed();
        this.#renderStatus(); // the box's text is not a world: the status list says so
      },
    };
  }

  /** What the Model tab needs from the editor ({@link ModelTab}). */
  #modelTabHost(): ModelTabHost {
    return {
      saved: this.saved,
      npcName: () => this.#npcName(),
      modelChanged: () => this.#documentChanged("form"),
      changed: () => this.#events.changed(),
      checked: () => this.#renderStatus(),
      showResult: (result) => this.showResult(result),
    };
  }

  /** What loading files and Undo load need from the editor ({@link PersonaLoads}). */
  #loadsHost(): PersonaLoadsHost {
    const doc = () => this.doc;
    return {
      get doc() {
        return doc();
      },
      replaced: (text, file) => {
        this.#jsonc.value = text;
        this.#documentChanged("load", file);
      },
      showResult: (result) => this.showResult(result),
      counts: () => this.#counts(),
      restoreFile: (name, text) => this.#events.restoreFile(name, text),
      setScript: (text) => this.#model.setScript(text),
      scriptChoice: () => this.#model.choice(),
      restoreScript: (choice) => this.#model.restoreChoice(choice),
    };
  }

  /** The NPC's name (or "npc") for file names. */
  #npcName(): string {
    return this.#readName() ?? "npc";
  }

  /** The NPC's id, else its name, in the text (in its last valid version while it has a syntax problem). */
  #readName(): string | null {
    const npc = this.doc.get(["npc"]);
    const name = this.doc.get(["persona", "name"]);
    return typeof npc === "string" ? npc : typeof name === "string" ? name : null;
  }

  /** Selects an editor tab. */
  selectTab(id: string): void {
    this.#select(id);
  }

  /** Whether an edit to a document of `length` characters waits for a pause in typing. */
  #defer(length = this.#doc.text.length): boolean {
    return length > DEFER_SYNC_ABOVE;
  }

  /**
   * A form field edit: written into the document at once, or, in a long document, after a pause in typing
   * (or when the field is left, or the document is read: see {@link Editor.doc}).
   */
  #fieldInput(widget: FieldWidget): void {
    this.#pending.add(widget);
    const defer = this.#defer();
    if (defer) widget.checking();
    this.#writes.edit("form", () => this.#writeFields(), defer);
  }

  /** Commits the tool renames still being typed (their answer settings move): before Start, Apply, a reload. */
  commitRenames(): void {
    this.#tools.commitRenames();
  }

  /** Writes the edits not written yet (form, JSONC text, world) into the document, re-syncing the views once. */
  flush(): void {
    this.#writes.flush();
  }

  /** Writes the form fields edited into the document (and re-syncs the other views once). */
  #writeFields(): void {
    const widgets = [...this.#pending];
    this.#pending.clear();
    let changed = false;
    for (const widget of widgets) changed = this.#writeField(widget) || changed;
    if (changed) this.#documentChanged("form");
  }

  /**
   * While an edit waits for a pause in typing, the status list says its checks are those of the document
   * before it (they may no longer hold); the next sync shows them again.
   */
  #showChecking(): void {
    showChecking(this.#status, CHECKING);
    if (this.#jsoncProblem.textContent !== "") this.#jsoncProblem.textContent = CHECKING;
  }

  /** Writes a field's value into the document; false (the field says why) when it could not. */
  #writeField(widget: FieldWidget): boolean {
    const { section, key } = widget.spec;
    const value = widget.read();
    const path = section === "file" ? [key] : [section, key];
    try {
      this.#doc.set(path, value);
    } catch (error) {
      widget.mark({ error: `Not saved: ${(error as Error).message}` });
      return false;
    }
    this.#synced.set(widget.path, JSON.stringify(value ?? null));
    return true;
  }

  /** A JSONC text edit: written into the document at once, or, in a long text, after a pause in typing. */
  #jsoncInput(): void {
    this.#showCaret();
    this.#writes.edit("jsonc", () => {
      this.#doc.setText(this.#jsonc.value);
      this.#documentChanged("jsonc");
    }, this.#defer(this.#jsonc.value.length));
  }

  #showCaret(): void {
    const before = this.#jsonc.value.slice(0, this.#jsonc.selectionStart);
    const line = before.split("\n").length;
    this.#jsoncCaret.textContent = `Line ${line}, column ${before.length - before.lastIndexOf("\n")}.`;
  }

  /**
   * The document changed (from the form or the JSONC text, or replaced by a load: of `file`, when a file was
   * loaded): update the other views and persist.
   */
  #documentChanged(from: "form" | "jsonc" | "load", file?: string): void {
    this.saved.doc = this.doc.text;
    if (this.doc.problem === null) this.saved.validDoc = this.doc.text;
    // Save persona names a text whose name cannot be read after the file it was loaded from, until it is valid.
    if (this.doc.problem === null || from === "load") this.saved.loadedFrom = undefined;
    if (this.doc.problem !== null && file !== undefined) this.saved.loadedFrom = file;
    if (from !== "jsonc") this.#jsonc.value = this.doc.text;
    this.#syncFromDocument();
    this.#events.changed(from === "load");
  }

  /** Shows the document in the form (fields whose value changed elsewhere), and the checks. */
  #syncFromDocument(): void {
    const problem = this.doc.problem;
    for (const banner of this.#staleBanners) {
      banner.hidden = problem === null;
      banner.textContent = problem
        ? `The JSONC text has a syntax problem (line ${problem.line}, column ${problem.column}), so the form shows ` +
          "its last valid version, read-only until the text is fixed in the JSONC tab."
        : "";
    }
    const value = this.doc.value;
    const tools = npcToolNames(value);
    for (const widget of this.#widgets) {
      const { section, key } = widget.spec;
      const holder = section === "file"
        ? value
        : isJsonObject(value[section])
        ? value[section] as JsonObject
        : {};
      const v = Object.hasOwn(holder, key) ? holder[key] : undefined;
      const json = JSON.stringify(v ?? null);
      widget.setTools(tools);
      if (this.#synced.get(widget.path) !== json) {
        widget.write(v);
        this.#synced.set(widget.path, json);
      }
      widget.setDisabled(problem !== null);
    }
    this.#world.sync(value, problem !== null);
    this.#tools.sync();
    this.#tools.setDisabled(problem !== null);
    this.refresh();
  }

  /** Re-checks the document and shows the checks by the fields and in the status line. */
  refresh(): void {
    this.review = reviewDocument(this.doc.value);
    for (const widget of this.#widgets) widget.mark(fieldCheck(this.review, widget.path));
    this.#renderChecks();
  }

  /** Shows the tools' checks (the page's and the bridge's) by each tool and in the status line. */
  #renderChecks(): void {
    this.#tools.setBridgeNotes(this.#bridgeNotes());
    this.#tools.mark(this.review.tools);
    this.#renderStatus();
  }

  /**
   * The NPC running now (its name, and the {@link settingsKey} of what it was started or applied with, when
   * known), or null once it stopped or the connection dropped: the status line follows, and says while the
   * editor differs from it.
   */
  setRunning(name: string | null, key: string | null = null): void {
    if (this.#running.set(name, key)) this.#renderStatus();
  }

  /** The {@link settingsKey} of the editor now: what Start or Apply would give the NPC. */
  settingsKey(): string {
    const v = this.doc.value;
    return settingsKey({ ...v, tools: this.toolDefinitions() }, this.model());
  }

  /** Whether the NPC running now is not as the editor has it (the syntax problem aside: its last valid text). */
  #stale(): boolean {
    return this.#running.stale(this.settingsKey());
  }

  /**
   * The number of problems (the JSONC syntax, errors of the review, the script's) and of warnings listed; while
   * the text has a syntax problem, the review's are not listed (see #renderStatus) and not counted.
   */
  #counts(): { problems: number; warnings: number } {
    const outside = this.#outsideProblems().length;
    if (this.doc.problem) return { problems: 1 + outside, warnings: 0 };
    const listed = this.#reviewItems().length + outside;
    const problems = errorCount(this.review) + this.#bridgeErrors() + outside;
    return { problems, warnings: listed - problems };
  }

  /**
   * The problems outside the file's own checks, as status list items: the script's (when it is chosen), and
   * the World tab's text that is not a world and a tool's schema text that is not JSON (Start would use the
   * world or schema from before it, which the box no longer shows).
   */
  #outsideProblems(): HTMLElement[] {
    const items: HTMLElement[] = [];
    const scriptProblem = this.saved.useScript ? this.scriptProblem() : null;
    if (scriptProblem) {
      items.push(
        checkItem({ error: scriptProblem }, this.#jump("Script", "model", () => this.#model.script.focus())),
      );
    }
    const worldProblem = this.#world.problem();
    if (worldProblem) {
      items.push(checkItem({ error: worldProblem }, this.#jump("World", "world", () => this.#world.focus())));
    }
    // A tool's schema box whose text is not JSON: the file keeps the schema before it, which Start would use.
    for (const { index, name, problem } of this.#tools.schemaProblems()) {
      const label = `Tool ${index + 1}${name === "" ? "" : ` (${name})`}`;
      items.push(
        checkItem({ error: problem }, this.#jump(label, "tools", () => this.#tools.focusSchema(index))),
      );
    }
    return items;
  }

  /**
   * Sets the bridge's checks of the tools (from `tools/validate` of `tools`, by index) and shows them by each
   * tool and in the status list; an error there blocks Start as the page's own do. A check holds while its
   * tool is as it was validated (an edit drops it until the bridge has checked the new one).
   */
  setToolNotes(notes: Map<number, Check[]>, tools: JsonObject[]): void {
    this.#bridgeChecks = { tools: tools.map((t) => JSON.stringify(t)), notes };
    this.#renderChecks();
  }

  /** The bridge's checks of the tools as they are now, by index (see {@link setToolNotes}). */
  #bridgeNotes(): Map<number, Check[]> {
    const now = this.toolDefinitions();
    const notes = new Map<number, Check[]>();
    for (const [i, checks] of this.#bridgeChecks.notes) {
      if (JSON.stringify(now[i]) === this.#bridgeChecks.tools[i]) notes.set(i, checks);
    }
    return notes;
  }

  /** The errors among the bridge's checks of the tools as they are now. */
  #bridgeErrors(): number {
    return [...this.#bridgeNotes().values()].flat().filter((c) => c.error).length;
  }

  /** The status line ({@link statusLine}); the JSONC text box is described by its syntax problem too. */
  #renderStatus(): void {
    const problem = this.doc.problem;
    this.#status.replaceChildren(...statusLine({
      syntax: problem ? this.#syntaxProblem(problem.message) : null,
      outside: this.#outsideProblems(),
      checks: problem ? [] : this.#reviewItems(),
      errors: errorCount(this.review) + this.#bridgeErrors(),
      running: this.#running.name,
      stale: this.#stale(),
    }));
    this.#status.removeAttribute("aria-busy");
    this.#jsoncProblem.textContent = problem?.message ?? "";
  }

  /** The JSONC text's syntax problem, with a link that selects it in the JSONC tab. */
  #syntaxProblem(message: string): HTMLElement {
    return h(
      "p",
      { class: "error" },
      `${message} `,
      h("button", {
        type: "button",
        class: "link",
        text: "Show it",
        on: { click: () => this.#showProblem() },
      }),
    );
  }

  /**
   * The context size of the model new NPCs run on: the page's script's, or the bridge's model's once its
   * availability is known (else null).
   */
  #contextSize(): number | null {
    return this.saved.useScript ? SCRIPT_CONTEXT_SIZE : this.#bridgeContext;
  }

  /**
   * The review's checks as list items ({@link reviewItems}), each with a link to its field or tool, then a
   * persona too large for the model's context ({@link contextWarning}), then the bridge's model chosen while it
   * is known not to answer.
   */
  #reviewItems(): HTMLElement[] {
    const items = this.#checkItems();
    const tooLarge = contextWarning(this.doc.value, this.#contextSize());
    if (tooLarge !== null) {
      const widget = this.#widgets.find((w) => w.path === tooLarge.path);
      const link = widget
        ? this.#jump(widget.spec.label, widget.spec.section, () => widget.focusable.focus())
        : this.#jump("Tools", "tools", () => this.#tools.focus(0));
      items.push(checkItem({ warning: tooLarge.warning }, link));
    }
    if (!this.saved.useScript && this.#bridgeUnavailable !== null) {
      const warning =
        `New NPCs run on the bridge's model, which cannot answer (${this.#bridgeUnavailable}): ` +
        "choose “The page's script” to run them on the script, or start the playground with --model or --script.";
      items.push(checkItem({ warning }, this.#jump("Model", "model", () => this.#model.focusChoice())));
    }
    return items;
  }

  /** The review's checks as list items ({@link reviewItems}), each with a link to its field or tool. */
  #checkItems(): HTMLElement[] {
    return reviewItems(this.review, {
      toolNotes: this.#bridgeNotes(),
      links: {
        field: (path) => {
          const widget = this.#widgets.find((w) => w.path === path)!;
          const tab = widget.spec.section === "file" ? "persona" : widget.spec.section;
          return this.#jump(widget.spec.label, tab, () => widget.focusable.focus());
        },
        tool: (i) => this.#jump(`Tool ${i + 1}`, "tools", () => this.#tools.focus(i)),
      },
    });
  }

  /** A link that selects editor tab `tab` and then calls `focus`. */
  #jump(label: string, tab: string, focus: () => void): HTMLButtonElement {
    return h("button", {
      type: "button",
      class: "link",
      text: label,
      on: {
        click: () => {
          this.#select(tab);
          focus();
        },
      },
    });
  }

  #showProblem(): void {
    const problem = this.doc.problem;
    if (!problem) return;
    this.#select("jsonc");
    this.#jsonc.focus();
    this.#jsonc.setSelectionRange(problem.offset, Math.min(problem.offset + 1, this.#jsonc.value.length));
    this.#showCaret();
  }

  /** True when the page found no problem that blocks a start. */
  get canStart(): boolean {
    return this.doc.problem === null && errorCount(this.review) === 0 && this.#bridgeErrors() === 0 &&
      !(this.saved.useScript && this.scriptProblem() !== null) && this.#world.problem() === null &&
      this.#tools.schemaProblems().length === 0;
  }

  /**
   * Shows the outcome of a start, restore or apply ({@link resultItems}); an error that names a field is shown
   * by the field (and the script's, by the script) too.
   */
  showResult(result: StartResult): void {
    if (result.error) {
      for (const path of result.marks ?? pathsIn(result.error)) {
        const [section, key] = path.split(".");
        const widget = this.#widgets.find((w) => w.spec.section === section && w.spec.key === key);
        if (widget) widget.mark({ error: `Bridge: ${result.error}` });
        if (section === "model") this.#model.markError(`Bridge: ${result.error}`);
      }
    }
    this.#result.replaceChildren(
      ...resultItems(result, { startAnyway: () => this.#events.start(true), hints: this.review.hints }),
    );
  }

  /**
   * Shows what `"system"` is on this server (`model`: from its info, `text`: with its availability) and
   * whether it is available.
   */
  setBridgeModel(
    text: string,
    available: boolean | null,
    model: { label: string; script?: string } | null = null,
  ): void {
    this.#model.setBridgeModel({ text, available, model });
    // New NPCs on a model known not to answer are warned about before Start (see #reviewItems).
    const unavailable = available === false ? text : null;
    if (unavailable === this.#bridgeUnavailable) return;
    this.#bridgeUnavailable = unavailable;
    this.#renderStatus();
  }

  /**
   * The context size of the bridge's model (its availability's `contextSize`; null while unknown): a persona
   * larger than the model new NPCs run on takes is listed before Start.
   */
  setBridgeContext(contextSize: number | null): void {
    if (contextSize === this.#bridgeContext) return;
    this.#bridgeContext = contextSize;
    this.#renderStatus();
  }

  /** Why the script cannot be used, or null. */
  scriptProblem(): string | null {
    return this.#model.problem();
  }

  /** The model of new NPCs: the script when chosen, else undefined (the bridge's `system`). */
  model(): JsonValue | undefined {
    return this.#model.model();
  }

  /**
   * Why the page's script, chosen in the Model tab, cannot be sent at all (its text is no JSON list or object),
   * or null: an NPC started without it would run on the bridge's model, not on the script the page names.
   */
  unsendableScript(): string | null {
    if (!this.saved.useScript || this.model() !== undefined) return null;
    return this.scriptProblem() ?? "The script is not a list of steps.";
  }

  /**
   * Until the designer chooses the model, new NPCs run on the bridge's model when the server was started
   * with one (`serverModel` is not `"system"`: `--script`, `--model`), else on the page's script.
   */
  followServerModel(serverModel: string): void {
    this.#model.followServerModel(serverModel);
  }

  /** A short description of the model in use. */
  modelLabel(): string {
    return this.#model.label();
  }

  /** The document's client tool definitions. */
  toolDefinitions(): JsonObject[] {
    const tools = this.doc.value.tools;
    return Array.isArray(tools) ? tools.filter(isJsonObject) : [];
  }

  /** `npc/create` params from the document (with `world` as given). */
  npcParams(world: string | undefined): JsonObject {
    const v = this.doc.value;
    const params: JsonObject = {};
    if (v.npc !== undefined && v.npc !== null) params.npc = v.npc;
    params.persona = v.persona ?? {};
    if (v.options !== undefined && v.options !== null) params.options = v.options;
    params.tools = this.toolDefinitions();
    if (v.memory !== undefined && v.memory !== null) params.memory = v.memory;
    if (world !== undefined) params.world = world;
    const model = this.model();
    if (model !== undefined) params.model = model;
    return params;
  }

  /** Downloads the persona file (the JSONC text as it is) and says so under Start, as Export does. */
  savePersona(): void {
    const { file: name, why } = personaFileName({
      name: this.#readName(),
      broken: this.doc.problem !== null,
      loadedFrom: this.saved.loadedFrom,
    });
    download(name, { text: this.doc.text.endsWith("\n") ? this.doc.text : `${this.doc.text}\n` });
    const saved = [savedNote({ name, what: "the persona file", opener: "Load file…" }), why].filter(Boolean)
      .join(" ");
    const errors = errorCount(this.review);
    const problem = this.doc.problem?.message ??
      (errors > 0 ? `${errors === 1 ? "the problem" : `the ${errors} problems`} listed above.` : null);
    // (Saved as it is, to be finished later; said as a warning, as Start would refuse it.)
    this.showResult(problem ? { warningNote: `${saved} ${toFix(problem)}` } : { note: saved });
  }

  /** Replaces the persona text (a loaded file), keeping the old text for "Undo load". */
  replaceText(text: string): void {
    this.#loads.replaceText(text);
  }

  /** Copies a restored NPC's persona, options, tools and id into the document (undo keeps the old text). */
  adoptState(state: JsonObject): void {
    this.#loads.adoptState(state);
  }
}
