/**
 * Stopping the running NPC for a start or a restore, and putting it back as it was when the bridge refuses
 * what replaces it: its state and its world's are read before it is deleted, and restored (with its tools and
 * on the model it ran on) after a refusal; when that fails too, the page says it no longer runs and offers it
 * back as last seen.
 * @module
 */
import { Npc } from "../../../client/npc.ts";
import { isJsonObject, type JsonObject } from "../../../protocol/json.ts";
import type { Conversation, TurnRecord } from "./conversation.ts";
import type { Editor } from "./editor.ts";
import type { Link } from "./link.ts";
import type { NpcSetup } from "./npc_setup.ts";
import type { Running, WorldParts } from "./running.ts";
import type { KeptNpc, StateFiles, Stopped } from "./state_files.ts";
import type { StatePanel } from "./state_panel.ts";

/** The page as stopping and putting back the NPC sees it (`npc_page.ts`'s `NpcPage` is one). */
export interface PutBackPage {
  readonly link: Link;
  readonly editor: Editor;
  readonly conversation: Conversation;
  readonly state: StatePanel;
  /** Saving and restoring the NPC's state (and reading its memory after a change). */
  readonly files: StateFiles;
  /** Setting up an NPC the bridge creates (its tools, its world, the record of it running). */
  readonly setup: NpcSetup;
  /** What runs on the bridge now, or null (set: the editor's status line says which NPC runs). */
  running: Running | null;
  /** The last state seen, as the page names it ("" when none is kept). */
  lastLabel(): string;
}

/**
 * The NPC stopped for a start or a restore, and put back when that is refused.
 *
 * @example
 * ```ts ignore
 * const putBack = new NpcPutBack(page);
 * const stopped = await putBack.teardown(); // before the new NPC is created
 * // … the bridge refuses it:
 * await putBack.refused({ ...stopped, name: "Mira" }, { doing: "the new start", error: "…" });
 * ```
 */
export class NpcPutBack {
  readonly #page: PutBackPage;

  constructor(page: PutBackPage) {
    this.#page = page;
  }

  /**
   * Deletes what runs now (ignoring errors: it may be gone with an old connection), after cancelling a reply
   * still running (a start or a restore replaces the NPC, as Start always did) and reading its state and its
   * world's (to put it back as it was when the bridge refuses what replaces it: {@link NpcPutBack.refused}).
   * Returns the cancelled turn, which the caller notes in the new conversation, and the NPC kept.
   */
  async teardown(): Promise<Stopped> {
    const page = this.#page;
    const r = page.running;
    page.running = null;
    if (!r || r.generation !== page.link.generation) return { cancelled: null, kept: null };
    const cancelled = await page.conversation.cancelRunning();
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
   * A start or a restore (`why.doing`) the bridge refused (`why.error`; the fields of `why.marks` are marked with
   * it, by default those it names) after it stopped the NPC that ran: that NPC is put back as it was (its state,
   * world, tools and model as they were when it stopped), and the conversation, the relationship's history and
   * the turns stay as they are; the result under Start says so.
   * When it cannot be put back, the page says it no longer runs and offers it back as last seen.
   */
  async refused(
    stopped: Stopped & { name: string },
    why: { doing: string; error: string; marks?: readonly string[] },
  ): Promise<void> {
    const page = this.#page;
    const { kept, name } = stopped;
    if (kept === null || !(await this.#putBack(kept))) {
      this.#stoppedInVain(name, why.doing);
      return;
    }
    const again = kept.running.scripted === null
      ? ""
      : " Its script starts again from its first step (the NPC gets a new model).";
    page.conversation.note(
      `The bridge refused ${why.doing} (see under Start): ${name} runs on as before, with this conversation, ` +
        `its memory and its world.${again}`,
      "warning",
    );
    page.editor.showResult({ error: why.error, marks: why.marks, afterError: `${name} runs on as before.` });
    await page.files.refresh();
  }

  /** Puts the NPC kept back on the bridge as it was; false when the bridge refuses that too. */
  async #putBack(kept: KeptNpc): Promise<boolean> {
    const page = this.#page;
    let worldParts: WorldParts | null = null;
    try {
      const tools = Array.isArray(kept.state.tools) ? kept.state.tools.filter(isJsonObject) : [];
      page.setup.registerTools(tools);
      if (kept.world) worldParts = await page.setup.openWorld(kept.world.world, kept.world.state);
      const connection = page.link.require();
      const model = kept.running.model;
      const created = await connection.request("npc/restore", {
        state: kept.state as never,
        world: worldParts?.world.id ?? null,
        ...(model !== undefined ? { model: model as never } : {}),
      });
      page.running = {
        ...kept.running,
        npc: new Npc(connection, created.npc, {
          tools: created.tools,
          warnings: created.warnings,
          model: model as never,
        }),
        world: worldParts?.world ?? null,
        subscription: worldParts?.subscription ?? null,
        generation: page.link.generation,
      };
      // (Its tools are the ones it had: their renames in the editor since, and the answers kept, still hold.)
      return true;
    } catch {
      await worldParts?.world.delete().catch(() => {});
      return false;
    }
  }

  /**
   * The NPC `name` was stopped for `doing` (a start, a restore), which then failed: the conversation's header
   * says it no longer runs, and the conversation offers it back as last seen (the state kept after its last
   * turn), or says to start it again when no state was kept.
   */
  #stoppedInVain(name: string, doing: string): void {
    const page = this.#page;
    page.conversation.stopped(`stopped for ${doing}`);
    page.state.showMemory(null);
    const last = page.lastLabel();
    if (last === "") {
      page.conversation.note(`${name} was stopped for ${doing}, which failed: start it again.`, "warning");
      return;
    }
    page.state.offerLast(last);
    page.conversation.offer(
      `${name} was stopped for ${doing}, which failed: start it again, or restore it as last seen (${last}).`,
      "Restore it",
      () => void page.files.restoreLast(),
    );
  }

  /** The note of a reply cancelled by a start or a restore (`why`: "to start the NPC again"). */
  noteCancelled(turn: TurnRecord | null, why: string): void {
    if (turn === null) return;
    this.#page.conversation.note(
      `The reply to “${turn.line}” was still running: it was cancelled ${why}.`,
      "warning",
    );
  }
}
