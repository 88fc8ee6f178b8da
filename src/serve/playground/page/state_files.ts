/**
 * The NPC's state, saved and restored: the last state seen (kept in local storage after each turn and
 * offered after a reload or a reconnect), Download state (`{npc, state, world}`), and restoring an NPC from
 * a state file or the last state seen, with the offer to put the restored persona into the editor. Owns
 * the page's side of `npc/state` and `npc/restore`; starting and replacing the running NPC is the host's.
 * @module
 */
import type { Connection } from "../../../client/connection.ts";
import { BridgeError } from "../../../protocol/errors.ts";
import { isJsonObject, type JsonObject, type JsonValue } from "../../../protocol/json.ts";
import type { Conversation, TurnRecord } from "./conversation.ts";
import { parseJsonc } from "./document.ts";
import { byId, download, DOWNLOADS, fileName, focusLost, h, pretty } from "./dom.ts";
import type { Editor } from "./editor.ts";
import { settingsKey } from "./editor_status.ts";
import { worldIdFor } from "./engine_export.ts";
import { seenNow } from "./last_visit.ts";
import type { Link } from "./link.ts";
import type { NpcChanges } from "./npc_changes.ts";
import type { Running, WorldParts } from "./running.ts";
import { asEditorNames, pathsIn } from "./bridge_paths.ts";
import type { StatePanel } from "./state_panel.ts";
import type { Saved } from "./storage.ts";
import { historyOf } from "./transcript.ts";
import { errorText } from "./values.ts";

/** What the bridge answered to `npc/create` or `npc/restore`. */
export interface Created {
  npc: string;
  tools: string[];
  warnings: string[];
}

/** The NPC the bridge just created, for {@link StateFilesHost.nowRunning}. */
export interface NowRunningParts {
  connection: Connection;
  created: Created;
  worldParts: WorldParts | null;
  tools: JsonObject[];
  /** The `settingsKey` of what it was created with, or null (unknown). */
  settings: string | null;
  /** The `model` param it was created with (undefined: the bridge's). */
  model: JsonValue | undefined;
}

/**
 * The NPC a start or a restore stopped (its state and its world's, read after its running reply was cancelled
 * and before it was deleted), to put back as it was when the bridge refuses what replaces it.
 */
export interface KeptNpc {
  running: Running;
  state: JsonObject;
  /** `{world, state}`: its world's id and snapshot, or null (it had none). */
  world: { world: string; state: JsonObject } | null;
}

/** The NPC that ran (its name, and its state kept), once it was stopped for a restore. */
type StoppedNpc = { name: string | null; kept: KeptNpc | null };

/** What stopping the running NPC for a start or a restore gave: the reply it cancelled, and the NPC kept. */
export interface Stopped {
  cancelled: TurnRecord | null;
  /** The NPC that ran, or null (none ran, it went with an old connection, or its state could not be read). */
  kept: KeptNpc | null;
}

/** What saving and restoring ask of the page. */
export interface StateFilesHost {
  link: Link;
  saved: Saved;
  persist: () => void;
  editor: () => Editor;
  conversation: () => Conversation;
  state: () => StatePanel;
  /** What runs on the bridge now, or null. */
  running: () => Running | null;
  /** The NPC went with a connection that closed (until the next start or restore). */
  lost: () => boolean;
  /** Runs one start, apply or restore at a time, and waits while the page is still connecting. */
  changes: NpcChanges;
  /** Deletes what runs now, keeping its state; returns the reply it cancelled and the NPC kept. */
  teardown: () => Promise<Stopped>;
  /** Registers the client tools with the connection. */
  registerTools: (definitions: JsonObject[]) => void;
  /** Creates a world from `seed` and shows it in the State panel. */
  openWorld: (id: string, seed: JsonObject) => Promise<WorldParts>;
  /** Records the NPC just created from `from` (a persona or a saved state) as running; returns its name. */
  nowRunning: (from: JsonObject, parts: NowRunningParts, label: "start" | "restored") => string;
  /** Notes a reply cancelled by a start or a restore (`why`: "to restore from …"). */
  noteCancelled: (turn: TurnRecord | null, why: string) => void;
  /**
   * The NPC `name` was stopped for `doing` ("the restore"), which the bridge then refused (`error`): puts the
   * NPC kept back as it was (or, when it cannot, says it no longer runs and offers it back as last seen).
   */
  refused: (
    stopped: Stopped & { name: string },
    why: { doing: string; error: string; marks?: readonly string[] },
  ) => Promise<void>;
}

/**
 * Saving and restoring the NPC's state.
 *
 * @example
 * ```ts ignore
 * const files = new StateFiles(host);
 * await files.refresh(); // the Memory tab and the last state seen
 * await files.restore("mira.state.json", text);
 * ```
 */
export class StateFiles {
  readonly #host: StateFilesHost;
  /** A Download state is running (one waiting for a reply to end takes no second click). */
  #saving = false;

  constructor(host: StateFilesHost) {
    this.#host = host;
  }

  /** Reads the NPC's memory and keeps its state (offered after a reconnect). */
  async refresh(): Promise<void> {
    const host = this.#host;
    const r = host.running();
    if (!r) {
      host.state().showMemory(null);
      return;
    }
    try {
      const state = await r.npc.state({ settle: false });
      host.state().showMemory(state.memory);
      const world = r.world ? await r.world.snapshot() : null;
      host.saved.lastState = {
        npc: r.npc.id,
        state: state as unknown as JsonValue,
        world: r.world ? { world: r.world.id, state: world as JsonValue } : null,
        savedAt: seenNow(),
      };
      host.persist();
    } catch (error) {
      if (!(error instanceof BridgeError && error.dataCode === "shut_down")) {
        host.conversation().note(
          `Could not read the NPC's state: ${
            errorText(error)
          } The Memory tab may be out of date: its Refresh ` +
            "tries again.",
          "warning",
        );
      }
    }
  }

  /** Downloads `{npc, state, world}`: the `npc/state` result plus a snapshot of the world. */
  async download(): Promise<void> {
    const host = this.#host;
    const panel = host.state();
    const r = host.running();
    if (!r) {
      const connected = host.link.state === "open";
      panel.saveMessage(
        !host.lost()
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
    if (host.conversation().busy) {
      // The save waits for the running reply (npc/state settles), which may wait for the designer's answer.
      panel.saveMessage("Waiting for the running reply to end (answer or cancel it), then saving…");
    }
    try {
      host.link.require();
      const state = await r.npc.state();
      const world = r.world ? { world: r.world.id, state: await r.world.snapshot() } : null;
      const file = { npc: r.npc.id, state, world };
      const name = fileName(r.npc.id, ".state.json");
      download(name, { text: `${pretty(file)}\n` });
      panel.saveMessage(
        `Saved ${name} (${r.name}, relationship ${state.memory.relationship ?? 0}) to ${DOWNLOADS}.`,
      );
    } catch (error) {
      panel.saveMessage(`Could not save: ${errorText(error)}`, "error");
    } finally {
      this.#saving = false;
    }
  }

  /** Restores an NPC from a state file's text (`{npc, state, world}` or a bare `npc/state` state). */
  async restore(name: string, text: string): Promise<void> {
    const panel = this.#host.state();
    const parsed = parseJsonc(text, name);
    if (parsed.problem) {
      panel.saveMessage(`${parsed.problem.message} Nothing was restored.`, "error");
      return;
    }
    const value = parsed.value;
    let state: JsonObject | null = null;
    let world: JsonObject | null = null;
    if (isJsonObject(value) && isJsonObject(value.state)) {
      state = value.state;
      world = isJsonObject(value.world) ? value.world : null;
    } else if (isJsonObject(value) && isJsonObject(value.persona) && isJsonObject(value.transcript)) {
      state = value;
    }
    if (state === null) {
      panel.saveMessage(
        `${name} is not a state file: expected the npc/state result ({"npc", "state", "world"?}) or its "state".`,
        "error",
      );
      return;
    }
    await this.#restoreState(state, world, name);
  }

  /** Restores the last state seen (kept in local storage), if there is one. */
  async restoreLast(): Promise<void> {
    const last = this.#host.saved.lastState;
    if (!isJsonObject(last) || !isJsonObject(last.state)) return;
    await this.#restoreState(last.state, isJsonObject(last.world) ? last.world : null, "the last state seen");
  }

  #restoreState(state: JsonObject, world: JsonObject | null, source: string): Promise<void> {
    // A restore runs on the editor's model: a page's script that cannot be sent would leave the NPC on the
    // bridge's model while the page says it runs on the script. Nothing is stopped for it.
    const unsendable = this.#host.editor().unsendableScript();
    if (unsendable !== null) {
      const why = `the page's script cannot be sent: ${unsendable} Fix it in the Model tab, or choose the ` +
        "bridge's model there.";
      this.#host.state().saveMessage(`Could not restore: ${why}`, "error");
      this.#host.editor().showResult({ error: `Could not restore from ${source}: ${why}`, marks: [] });
      return Promise.resolve();
    }
    return this.#host.changes.run(`Restoring from ${source}`, () => this.#restore(state, world, source));
  }

  async #restore(state: JsonObject, world: JsonObject | null, source: string): Promise<void> {
    const host = this.#host;
    const editor = host.editor();
    const conversation = host.conversation();
    let worldParts: WorldParts | null = null;
    let stopped: StoppedNpc | null = null;
    try {
      await host.changes.connected(`restoring from ${source}`);
      host.link.require();
      const before = host.running()?.name ?? null;
      const { cancelled, kept } = await host.teardown();
      stopped = { name: before, kept };
      const tools = Array.isArray(state.tools) ? state.tools.filter(isJsonObject) : [];
      host.registerTools(tools);
      const opened = await this.#openWorld(state, world);
      worldParts = opened.worldParts;
      const notes = opened.notes;
      const connection = host.link.require();
      const model = editor.model();
      const result = await connection.request("npc/restore", {
        state: state as never,
        world: worldParts?.world.id ?? null,
        ...(model !== undefined ? { model: model as never } : {}),
      });
      // What it runs on, to compare with the editor's (the status line says when they differ).
      const settings = settingsKey(state, model);
      const name = host.nowRunning(
        state,
        { connection, created: result, worldParts, tools, settings, model },
        "restored",
      );
      const same = settings === editor.settingsKey();
      conversation.started(`${name} (${result.npc})`, editor.modelLabel(), true);
      host.noteCancelled(cancelled, `to restore from ${source}`);
      conversation.note(
        `Restored ${name} from ${source}.${
          host.running()?.scripted
            ? " Its script starts from its first step (a restored NPC gets a new model)."
            : ""
        }`,
      );
      conversation.history(historyOf(state.transcript));
      // The result under Start (an alert) lists these notes with the bridge's warnings and says them; the
      // conversation's live region keeps saying what it said last (e.g. that a running reply was cancelled).
      for (const n of notes) conversation.note(n, "warning", true);
      host.state().saveMessage(`Restored ${name} from ${source}.`);
      editor.showResult({
        // (Named as the persona file names them: 'options.x', not 'state.options.x'.)
        warnings: result.warnings.map(asEditorNames),
        pageWarnings: notes,
        note: same
          ? `Restored ${name}. The editor has the same persona, options and tools.`
          : `Restored ${name}. The editor still shows your persona text.`,
      });
      if (!same) this.#offerAdopt(state);
      await this.refresh();
    } catch (error) {
      await worldParts?.world.delete().catch(() => {});
      await this.#refusedRestore(error, { source, stopped });
    }
  }

  /**
   * The world a restore opens: the file's snapshot, or (a file without one that names a world) the editor's
   * initial world under that id, said in a note; none otherwise.
   */
  async #openWorld(
    state: JsonObject,
    world: JsonObject | null,
  ): Promise<{ worldParts: WorldParts | null; notes: string[] }> {
    const host = this.#host;
    const savedWorld = typeof state.world === "string" ? state.world : null;
    const notes: string[] = [];
    let worldParts: WorldParts | null = null;
    if (world && isJsonObject(world.state)) {
      const id = typeof world.world === "string" ? world.world : savedWorld ?? worldIdFor(state.npc);
      worldParts = await host.openWorld(id, world.state);
    } else if (savedWorld !== null) {
      const seed = host.editor().doc.value.world;
      if (isJsonObject(seed)) {
        worldParts = await host.openWorld(savedWorld, seed);
        notes.push(
          `The file has no world snapshot: world '${savedWorld}' starts from the editor's initial world.`,
        );
      }
    }
    if (!worldParts) host.state().world.show(null, null);
    return { worldParts, notes };
  }

  /** A restore that failed: said under Start and in the State tab, and the NPC it stopped put back. */
  async #refusedRestore(
    error: unknown,
    { source, stopped }: { source: string; stopped: StoppedNpc | null },
  ): Promise<void> {
    const host = this.#host;
    // The bridge names the file's keys it refused under 'state.': named as the editor names them ('options.x',
    // as the warnings are). They are the file's values, not the editor's: only what the restore took from the
    // editor (its Model tab, 'model…') is marked by its field.
    const bridge = errorText(error);
    const marks = pathsIn(bridge);
    host.state().saveMessage(`Could not restore: ${asEditorNames(bridge)}`, "error");
    // Under Start, where "Restoring from …" was said, and where Start and the persona are.
    const refusal = `Could not restore from ${source}: ${asEditorNames(bridge)}`;
    host.editor().showResult({ error: refusal, marks });
    if (host.running() === null) {
      host.state().world.show(null, null);
      host.state().showMemory(null);
      // (When the bridge went away meanwhile, the page says so and offers the NPC back once connected.)
      if (stopped?.name != null && host.link.state === "open") {
        const why = { doing: "the restore", error: refusal, marks };
        await host.refused({ cancelled: null, kept: stopped.kept, name: stopped.name }, why);
      }
    }
  }

  /** Under Start: a button that puts the restored persona, options and tools into the editor. */
  #offerAdopt(state: JsonObject): void {
    const host = this.#host;
    const result = byId("start-result");
    result.append(
      h("button", {
        type: "button",
        id: "adopt-state",
        class: "link",
        text: "Put the restored persona, options and tools into the editor",
        on: {
          click: (event) => {
            // (The status line then says the NPC runs as the editor has it.)
            host.editor().adoptState(state);
            (event.target as HTMLElement).remove();
            // The focus went with the button: "Undo load" (shown now) takes it back the other way.
            if (focusLost()) byId("undo-load").focus();
          },
        },
      }),
    );
  }
}
