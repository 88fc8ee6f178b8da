/// <reference lib="dom" />
/**
 * The playground page: wires the persona editor, the conversation and the state panel to one bridge
 * connection (the typed client over this server's `/rpc` WebSocket), and owns which NPC runs now. Start is
 * `npc_start.ts`, Apply `npc_apply.ts`; setting up an NPC the bridge created (its tools, its world) is
 * `npc_setup.ts`, stopping it for a start or a restore and putting it back when that is refused
 * `npc_put_back.ts`; what the connection's state means to each panel is `connection_state.ts`; saving and
 * restoring its state is `state_files.ts`, the bridge's model `model_status.ts`. Everything typed is kept in
 * local storage.
 * @module
 */
import type { NpcMemory } from "../../../client/game_types.ts";
import type { World } from "../../../client/world.ts";
import { Conversation, type TurnRecord } from "./conversation.ts";
import { byId, debounce, download, DOWNLOADS, fileName, followSkipLinks, pretty } from "./dom.ts";
import { Editor } from "./editor.ts";
import { Link } from "./link.ts";
import { lastVisitLabel } from "./last_visit.ts";
import { KeptAnswers } from "./kept_answers.ts";
import { LogView } from "./log_view.ts";
import { mountLog } from "./log_toggle.ts";
import { applyEditor } from "./npc_apply.ts";
import { NpcChanges } from "./npc_changes.ts";
import type { NpcPage } from "./npc_page.ts";
import { NpcPutBack } from "./npc_put_back.ts";
import { NpcSetup } from "./npc_setup.ts";
import { startNpc } from "./npc_start.ts";
import { PersonaAnswers } from "./persona_answers.ts";
import { ModelStatus } from "./model_status.ts";
import type { Running } from "./running.ts";
import { firstVisit } from "./samples.ts";
import { engineExport } from "./engine_export.ts";
import { barkHint, scriptHint, unavailableHint } from "./script_hint.ts";
import { relationshipReasons, StatePanel } from "./state_panel.ts";
import { StateFiles } from "./state_files.ts";
import { loadSaved, type Saved, storeSaved } from "./storage.ts";
import { answerOf } from "./tool_editor.ts";
import { ToolRenames } from "./tool_renames.ts";
import { ToolValidation } from "./tool_validation.ts";
import { ConnectionBar } from "./top_bar.ts";
import { showConnectionState } from "./connection_state.ts";
import { WorldEdits } from "./world_edits.ts";

class Playground implements NpcPage {
  readonly saved: Saved;
  readonly link: Link;
  readonly log = new LogView();
  readonly editor: Editor;
  readonly conversation: Conversation;
  readonly state: StatePanel;
  #running: Running | null = null;
  /** The start, apply or restore running (one at a time). */
  readonly changes: NpcChanges;
  /** The bridge's model, shown in the Model tab and the top bar. */
  readonly model: ModelStatus;
  /** Saving and restoring the NPC's state. */
  readonly files: StateFiles;
  /** The designer's world edits still running. */
  readonly #worldEdits = new WorldEdits();
  readonly #tools: ToolValidation;
  /** The NPC went with a connection that closed (until the next start or restore). */
  #lost = false;
  readonly #bar: ConnectionBar;
  readonly persist: () => void;
  /** Answers typed to tool calls but not sent, kept for the tab (by persona and tool): a reload keeps them. */
  readonly kept = new KeptAnswers(sessionStorageOrNull());
  /** {@link kept} as it follows the editor's persona. */
  readonly #answers: PersonaAnswers;
  /** Tools renamed in the editor since the running NPC took its tools (it calls them by the old names). */
  readonly #renames = new ToolRenames();
  /** Setting up an NPC the bridge creates: its tools, its world, the record of it running. */
  readonly setup: NpcSetup;
  /** Stopping the NPC for a start or a restore, and putting it back when the bridge refuses that. */
  readonly putBack: NpcPutBack = new NpcPutBack(this);

  /** What start, apply or restore is running, or null. */
  get changing(): string | null {
    return this.changes.current;
  }

  /** What runs on the bridge now, or null; the editor's status line says which NPC runs. */
  get running(): Running | null {
    return this.#running;
  }

  set running(running: Running | null) {
    this.#running = running;
    if (running !== null) this.#lost = false;
    this.editor.setRunning(running?.name ?? null, running?.settings ?? null);
  }

  constructor() {
    this.saved = loadSaved(firstVisit());
    this.persist = debounce(() => storeSaved(this.saved), 150);
    addEventListener("pagehide", () => {
      this.conversation?.keepLiveLine();
      // A tool's name still being typed: its answer settings go with the name the document keeps.
      this.editor?.commitRenames();
      // A form edit still waiting for a pause in typing (a long document) goes into what is kept.
      this.editor?.flush();
      storeSaved(this.saved);
    });
    this.link = this.#createLink();
    this.setup = new NpcSetup({
      link: this.link,
      saved: this.saved,
      conversation: () => this.conversation,
      state: () => this.state,
      info: () => this.model.info,
      worldEdits: this.#worldEdits,
      renames: this.#renames,
      answers: () => this.#answers,
      setRunning: (running) => this.running = running,
    });
    this.model = new ModelStatus({ link: this.link, saved: this.saved, editor: () => this.editor });
    this.#tools = new ToolValidation(this.link, () => this.editor);
    this.changes = new NpcChanges({
      link: this.link,
      editor: () => this.editor,
      info: () => this.model.info,
    });
    this.files = this.#createStateFiles();
    this.editor = this.#createEditor();
    this.#answers = new PersonaAnswers(this.kept, () => this.#persona());
    this.conversation = this.#createConversation();
    this.state = this.#createStatePanel();
    mountLog({ log: this.log, saved: this.saved, persist: this.persist });
    this.#bar = new ConnectionBar(() => void this.link.connect());
    if (this.saved.lastState !== null) this.state.offerLast(this.lastLabel());
    this.conversation.note(
      "Start the NPC (Start NPC, in the NPC panel), then talk to it here. New NPCs run on the Model tab's script " +
        "(deterministic, works everywhere) or on the bridge's own model.",
    );
    const cut = this.saved.cutLine;
    if (cut !== undefined) {
      delete this.saved.cutLine;
      this.persist();
      this.conversation.note(`The reload cut off the reply to “${cut}”: your line is back in the box.`);
    }
    this.#noteKeptAnswers();
    // A reload (or a tab opened again) starts a new connection: the NPC of the last visit is not running,
    // but its last state is kept, and the designer sees that here rather than in the State panel's Save tab.
    const last = this.lastLabel();
    if (last !== "") {
      this.conversation.offer(
        `The NPC of your last visit (${last}) went with the page's old connection.`,
        "Restore it",
        () => void this.files.restoreLast(),
      );
    }
  }

  /** The persona's id (the editor's `npc`), under which answers typed but not sent are kept. */
  #persona(): string {
    const npc = this.editor.doc.value.npc;
    return typeof npc === "string" ? npc : "";
  }

  /**
   * After a reload: the answers typed to calls of the old page's turn (which went with its connection) are
   * kept for the next call of their tool, and the conversation says so. Those of tools the persona no longer
   * has go.
   */
  #noteKeptAnswers(): void {
    const tools = this.#answers.keptAfterReload(this.editor.toolDefinitions());
    if (tools.length === 0) return;
    const names = tools.join(", ");
    this.conversation.note(
      `Your answer to ${names}, typed before the page was reloaded, is kept: the next call of ${
        tools.length === 1 ? "it" : "each"
      } starts with it.`,
    );
  }

  /** The connection to this server's `/rpc` (not opened yet: see {@link Playground.boot}). */
  #createLink(): Link {
    const url = new URL("/rpc", location.href);
    url.protocol = location.protocol === "https:" ? "wss:" : "ws:";
    return new Link(url.href, {
      onState: (state, detail) => this.#linkState(state, detail),
      onEntry: (entry) => this.log.add(entry),
      onWarning: () => {}, // every result's warnings are shown where the result is
      onProblem: (error) => this.conversation?.note(`Client problem: ${error.message}`, "warning"),
    });
  }

  /** The persona editor: each change is stored, shown in the header and its tools validated. */
  #createEditor(): Editor {
    const validateSoon = debounce(() => void this.#tools.validate(), 500);
    return new Editor(byId("editor-body"), this.saved, {
      changed: (replaced) => {
        this.persist();
        if (this.editor) this.#answers.follow(replaced === true);
        if (this.editor) this.model.show(); // (not while the editor is being built)
        validateSoon();
      },
      start: (force) => void this.start(force),
      apply: () => void this.apply(),
      restoreFile: (name, text) => {
        this.state.selectTab("save");
        void this.files.restore(name, text);
      },
      exportForEngine: () => this.exportForEngine(),
      toolRenamed: (old, name) => {
        this.#renames.renamed(old, name);
        this.#answers.renamed(old, name);
        this.persist();
      },
    });
  }

  /** The conversation, with what it asks of the running NPC and the editor. */
  #createConversation(): Conversation {
    return new Conversation(byId("conversation-body"), this.saved, {
      npc: () => this.running?.npc ?? null,
      pending: () => this.changing,
      greeting: () => {
        const greeting = this.editor.doc.value.greeting;
        return typeof greeting === "string" ? greeting.trim() : "";
      },
      npcName: () => this.running?.name ?? "NPC",
      toolTimeout: (name) => {
        const r = this.running;
        if (!r) return 120;
        return r.timeouts.has(name) ? r.timeouts.get(name)! : r.defaultTimeout;
      },
      // (The running NPC calls a tool renamed since by its old name: the settings are under the new one.)
      answerOf: (name) => answerOf(this.saved.answers, this.#renames.nameNow(name)),
      sendAsPicked: (name, as) => {
        const now = this.#renames.nameNow(name);
        this.saved.answers[now] = { ...answerOf(this.saved.answers, now), sendAs: as };
        this.persist();
      },
      toolDescription: (name) => this.running?.descriptions.get(name) ?? "",
      turnFinished: (record) => void this.#turnFinished(record),
      connected: () => this.link.state === "open",
      changed: () => this.persist(),
      failureHint: (error) => {
        const run = this.running?.scripted ?? null;
        return scriptHint(error, run) ?? unavailableHint(error, run);
      },
      barkHint: (line) => barkHint(line, this.running?.scripted ?? null),
      barkFailureHint: (error) => unavailableHint(error, this.running?.scripted ?? null),
      persona: () => this.#persona(),
      toolNameNow: (name) => this.#renames.nameNow(name),
      kept: this.kept,
    });
  }

  /** Saving and restoring the NPC's state, with the steps of a start it shares. */
  #createStateFiles(): StateFiles {
    return new StateFiles({
      link: this.link,
      saved: this.saved,
      persist: () => this.persist(),
      editor: () => this.editor,
      conversation: () => this.conversation,
      state: () => this.state,
      running: () => this.running,
      lost: () => this.#lost,
      changes: this.changes,
      teardown: () => this.putBack.teardown(),
      registerTools: (definitions) => this.setup.registerTools(definitions),
      openWorld: (id, seed) => this.setup.openWorld(id, seed),
      nowRunning: (from, parts, label) => this.setup.nowRunning(from, { ...parts, label }),
      noteCancelled: (turn, why) => this.putBack.noteCancelled(turn, why),
      refused: (stopped, why) => this.putBack.refused(stopped, why),
    });
  }

  /** The state panel: world edits, memory edits, save and restore. */
  #createStatePanel(): StatePanel {
    return new StatePanel(byId("state-body"), {
      set: (path, value) => this.#worldEdit(path, () => this.#world().set(path, value)),
      remove: (path) => this.#worldEdit(path, () => this.#world().remove(path)),
      download: () => void this.files.download(),
      restore: (name, text) => void this.files.restore(name, text),
      restoreLast: () => void this.files.restoreLast(),
      updateMemory: (memory) => this.#updateMemory(memory),
      refresh: () => void this.files.refresh(),
      replyRunning: () => this.conversation.busy,
    });
  }

  async boot(): Promise<void> {
    await this.model.load();
    await this.link.connect();
  }

  #world(): World {
    const world = this.running?.world;
    if (!world) throw new Error("The NPC has no world.");
    return world;
  }

  /** Runs the designer's edit of the world at `path` (its changes arrive before its response). */
  async #worldEdit(path: string, run: () => Promise<unknown>): Promise<void> {
    await this.#worldEdits.run(path, () => {
      this.link.require();
      return run();
    });
    void this.files.refresh();
  }

  async #updateMemory(memory: NpcMemory): Promise<void> {
    const npc = this.running?.npc;
    if (!npc) throw new Error("Start the NPC first.");
    this.link.require();
    await npc.update({ memory });
  }

  /** The last state seen, as the page names it ("" when none is kept). */
  lastLabel(): string {
    return lastVisitLabel(this.saved.lastState);
  }

  /** What the connection's state (`open`, `connecting`, `waiting`, `closed`) means to each panel. */
  #linkState(state: string, detail?: string): void {
    const host = {
      page: this as NpcPage,
      bar: this.#bar,
      model: this.model,
      tools: this.#tools,
      saved: this.saved,
      lost: () => this.#lost = true,
    };
    showConnectionState(host, { state, detail });
  }

  /** Starts (or restarts) the NPC from the editor: a fresh world, a fresh conversation. */
  start(force: boolean): Promise<void> {
    return startNpc(this, { force });
  }

  /** Rebuilds the running NPC with the editor's persona, options and tools; conversation and memory stay. */
  apply(): Promise<void> {
    return applyEditor(this);
  }

  async #turnFinished(record: TurnRecord): Promise<void> {
    this.state.addTurn(record);
    if (record.reply) {
      this.state.addPoint({
        label: `turn ${record.index}`,
        value: record.reply.relationship,
        reasons: relationshipReasons(record),
      });
    }
    if (this.link.state === "open") await this.files.refresh();
  }

  /** Downloads the `world/create` and `npc/create` params an engine sends for this NPC. */
  exportForEngine(): void {
    const editor = this.editor;
    if (editor.doc.problem) {
      editor.showResult({ error: `${editor.doc.problem.message} Fix it before exporting.` });
      return;
    }
    // What Start would refuse: a box whose text the document does not hold yet (a tool's schema, the world,
    // the script: the file would have the value from before it), or a persona the bridge refuses.
    if (!editor.canStart) {
      editor.showResult({
        error:
          "Nothing was exported: fix the problems listed above first (the file would not hold what the " +
          "editor shows, or the bridge would refuse it).",
      });
      return;
    }
    const value = editor.doc.value;
    const params = engineExport(value, (world) => editor.npcParams(world));
    const name = fileName(typeof value.npc === "string" ? value.npc : "npc", ".npc-create.json");
    download(name, { text: `${pretty(params)}\n` });
    editor.showResult({
      note: `Exported ${name} to ${DOWNLOADS}: the params of ${Object.keys(params).join(" and ")}.`,
    });
  }
}

/** The tab's session storage, or null when the browser keeps none (a private window may refuse it). */
function sessionStorageOrNull(): Storage | null {
  try {
    return globalThis.sessionStorage ?? null;
  } catch {
    return null;
  }
}

const app = new Playground();
followSkipLinks();
(globalThis as unknown as { playground: Playground }).playground = app;
void app.boot();
