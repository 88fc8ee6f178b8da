/// <reference lib="dom" />
/**
 * The playground page: wires the persona editor, the conversation and the state panel to one bridge
 * connection (the typed client over this server's `/rpc` WebSocket). Starting, applying and replacing the
 * running NPC live here, and what the connection's state means to each panel; saving and restoring its
 * state is `state_files.ts`, the bridge's model `model_status.ts`. Everything typed is kept in local storage.
 * @module
 */
import type { NpcMemory, NpcState } from "../../../client/game_types.ts";
import { Npc } from "../../../client/npc.ts";
import { World } from "../../../client/world.ts";
import { isJsonObject, type JsonObject, type JsonValue } from "../../../protocol/json.ts";
import { Conversation, type TurnRecord } from "./conversation.ts";
import { byId, debounce, download, DOWNLOADS, fileName, followSkipLinks, pretty } from "./dom.ts";
import { Editor } from "./editor.ts";
import { Link } from "./link.ts";
import { lastVisitLabel } from "./last_visit.ts";
import { KeptAnswers } from "./kept_answers.ts";
import { LogView } from "./log_view.ts";
import { mountLog } from "./log_toggle.ts";
import { NpcChanges } from "./npc_changes.ts";
import { PersonaAnswers } from "./persona_answers.ts";
import { ModelStatus } from "./model_status.ts";
import { type Running, scriptedRun, toolSettings, type WorldParts } from "./running.ts";
import { firstVisit } from "./samples.ts";
import { engineExport, worldIdFor } from "./engine_export.ts";
import { barkHint, jsonStepsHint, type ScriptedRun, scriptHint, unavailableHint } from "./script_hint.ts";
import { asEditorNames } from "./start_result.ts";
import { relationshipReasons, StatePanel } from "./state_panel.ts";
import { type KeptNpc, type NowRunningParts, StateFiles, type Stopped } from "./state_files.ts";
import { loadSaved, type Saved, storeSaved } from "./storage.ts";
import { answerOf } from "./tool_editor.ts";
import { ToolRenames } from "./tool_renames.ts";
import { ToolValidation } from "./tool_validation.ts";
import { ConnectionBar } from "./top_bar.ts";
import { errorText } from "./values.ts";
import { WorldEdits } from "./world_edits.ts";

class Playground {
  readonly saved: Saved;
  readonly link: Link;
  readonly log = new LogView();
  readonly editor: Editor;
  readonly conversation: Conversation;
  readonly state: StatePanel;
  #running: Running | null = null;
  /** The start, apply or restore running (one at a time). */
  readonly #changes: NpcChanges;
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

  /** What start, apply or restore is running, or null. */
  get changing(): string | null {
    return this.#changes.current;
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
    this.model = new ModelStatus({ link: this.link, saved: this.saved, editor: () => this.editor });
    this.#tools = new ToolValidation(this.link, () => this.editor);
    this.#changes = new NpcChanges({
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
    if (this.saved.lastState !== null) this.state.offerLast(this.#lastLabel());
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
    const last = this.#lastLabel();
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
      changes: this.#changes,
      teardown: () => this.#teardown(),
      registerTools: (definitions) => this.#registerTools(definitions),
      openWorld: (id, seed) => this.#openWorld(id, seed),
      nowRunning: (from, parts, label) => this.#nowRunning(from, parts, label),
      noteCancelled: (turn, why) => this.#noteCancelled(turn, why),
      refused: (stopped, why) => this.#refused(stopped, why),
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

  #lastLabel(): string {
    return lastVisitLabel(this.saved.lastState);
  }

  #linkState(state: string, detail?: string): void {
    if (state === "open") {
      this.#bar.open();
      void this.model.connected();
      this.#tools.reset();
      void this.#tools.validate();
      if (this.link.generation > 1) {
        this.conversation.reconnected();
        this.state.saveMessage("");
        // The way back is offered where the designer looks, as after a reload (not only in State → Save).
        const last = this.#lastLabel();
        if (last === "") {
          this.conversation.note("Connected again. The NPC lived in the old connection: start it again.");
        } else {
          this.conversation.offer(
            `Connected again. The NPC (${last}) lived in the old connection: start it again, or restore it.`,
            "Restore it",
            () => void this.files.restoreLast(),
          );
        }
      }
      return;
    }
    if (state === "connecting" || state === "waiting") {
      if (state === "connecting") this.#bar.connecting();
      else this.#bar.waiting(this.model.info?.model.name);
      this.model.show();
      return;
    }
    const had = this.running !== null;
    const cut = had ? this.conversation.cutOff() : null;
    const world = this.running?.world?.id ?? null;
    this.running = null;
    this.state.world.show(
      null,
      null,
      world === null
        ? undefined
        : `The world '${world}' went with the bridge: start the NPC again, or restore ` +
          "the last state seen (its world comes back with it).",
    );
    this.state.showMemory(null);
    this.#bar.closed(detail, cut);
    // The model's availability went with the connection.
    this.model.show();
    const why = (detail ?? "the connection closed").replace(/[.\s]+$/, "");
    // The banner (an alert) says it to a screen reader; the conversation's note is for the eye.
    if (had) {
      this.#lost = true;
      // "Started Mira (mira)." under Start no longer holds.
      this.editor.showResult({});
      this.conversation.stopped("the bridge went away");
      if (this.link.serverStopped) this.conversation.serverStopped();
      this.conversation.note(`The bridge went away: ${why}.`, "error", true);
    }
    if (this.saved.lastState !== null) this.state.offerLast(this.#lastLabel());
    this.#bar.retryLater();
  }

  /**
   * Deletes what runs now (ignoring errors: it may be gone with an old connection), after cancelling a reply
   * still running (a start or a restore replaces the NPC, as Start always did) and reading its state and its
   * world's (to put it back as it was when the bridge refuses what replaces it: {@link #refused}). Returns the
   * cancelled turn, which the caller notes in the new conversation, and the NPC kept.
   */
  async #teardown(): Promise<Stopped> {
    const r = this.running;
    this.running = null;
    if (!r || r.generation !== this.link.generation) return { cancelled: null, kept: null };
    const cancelled = await this.conversation.cancelRunning();
    const kept = await this.#keep(r);
    await r.subscription?.unsubscribe().catch(() => {});
    await r.npc.delete().catch(() => {});
    await r.world?.delete().catch(() => {});
    return { cancelled, kept };
  }

  /** The running NPC `r` with its state and its world's, or null when they cannot be read. */
  async #keep(r: Running): Promise<KeptNpc | null> {
    try {
      const state = await r.npc.state({ settle: false }) as unknown as JsonObject;
      const world = r.world ? { world: r.world.id, state: await r.world.snapshot() as JsonObject } : null;
      return { running: r, state, world };
    } catch {
      return null;
    }
  }

  /**
   * A start or a restore (`why.doing`) the bridge refused (`why.error`) after it stopped the NPC that ran: that
   * NPC is put back as it was (its state, world, tools and model as they were when it stopped), and the
   * conversation, the relationship's history and the turns stay as they are; the result under Start says so.
   * When it cannot be put back, the page says it no longer runs and offers it back as last seen.
   */
  async #refused(stopped: Stopped & { name: string }, why: { doing: string; error: string }): Promise<void> {
    const { kept, name } = stopped;
    if (kept === null || !(await this.#putBack(kept))) {
      this.#stoppedInVain(name, why.doing);
      return;
    }
    const again = kept.running.scripted === null
      ? ""
      : " Its script starts again from its first step (the NPC gets a new model).";
    this.conversation.note(
      `The bridge refused ${why.doing} (see under Start): ${name} runs on as before, with this conversation, ` +
        `its memory and its world.${again}`,
      "warning",
    );
    this.editor.showResult({ error: why.error, afterError: `${name} runs on as before.` });
    await this.files.refresh();
  }

  /** Puts the NPC kept back on the bridge as it was; false when the bridge refuses that too. */
  async #putBack(kept: KeptNpc): Promise<boolean> {
    let worldParts: WorldParts | null = null;
    try {
      const tools = Array.isArray(kept.state.tools) ? kept.state.tools.filter(isJsonObject) : [];
      this.#registerTools(tools);
      if (kept.world) worldParts = await this.#openWorld(kept.world.world, kept.world.state);
      const connection = this.link.require();
      const model = kept.running.model;
      const created = await connection.request("npc/restore", {
        state: kept.state as never,
        world: worldParts?.world.id ?? null,
        ...(model !== undefined ? { model: model as never } : {}),
      });
      this.running = {
        ...kept.running,
        npc: new Npc(connection, created.npc, {
          tools: created.tools,
          warnings: created.warnings,
          model: model as never,
        }),
        world: worldParts?.world ?? null,
        subscription: worldParts?.subscription ?? null,
        generation: this.link.generation,
      };
      // (Its tools are the ones it had: their renames in the editor since, and the answers kept, still hold.)
      return true;
    } catch {
      await worldParts?.world.delete().catch(() => {});
      return false;
    }
  }

  /** The note of a reply cancelled by a start or a restore (`why`: "to start the NPC again"). */
  #noteCancelled(turn: TurnRecord | null, why: string): void {
    if (turn === null) return;
    this.conversation.note(
      `The reply to “${turn.line}” was still running: it was cancelled ${why}.`,
      "warning",
    );
  }

  /**
   * Registers the client tools with the connection: each call goes to the conversation. (Before the NPC that
   * calls them is created: {@link #tookTools} once it is.)
   */
  #registerTools(definitions: JsonObject[]): void {
    const connection = this.link.require();
    for (const def of definitions) {
      if (typeof def.name !== "string") continue;
      // (The connection runs the handler of the tool the call names: `ctx.call` has the name and arguments.)
      connection.tools.add(
        { ...def } as never,
        (_args, ctx) => this.conversation.handleTool(ctx),
      );
    }
  }

  /**
   * The running NPC took the tools `definitions` (the bridge created it with them): it calls them by their
   * names now, and an answer kept for a tool it no longer has would never be asked for. Not before the bridge
   * took them: after a refused start, restore or Apply the NPC that ran runs on (or is put back) with its tools,
   * their renames in the editor and the answers kept for them.
   */
  #tookTools(definitions: JsonObject[]): void {
    this.#renames.reset();
    this.#answers.prune(definitions);
  }

  async #openWorld(id: string, seed: JsonObject): Promise<WorldParts> {
    const connection = this.link.require();
    const created = await connection.request<{ world: string }>("world/create", { world: id, state: seed });
    const world = new World(connection, created.world);
    const subscription = await world.subscribe("", (change) => {
      this.state.world.change(change, this.#worldEdits.changedBy(change.path, this.conversation.busy));
    });
    this.state.world.show(created.world, await world.snapshot());
    return { world, subscription };
  }

  /**
   * Records the NPC the bridge just created (from the editor's persona or a saved state, `from`) as the one
   * running, and starts its relationship history; returns its name.
   */
  #nowRunning(
    from: JsonObject,
    parts: NowRunningParts,
    label: "start" | "restored",
  ): string {
    const { connection, created, worldParts, settings, model } = parts;
    this.#tookTools(parts.tools);
    const persona = isJsonObject(from.persona) ? from.persona : {};
    const name = typeof persona.name === "string" ? persona.name : created.npc;
    this.running = {
      // (The handle knows its model: an NPC put back after a refused Apply runs on it again.)
      npc: new Npc(connection, created.npc, {
        tools: created.tools,
        warnings: created.warnings,
        model: model as never,
      }),
      name,
      world: worldParts?.world ?? null,
      subscription: worldParts?.subscription ?? null,
      generation: this.link.generation,
      scripted: this.#scriptedRun(name, from.options),
      settings,
      worldSeed: label === "start" ? worldSeedOf(from) : null,
      model,
      ...toolSettings(from.options, parts.tools),
    };
    // The last state seen is this NPC's from now on: the way back to an NPC that went is offered again when
    // this one goes with the connection.
    this.state.offerLast(null);
    const memory = isJsonObject(from.memory) ? from.memory : {};
    this.state.resetHistory(
      typeof memory.relationship === "number" ? Math.round(memory.relationship) : 0,
      label,
    );
    return name;
  }

  /** The script an NPC started now plays (the Model tab's, or the bridge's `--script`), or null. */
  #scriptedRun(name: string, options: JsonValue | undefined): ScriptedRun | null {
    return scriptedRun({ name, options, useScript: this.saved.useScript, info: this.model.info });
  }

  /** Starts (or restarts) the NPC from the editor: a fresh world, a fresh conversation. */
  start(force: boolean): Promise<void> {
    const editor = this.editor;
    if (!editor.canStart && !force) {
      editor.showResult({
        error: "Fix the problems listed above first (or start anyway to see what the bridge says).",
        force: true,
      });
      return Promise.resolve();
    }
    editor.commitRenames();
    return this.#changes.run("Starting the NPC", () => this.#start());
  }

  async #start(): Promise<void> {
    const editor = this.editor;
    let worldParts: WorldParts | null = null;
    /** The NPC that ran (its name, and its state kept), once it was stopped for this start. */
    let stopped: Stopped & { name: string | null } = { name: null, cancelled: null, kept: null };
    try {
      await this.#changes.connected("starting the NPC");
      this.link.require();
      const before = this.running?.name ?? null;
      stopped = { ...await this.#teardown(), name: before };
      const cancelled = stopped.cancelled;
      const value = editor.doc.value;
      const tools = editor.toolDefinitions();
      this.#registerTools(tools);
      if (isJsonObject(value.world)) worldParts = await this.#openWorld(worldIdFor(value.npc), value.world);
      else this.state.world.show(null, null);
      const params = editor.npcParams(worldParts?.world.id);
      const settings = editor.settingsKey();
      const connection = this.link.require();
      const result = await connection.request("npc/create", params as never);
      const name = this.#nowRunning(
        value,
        { connection, created: result, worldParts, tools, settings, model: params.model },
        "start",
      );
      this.conversation.started(`${name} (${result.npc})`, editor.modelLabel(), true);
      this.#noteCancelled(cancelled, "to start the NPC again");
      this.conversation.note(`Started ${name}: tools ${result.tools.join(", ") || "none"}.`);
      const unfit = this.#unfitScript(name, value, params.model);
      editor.showResult({
        warnings: result.warnings,
        pageWarnings: unfit === null ? [] : [unfit],
        note: `Started ${name} (${result.npc}).`,
      });
      await this.files.refresh();
    } catch (error) {
      await worldParts?.world.delete().catch(() => {});
      if (!this.running) this.state.world.show(null, null);
      editor.showResult({ error: errorText(error) });
      // (When the bridge went away meanwhile, the page says so and offers the NPC back once connected.)
      if (!this.running && stopped.name !== null && this.link.state === "open") {
        const { name } = stopped;
        await this.#refused({ ...stopped, name }, { doing: "the new start", error: errorText(error) });
      }
    }
  }

  /**
   * The NPC `name` was stopped for `doing` (a start, a restore), which then failed: the conversation's header
   * says it no longer runs, and the conversation offers it back as last seen (the state kept after its last
   * turn), or says to start it again when no state was kept.
   */
  #stoppedInVain(name: string, doing: string): void {
    this.conversation.stopped(`stopped for ${doing}`);
    this.state.showMemory(null);
    const last = this.#lastLabel();
    if (last === "") {
      this.conversation.note(`${name} was stopped for ${doing}, which failed: start it again.`, "warning");
      return;
    }
    this.state.offerLast(last);
    this.conversation.offer(
      `${name} was stopped for ${doing}, which failed: start it again, or restore it as last seen (${last}).`,
      "Restore it",
      () => void this.files.restoreLast(),
    );
  }

  /** The warning for an NPC `name` (persona file `value`) on the Model tab's script that does not fit it. */
  #unfitScript(name: string, value: JsonObject, model: JsonValue | undefined): string | null {
    if (!this.saved.useScript) return null;
    const options = isJsonObject(value.options) ? value.options : {};
    return jsonStepsHint({ name, replyFormat: options.replyFormat, model });
  }

  /** Rebuilds the running NPC with the editor's persona, options and tools; conversation and memory stay. */
  apply(): Promise<void> {
    this.editor.commitRenames();
    return this.#changes.run("Applying the editor to the NPC", () => this.#apply());
  }

  async #apply(): Promise<void> {
    const r = this.running;
    const editor = this.editor;
    if (!r) {
      editor.showResult({ error: "No NPC is running: use Start NPC." });
      return;
    }
    if (!editor.canStart) {
      editor.showResult({ error: "Fix the problems listed above first." });
      return;
    }
    if (this.conversation.busy) {
      // Apply keeps the conversation, so a reply still running (a call waiting for its answer) ends first.
      // (Not by queueing npc/state behind it: cancelling the reply would cancel that too.)
      editor.showResult({
        note: "Waiting for the running reply to end (answer or cancel it), then applying…",
      });
      await this.conversation.idle();
    }
    try {
      this.link.require();
      const value = editor.doc.value;
      const state = await r.npc.state();
      const tools = editor.toolDefinitions();
      const next: NpcState = {
        ...state,
        persona: (isJsonObject(value.persona) ? value.persona : { name: "" }) as never,
        options: (isJsonObject(value.options) ? value.options : {}) as never,
        tools: tools as never,
      };
      this.#registerTools(tools);
      const settings = editor.settingsKey();
      const npc = await r.npc.restore(next, {
        model: editor.model() as never,
        world: r.world?.id ?? null,
      });
      r.npc = npc;
      r.name = typeof next.persona.name === "string" ? next.persona.name : r.name;
      r.settings = settings;
      r.model = editor.model();
      editor.setRunning(r.name, settings);
      Object.assign(r, toolSettings(value.options, tools), {
        scripted: this.#scriptedRun(r.name, value.options),
      });
      this.conversation.note(
        `Applied the editor's persona, options and tools to ${r.name}; the conversation goes on.${
          r.scripted === null
            ? ""
            : " The script starts again from its first step (the NPC gets a new model)."
        }`,
      );
      // The tools the NPC calls now are the editor's (not before: a refused Apply leaves the old ones).
      this.#tookTools(tools);
      // The bridge names what it ignored in the state Apply sent ('state.options.x'); the designer wrote 'options.x'.
      const warnings = npc.warnings.map(asEditorNames);
      // Apply gives the NPC the persona, options and tools: an initial world edited since the start is not
      // what it plays in (the live world is kept), which "Applied" alone let the designer believe.
      const pageWarnings = r.worldSeed !== null && r.worldSeed !== worldSeedOf(value)
        ? [
          `The World tab's initial world changed since ${r.name} started: Apply keeps the live world (edit it in ` +
          "State → World); Start NPC starts a new world from the initial one.",
        ]
        : [];
      const unfit = this.#unfitScript(r.name, value, editor.model());
      if (unfit !== null) pageWarnings.push(unfit);
      editor.showResult({ warnings, pageWarnings, note: `Applied to ${r.name}.` });
      await this.files.refresh();
    } catch (error) {
      // The client put the NPC back as it was (its state, world, tools and model); the bridge names the key it
      // refused under 'state.' (the state Apply sent), where the editor has it as 'options.x'. The NPC calls
      // its tools as before: the renames since it took them, and the answers kept for them, stay.
      const refused = asEditorNames(errorText(error));
      const again = r.scripted === null
        ? ""
        : " Its script starts again from its first step (the NPC gets a new model).";
      if (this.running === r) {
        this.conversation.note(
          `The bridge refused the apply (see under Start): ${r.name} runs on as before, with this ` +
            `conversation, its memory and its world.${again}`,
          "warning",
        );
      }
      editor.showResult({
        error: refused,
        afterError: `${r.name} runs on as before; the editor keeps your edits.`,
      });
    }
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
    const value = editor.doc.value;
    const params = engineExport(value, (world) => editor.npcParams(world));
    const name = fileName(typeof value.npc === "string" ? value.npc : "npc", ".npc-create.json");
    download(name, { text: `${pretty(params)}\n` });
    editor.showResult({
      note: `Exported ${name} to ${DOWNLOADS}: the params of ${Object.keys(params).join(" and ")}.`,
    });
  }
}

/** The initial world of a persona document's `value` as JSON text ("null": none), to compare with another. */
function worldSeedOf(value: JsonObject): string {
  return JSON.stringify(isJsonObject(value.world) ? value.world : null);
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
