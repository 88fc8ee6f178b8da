/// <reference lib="dom" />
/**
 * The playground page: wires the persona editor, the conversation and the state panel to one bridge
 * connection (the typed client over this server's `/rpc` WebSocket). Start, apply, save and restore live
 * here; everything typed is kept in local storage.
 * @module
 */
import type { NpcMemory, NpcState } from "../../../client/game_types.ts";
import type { Connection } from "../../../client/connection.ts";
import { Npc } from "../../../client/npc.ts";
import { World } from "../../../client/world.ts";
import type { Subscription } from "../../../client/world.ts";
import { BridgeError } from "../../../protocol/errors.ts";
import type { JsonObject, JsonValue } from "../../../protocol/json.ts";
import { Conversation, type TurnRecord } from "./conversation.ts";
import { parseJsonc } from "./document.ts";
import { byId, debounce, download, fileName, focusLost, followSkipLinks, h, pretty } from "./dom.ts";
import { Editor } from "./editor.ts";
import type { Check } from "./fields.ts";
import { fetchServerInfo, Link, type ServerInfo } from "./link.ts";
import { lastVisitLabel, seenNow } from "./last_visit.ts";
import { KeptAnswers } from "./kept_answers.ts";
import { LogView } from "./log_view.ts";
import { firstVisit } from "./samples.ts";
import { engineExport, worldIdFor } from "./engine_export.ts";
import { barkHint, type ScriptedRun, scriptHint, unavailableHint } from "./script_hint.ts";
import { relationshipReasons, StatePanel } from "./state_panel.ts";
import { loadSaved, type Saved, storeSaved } from "./storage.ts";
import { answerOf } from "./tool_editor.ts";
import { ToolRenames } from "./tool_renames.ts";
import { ConnectionBar, showModelPill } from "./top_bar.ts";
import { availabilityText } from "./availability_text.ts";
import { historyOf } from "./transcript.ts";

function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** What runs on the bridge now. */
interface Running {
  npc: Npc;
  name: string;
  world: World | null;
  subscription: Subscription | null;
  /** Tool timeouts in seconds by name (null: none), and the NPC's default. */
  timeouts: Map<string, number | null>;
  defaultTimeout: number | null;
  /** Tool descriptions by name (shown in a call's empty answer box). */
  descriptions: Map<string, string>;
  generation: number;
  /** The script the NPC plays (the Model tab's or the bridge's), or null: it runs on a real model. */
  scripted: ScriptedRun | null;
  /**
   * The `settingsKey` of what it was started or applied with (the editor says when it differs), or null when
   * unknown: a restored NPC runs on the saved persona, options and tools, which the bridge wrote out in full.
   */
  settings: string | null;
}

function seconds(value: JsonValue | undefined, fallback: number | null): number | null {
  if (typeof value !== "number") return fallback;
  return value === 0 ? null : value;
}

class Playground {
  readonly saved: Saved;
  readonly link: Link;
  readonly log = new LogView();
  readonly editor: Editor;
  readonly conversation: Conversation;
  readonly state: StatePanel;
  #running: Running | null = null;
  /** What start, apply or restore is running, or null. */
  changing: string | null = null;
  info: ServerInfo | null = null;
  /** The world paths of the designer's edits still running (their changes are logged as theirs). */
  readonly #worldEdits: string[] = [];
  /** The NPC went with a connection that closed (until the next start or restore). */
  #lost = false;
  readonly #bar: ConnectionBar;
  #validated = "";
  /** A Download state is running (one waiting for a reply to end takes no second click). */
  #saving = false;
  readonly persist: () => void;
  /** Answers typed to tool calls but not sent, kept for the tab (by persona and tool): a reload keeps them. */
  readonly kept = new KeptAnswers(sessionStorageOrNull());
  /** The persona id {@link kept}'s answers are for now (see `#followPersona`). */
  #keptFor = "";
  /** Tools renamed in the editor since the running NPC took its tools (it calls them by the old names). */
  readonly #renames = new ToolRenames();

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
    this.editor = this.#createEditor();
    this.#keptFor = this.#persona();
    this.conversation = this.#createConversation();
    this.state = this.#createStatePanel();
    this.#mountLog();
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
        () => void this.restoreLast(),
      );
    }
  }

  /**
   * The answers kept for the tab follow the persona in the editor: its id renamed, they move to the new id;
   * the persona replaced by another (a loaded file, a restored NPC), they go (they were typed for the old one).
   */
  #followPersona(replaced: boolean): void {
    const now = this.#persona();
    if (now === this.#keptFor) return;
    if (replaced) this.kept.drop(this.#keptFor);
    else this.kept.rename(this.#keptFor, now);
    this.#keptFor = now;
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
    const persona = this.#persona();
    this.kept.prune(persona, this.#toolNames(this.editor.toolDefinitions()));
    const tools = this.kept.tools(persona);
    if (tools.length === 0) return;
    const names = tools.join(", ");
    this.conversation.note(
      `Your answer to ${names}, typed before the page was reloaded, is kept: the next call of ${
        tools.length === 1 ? "it" : "each"
      } starts with it.`,
    );
  }

  #toolNames(definitions: JsonObject[]): string[] {
    return definitions.flatMap((def) => typeof def.name === "string" ? [def.name] : []);
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
    const validateSoon = debounce(() => void this.#validateTools(), 500);
    return new Editor(byId("editor-body"), this.saved, {
      changed: (replaced) => {
        this.persist();
        if (this.editor) this.#followPersona(replaced === true);
        if (this.editor) this.#header(); // (not while the editor is being built)
        validateSoon();
      },
      start: (force) => void this.start(force),
      apply: () => void this.apply(),
      restoreFile: (name, text) => {
        this.state.selectTab("save");
        void this.restore(name, text);
      },
      exportForEngine: () => this.exportForEngine(),
      toolRenamed: (old, name) => {
        this.#renames.renamed(old, name);
        const kept = this.kept.take(this.#persona(), old);
        if (kept !== undefined) this.kept.set(this.#persona(), name, kept);
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

  /** The state panel: world edits, memory edits, save and restore. */
  #createStatePanel(): StatePanel {
    return new StatePanel(byId("state-body"), {
      set: (path, value) => this.#worldEdit(path, () => this.#world().set(path, value)),
      remove: (path) => this.#worldEdit(path, () => this.#world().remove(path)),
      download: () => void this.downloadState(),
      restore: (name, text) => void this.restore(name, text),
      restoreLast: () => void this.restoreLast(),
      updateMemory: (memory) => this.#updateMemory(memory),
      refresh: () => void this.refreshState(),
      replyRunning: () => this.conversation.busy,
    });
  }

  /** Puts the raw log on the page, open or closed as it was, with its toggle. */
  #mountLog(): void {
    byId("log-host").append(this.log.root);
    const toggle = byId<HTMLButtonElement>("toggle-log");
    const setLog = (open: boolean) => {
      this.saved.logOpen = open;
      toggle.setAttribute("aria-pressed", String(open));
      this.log.setVisible(open);
      document.body.classList.toggle("log-open", open);
    };
    toggle.addEventListener("click", () => {
      setLog(!this.saved.logOpen);
      this.persist();
      // In one column (a phone) the log opens below every panel: bring it on the screen.
      if (this.saved.logOpen) this.log.root.scrollIntoView({ block: "nearest" });
    });
    setLog(this.saved.logOpen);
  }

  async boot(): Promise<void> {
    this.info = await fetchServerInfo();
    if (this.info) this.editor.followServerModel(this.info.model.name);
    this.#header();
    await this.link.connect();
  }

  #world(): World {
    const world = this.running?.world;
    if (!world) throw new Error("The NPC has no world.");
    return world;
  }

  /** Runs the designer's edit of the world at `path` (its changes arrive before its response). */
  async #worldEdit(path: string, run: () => Promise<unknown>): Promise<void> {
    this.#worldEdits.push(path);
    try {
      this.link.require();
      await run();
    } finally {
      this.#worldEdits.splice(this.#worldEdits.indexOf(path), 1);
    }
    void this.refreshState();
  }

  /**
   * Who made a world change at `path`: the designer when one of their edits still running is at, inside or
   * above it (also while a turn runs: a call may wait for its answer meanwhile), else the NPC during a turn,
   * else the bridge.
   */
  #changedBy(path: string): string {
    const under = (a: string, b: string) => b === "" || a === b || a.startsWith(`${b}.`);
    if (this.#worldEdits.some((edit) => under(path, edit) || under(edit, path))) return "you";
    return this.conversation.busy ? "the NPC, during a turn" : "the bridge";
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
      void this.#availability();
      this.#validated = "";
      void this.#validateTools();
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
            () => void this.restoreLast(),
          );
        }
      }
      return;
    }
    if (state === "connecting" || state === "waiting") {
      if (state === "connecting") this.#bar.connecting();
      else this.#bar.waiting(this.info?.model.name);
      this.#header();
      return;
    }
    const had = this.running !== null;
    const cut = had ? this.conversation.cutOff() : null;
    this.running = null;
    this.state.world.show(null, null);
    this.state.showMemory(null);
    this.#bar.closed(detail, cut);
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

  async #availability(): Promise<void> {
    if (this.link.generation > 1) {
      // Connected again: the server may have been restarted with another model.
      const info = await fetchServerInfo();
      if (info) {
        this.info = info;
        this.editor.followServerModel(info.model.name);
      }
    }
    try {
      const availability = await this.link.availability();
      if (availability && this.link.server) this.link.server.model = availability;
    } catch {
      // shown as unknown
    }
    this.#header();
  }

  /** The bridge's model and its availability, in the editor's Model tab and the top bar's model pill. */
  #header(): void {
    const label = this.info ? `${this.info.model.label}` : "system";
    const availability = this.link.server?.model;
    // Until the bridge answers `initialize` it is checking its model (loading a GGUF one).
    const checking = this.link.state === "connecting" || this.link.state === "waiting"
      ? this.info?.model.name ?? "system"
      : undefined;
    this.editor?.setBridgeModel(
      `${label}, ${availabilityText(availability, checking)}`,
      availability ? availability.available : null,
      this.info?.model ?? null,
    );
    this.editor?.setBridgeContext(availability?.contextSize ?? null);
    showModelPill({ useScript: this.saved.useScript, label, availability, checking });
  }

  async #validateTools(): Promise<void> {
    const connection = this.link.connection;
    if (!connection || this.link.state !== "open" || this.editor.doc.problem) return;
    const tools = this.editor.toolDefinitions();
    const key = JSON.stringify(tools);
    if (key === this.#validated) return;
    this.#validated = key;
    const notes = new Map<number, Check[]>();
    await Promise.all(tools.map(async (tool, i) => {
      if (this.editor.review.tools[i]?.some((c) => c.error)) return;
      try {
        const result = await connection.request("tools/validate", { tools: [tool] as never });
        const warnings = result.tools[0]?.warnings ?? [];
        if (warnings.length > 0) notes.set(i, warnings.map((warning) => ({ warning })));
      } catch (error) {
        if (error instanceof BridgeError && error.dataCode === "shut_down") {
          this.#validated = ""; // check again once connected
          return;
        }
        // The bridge refuses the tool (Start would fail on it): a problem; anything else only a warning.
        const text = message(error).replace(/^tools\[0\]/, `tools[${i}]`);
        const refused = error instanceof BridgeError &&
          (error.dataCode === "invalid_params" || error.dataCode === "invalid_schema");
        notes.set(i, [refused ? { error: text } : { warning: text }]);
      }
    }));
    if (key !== this.#validated) return;
    this.editor.setToolNotes(notes, tools);
  }

  /**
   * Deletes what runs now (ignoring errors: it may be gone with an old connection), after cancelling a reply
   * still running (a start or a restore replaces the NPC, as Start always did). Returns the cancelled turn,
   * which the caller notes in the new conversation, or null.
   */
  async #teardown(): Promise<TurnRecord | null> {
    const r = this.running;
    this.running = null;
    if (!r || r.generation !== this.link.generation) return null;
    const cancelled = await this.conversation.cancelRunning();
    await r.subscription?.unsubscribe().catch(() => {});
    await r.npc.delete().catch(() => {});
    await r.world?.delete().catch(() => {});
    return cancelled;
  }

  /** The note of a reply cancelled by a start or a restore (`why`: "to start the NPC again"). */
  #noteCancelled(turn: TurnRecord | null, why: string): void {
    if (turn === null) return;
    this.conversation.note(
      `The reply to “${turn.line}” was still running: it was cancelled ${why}.`,
      "warning",
    );
  }

  /** Registers the client tools with the connection: each call goes to the conversation. */
  #registerTools(definitions: JsonObject[]): void {
    const connection = this.link.require();
    this.#renames.reset();
    // An answer kept for a tool the NPC no longer has would never be asked for.
    this.kept.prune(this.#persona(), this.#toolNames(definitions));
    for (const def of definitions) {
      if (typeof def.name !== "string") continue;
      // (The connection runs the handler of the tool the call names: `ctx.call` has the name and arguments.)
      connection.tools.add(
        { ...def } as never,
        (_args, ctx) => this.conversation.handleTool(ctx),
      );
    }
  }

  async #openWorld(id: string, seed: JsonObject): Promise<{ world: World; subscription: Subscription }> {
    const connection = this.link.require();
    const created = await connection.request<{ world: string }>("world/create", { world: id, state: seed });
    const world = new World(connection, created.world);
    const subscription = await world.subscribe("", (change) => {
      this.state.world.change(change, this.#changedBy(change.path));
    });
    this.state.world.show(created.world, await world.snapshot());
    return { world, subscription };
  }

  /** The running NPC's tool timeouts (its own, and the NPC's default) and tool descriptions, by tool name. */
  #toolSettings(
    options: JsonValue | undefined,
    tools: JsonObject[],
  ): Pick<Running, "timeouts" | "defaultTimeout" | "descriptions"> {
    const o = isObject(options) ? options : {};
    const defaultTimeout = seconds(o.toolTimeoutSeconds, 120);
    const timeouts = new Map<string, number | null>();
    const descriptions = new Map<string, string>();
    for (const tool of tools) {
      if (typeof tool.name === "string" && typeof tool.description === "string") {
        descriptions.set(tool.name, tool.description);
      }
      if (typeof tool.name === "string" && typeof tool.timeoutSeconds === "number") {
        timeouts.set(tool.name, seconds(tool.timeoutSeconds, defaultTimeout));
      }
    }
    return { timeouts, defaultTimeout, descriptions };
  }

  /**
   * Records the NPC the bridge just created (from the editor's persona or a saved state, `from`) as the one
   * running, and starts its relationship history; returns its name.
   */
  #nowRunning(
    from: JsonObject,
    parts: {
      connection: Connection;
      created: { npc: string; tools: string[]; warnings: string[] };
      worldParts: { world: World; subscription: Subscription } | null;
      tools: JsonObject[];
      /** The `settingsKey` of what it was created with, or null (unknown). */
      settings: string | null;
    },
    label: "start" | "restored",
  ): string {
    const { connection, created, worldParts, settings } = parts;
    const persona = isObject(from.persona) ? from.persona : {};
    const name = typeof persona.name === "string" ? persona.name : created.npc;
    this.running = {
      npc: new Npc(connection, created.npc, { tools: created.tools, warnings: created.warnings }),
      name,
      world: worldParts?.world ?? null,
      subscription: worldParts?.subscription ?? null,
      generation: this.link.generation,
      scripted: this.#scriptedRun(name, from.options),
      settings,
      ...this.#toolSettings(from.options, parts.tools),
    };
    // The last state seen is this NPC's from now on: the way back to an NPC that went is offered again when
    // this one goes with the connection.
    this.state.offerLast(null);
    const memory = isObject(from.memory) ? from.memory : {};
    this.state.resetHistory(
      typeof memory.relationship === "number" ? Math.round(memory.relationship) : 0,
      label,
    );
    return name;
  }

  /** The script an NPC started now plays (the Model tab's, or the bridge's `--script`), or null. */
  #scriptedRun(name: string, options: JsonValue | undefined): ScriptedRun | null {
    const replyFormat = isObject(options) ? options.replyFormat : undefined;
    if (this.saved.useScript) return { name, replyFormat, bridgeLabel: null };
    const model = this.info?.model;
    return model?.name === "scripted" ? { name, replyFormat, bridgeLabel: model.label } : null;
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
    return this.#lifecycle("Starting the NPC", () => this.#start());
  }

  /**
   * Runs one start, apply or restore at a time, with Start and Apply disabled meanwhile. The button pressed
   * gets the focus back when it is enabled again (disabling it dropped the focus to the page's body, where a
   * keyboard or screen reader user loses their place), unless the focus moved on meanwhile.
   */
  async #lifecycle(label: string, run: () => Promise<void>): Promise<void> {
    if (this.changing !== null) {
      this.editor.showResult({ error: `${this.changing} is not finished yet.` });
      return;
    }
    this.changing = label;
    const buttons = ["start", "apply"].map((id) => byId<HTMLButtonElement>(id));
    const pressed = buttons.find((b) => b === document.activeElement) ?? null;
    for (const b of buttons) b.disabled = true;
    this.editor.showResult({ note: `${label}…` });
    try {
      await run();
    } finally {
      this.changing = null;
      for (const b of buttons) b.disabled = false;
      if (pressed && focusLost()) pressed.focus();
    }
  }

  /**
   * Waits while the page is still connecting: the first connection waits for the bridge's model (a GGUF model
   * is loaded first, seconds or more), and a Start or restore pressed meanwhile runs once it is open (`doing`
   * says what, under Start). Rejects when the connection fails.
   */
  async #connected(doing: string): Promise<void> {
    if (!this.link.pending) return;
    const loading = this.info?.model.name === "llama";
    this.editor.showResult({
      note: loading
        ? `Waiting for the bridge to load its model, then ${doing}…`
        : `Waiting for the connection to the bridge, then ${doing}…`,
    });
    await this.link.opened();
    this.editor.showResult({ note: `${doing[0].toUpperCase()}${doing.slice(1)}…` });
  }

  async #start(): Promise<void> {
    const editor = this.editor;
    let worldParts: { world: World; subscription: Subscription } | null = null;
    try {
      await this.#connected("starting the NPC");
      this.link.require();
      const cancelled = await this.#teardown();
      const value = editor.doc.value;
      const tools = editor.toolDefinitions();
      this.#registerTools(tools);
      if (isObject(value.world)) worldParts = await this.#openWorld(worldIdFor(value.npc), value.world);
      else this.state.world.show(null, null);
      const params = editor.npcParams(worldParts?.world.id);
      const settings = editor.settingsKey();
      const connection = this.link.require();
      const result = await connection.request("npc/create", params as never);
      const name = this.#nowRunning(
        value,
        { connection, created: result, worldParts, tools, settings },
        "start",
      );
      this.conversation.started(`${name} (${result.npc})`, editor.modelLabel(), true);
      this.#noteCancelled(cancelled, "to start the NPC again");
      this.conversation.note(`Started ${name}: tools ${result.tools.join(", ") || "none"}.`);
      editor.showResult({ warnings: result.warnings, note: `Started ${name} (${result.npc}).` });
      await this.refreshState();
    } catch (error) {
      await worldParts?.world.delete().catch(() => {});
      if (!this.running) this.state.world.show(null, null);
      editor.showResult({ error: message(error) });
    }
  }

  /** Rebuilds the running NPC with the editor's persona, options and tools; conversation and memory stay. */
  apply(): Promise<void> {
    this.editor.commitRenames();
    return this.#lifecycle("Applying the editor to the NPC", () => this.#apply());
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
        persona: (isObject(value.persona) ? value.persona : { name: "" }) as never,
        options: (isObject(value.options) ? value.options : {}) as never,
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
      editor.setRunning(r.name, settings);
      Object.assign(r, this.#toolSettings(value.options, tools), {
        scripted: this.#scriptedRun(r.name, value.options),
      });
      this.conversation.note(
        `Applied the editor's persona, options and tools to ${r.name}; the conversation goes on.${
          r.scripted === null
            ? ""
            : " The script starts again from its first step (the NPC gets a new model)."
        }`,
      );
      // The bridge names what it ignored in the state Apply sent ('state.options.x'); the designer wrote 'options.x'.
      const warnings = npc.warnings.map((w) => w.replace(/'state\.(persona|options|tools)\b/g, "'$1"));
      editor.showResult({ warnings, note: `Applied to ${r.name}.` });
      await this.refreshState();
    } catch (error) {
      editor.showResult({ error: message(error) });
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
    if (this.link.state === "open") await this.refreshState();
  }

  /** Reads the NPC's memory and keeps its state (offered after a reconnect). */
  async refreshState(): Promise<void> {
    const r = this.running;
    if (!r) {
      this.state.showMemory(null);
      return;
    }
    try {
      const state = await r.npc.state({ settle: false });
      this.state.showMemory(state.memory);
      const world = r.world ? await r.world.snapshot() : null;
      this.saved.lastState = {
        npc: r.npc.id,
        state: state as unknown as JsonValue,
        world: r.world ? { world: r.world.id, state: world as JsonValue } : null,
        savedAt: seenNow(),
      };
      this.persist();
    } catch (error) {
      if (!(error instanceof BridgeError && error.dataCode === "shut_down")) {
        this.conversation.note(
          `Could not read the NPC's state: ${
            message(error)
          } The Memory tab may be out of date: its Refresh ` +
            "tries again.",
          "warning",
        );
      }
    }
  }

  /** Downloads `{npc, state, world}`: the `npc/state` result plus a snapshot of the world. */
  async downloadState(): Promise<void> {
    const r = this.running;
    if (!r) {
      const connected = this.link.state === "open";
      this.state.saveMessage(
        !this.#lost
          ? "Start the NPC first: there is no state to save."
          : `The NPC went with the bridge: there is no state to save. ${
            connected ? "Restore the last state seen" : "After Reconnect, restore the last state seen"
          }.`,
        "error",
      );
      return;
    }
    if (this.#saving) return;
    this.#saving = true;
    if (this.conversation.busy) {
      // The save waits for the running reply (npc/state settles), which may wait for the designer's answer.
      this.state.saveMessage("Waiting for the running reply to end (answer or cancel it), then saving…");
    }
    try {
      this.link.require();
      const state = await r.npc.state();
      const world = r.world ? { world: r.world.id, state: await r.world.snapshot() } : null;
      const file = { npc: r.npc.id, state, world };
      const name = fileName(r.npc.id, ".state.json");
      download(name, { text: `${pretty(file)}\n` });
      this.state.saveMessage(`Saved ${name} (${r.name}, relationship ${state.memory.relationship ?? 0}).`);
    } catch (error) {
      this.state.saveMessage(`Could not save: ${message(error)}`, "error");
    } finally {
      this.#saving = false;
    }
  }

  /** Restores an NPC from a state file's text (`{npc, state, world}` or a bare `npc/state` state). */
  async restore(name: string, text: string): Promise<void> {
    const parsed = parseJsonc(text, name);
    if (parsed.problem) {
      this.state.saveMessage(`${parsed.problem.message} Nothing was restored.`, "error");
      return;
    }
    const value = parsed.value;
    let state: JsonObject | null = null;
    let world: JsonObject | null = null;
    if (isObject(value) && isObject(value.state)) {
      state = value.state;
      world = isObject(value.world) ? value.world : null;
    } else if (isObject(value) && isObject(value.persona) && isObject(value.transcript)) {
      state = value;
    }
    if (state === null) {
      this.state.saveMessage(
        `${name} is not a state file: expected the npc/state result ({"npc", "state", "world"?}) or its "state".`,
        "error",
      );
      return;
    }
    await this.#restoreState(state, world, name);
  }

  async restoreLast(): Promise<void> {
    const last = this.saved.lastState;
    if (!isObject(last) || !isObject(last.state)) return;
    await this.#restoreState(last.state, isObject(last.world) ? last.world : null, "the last state seen");
  }

  #restoreState(state: JsonObject, world: JsonObject | null, source: string): Promise<void> {
    return this.#lifecycle(`Restoring from ${source}`, () => this.#restore(state, world, source));
  }

  async #restore(state: JsonObject, world: JsonObject | null, source: string): Promise<void> {
    let worldParts: { world: World; subscription: Subscription } | null = null;
    try {
      await this.#connected(`restoring from ${source}`);
      this.link.require();
      const cancelled = await this.#teardown();
      const tools = Array.isArray(state.tools) ? state.tools.filter(isObject) : [];
      this.#registerTools(tools);
      const savedWorld = typeof state.world === "string" ? state.world : null;
      const notes: string[] = [];
      if (world && isObject(world.state)) {
        const id = typeof world.world === "string" ? world.world : savedWorld ?? worldIdFor(state.npc);
        worldParts = await this.#openWorld(id, world.state);
      } else if (savedWorld !== null) {
        const seed = this.editor.doc.value.world;
        if (isObject(seed)) {
          worldParts = await this.#openWorld(savedWorld, seed);
          notes.push(
            `The file has no world snapshot: world '${savedWorld}' starts from the editor's initial world.`,
          );
        }
      }
      if (!worldParts) this.state.world.show(null, null);
      const connection = this.link.require();
      const model = this.editor.model();
      const result = await connection.request("npc/restore", {
        state: state as never,
        world: worldParts?.world.id ?? null,
        ...(model !== undefined ? { model: model as never } : {}),
      });
      const name = this.#nowRunning(
        state,
        { connection, created: result, worldParts, tools, settings: null },
        "restored",
      );
      this.conversation.started(`${name} (${result.npc})`, this.editor.modelLabel(), true);
      this.#noteCancelled(cancelled, `to restore from ${source}`);
      this.conversation.note(
        `Restored ${name} from ${source}.${
          this.running?.scripted
            ? " Its script starts from its first step (a restored NPC gets a new model)."
            : ""
        }`,
      );
      this.conversation.history(historyOf(state.transcript));
      // The result under Start (an alert) lists these notes with the bridge's warnings and says them; the
      // conversation's live region keeps saying what it said last (e.g. that a running reply was cancelled).
      for (const n of notes) this.conversation.note(n, "warning", true);
      this.state.saveMessage(`Restored ${name} from ${source}.`);
      this.editor.showResult({
        warnings: result.warnings,
        pageWarnings: notes,
        note: `Restored ${name}. The editor still shows your persona text.`,
      });
      this.#offerAdopt(state);
      await this.refreshState();
    } catch (error) {
      await worldParts?.world.delete().catch(() => {});
      this.state.saveMessage(`Could not restore: ${message(error)}`, "error");
    }
  }

  #offerAdopt(state: JsonObject): void {
    const result = byId("start-result");
    result.append(
      h("button", {
        type: "button",
        id: "adopt-state",
        class: "link",
        text: "Put the restored persona, options and tools into the editor",
        on: {
          click: (event) => {
            this.editor.adoptState(state);
            // The editor now has what the restored NPC runs on (unless Apply or Start replaced it meanwhile).
            const r = this.running;
            if (r !== null && r.settings === null) {
              r.settings = this.editor.settingsKey();
              this.editor.setRunning(r.name, r.settings);
            }
            (event.target as HTMLElement).remove();
            // The focus went with the button: "Undo load" (shown now) takes it back the other way.
            if (focusLost()) byId("undo-load").focus();
          },
        },
      }),
    );
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
    editor.showResult({ note: `Exported ${name}: the params of ${Object.keys(params).join(" and ")}.` });
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
