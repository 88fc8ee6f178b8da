/**
 * Start NPC: (re)starts the NPC from the editor's persona, with a fresh world and a fresh conversation. The NPC
 * that ran is stopped first; when the bridge refuses the new one, it is put back as it was.
 * @module
 */
import { isJsonObject } from "../../../protocol/json.ts";
import { worldIdFor } from "./engine_export.ts";
import type { NpcPage } from "./npc_page.ts";
import type { WorldParts } from "./running.ts";
import type { Stopped } from "./state_files.ts";
import { errorText } from "./values.ts";

/**
 * Starts (or restarts) the NPC from the editor: a fresh world, a fresh conversation. Unless `force`, a persona
 * with problems the page found is not started (the result under Start says to fix them, or start anyway).
 *
 * @example
 * ```ts ignore
 * await startNpc(page, { force: false });
 * ```
 */
export function startNpc(page: NpcPage, { force }: { force: boolean }): Promise<void> {
  const editor = page.editor;
  if (!editor.canStart && !force) {
    editor.showResult({
      error: "Fix the problems listed above first (or start anyway to see what the bridge says).",
      force: true,
    });
    return Promise.resolve();
  }
  // Forced, the bridge sees what the page found wrong, except a script it cannot send at all: without one the
  // NPC would run on the bridge's model while the page says it runs on the script.
  const unsendable = editor.unsendableScript();
  if (unsendable !== null) {
    editor.showResult({
      error:
        `Start anyway cannot send the page's script: ${unsendable} Fix it in the Model tab, or choose the ` +
        "bridge's model there.",
    });
    return Promise.resolve();
  }
  editor.commitRenames();
  return page.changes.run("Starting the NPC", () => start(page));
}

async function start(page: NpcPage): Promise<void> {
  const editor = page.editor;
  let worldParts: WorldParts | null = null;
  /** The NPC that ran (its name, and its state kept), once it was stopped for this start. */
  let stopped: Stopped & { name: string | null } = { name: null, cancelled: null, kept: null };
  try {
    await page.changes.connected("starting the NPC");
    page.link.require();
    const before = page.running?.name ?? null;
    stopped = { ...await page.putBack.teardown(), name: before };
    const cancelled = stopped.cancelled;
    const value = editor.doc.value;
    const tools = editor.toolDefinitions();
    page.setup.registerTools(tools);
    if (isJsonObject(value.world)) {
      worldParts = await page.setup.openWorld(worldIdFor(value.npc), value.world);
    } else page.state.world.show(null, null);
    const params = editor.npcParams(worldParts?.world.id);
    const settings = editor.settingsKey();
    const connection = page.link.require();
    const result = await connection.request("npc/create", params as never);
    const name = page.setup.nowRunning(value, {
      connection,
      created: result,
      worldParts,
      tools,
      settings,
      model: params.model,
      label: "start",
    });
    page.conversation.started(`${name} (${result.npc})`, editor.modelLabel(), true);
    page.putBack.noteCancelled(cancelled, "to start the NPC again");
    page.conversation.note(`Started ${name}: tools ${result.tools.join(", ") || "none"}.`);
    const unfit = page.setup.unfitScript(value, { name, model: params.model });
    editor.showResult({
      warnings: result.warnings,
      pageWarnings: unfit === null ? [] : [unfit],
      note: `Started ${name} (${result.npc}).`,
    });
    await page.files.refresh();
  } catch (error) {
    await worldParts?.world.delete().catch(() => {});
    if (!page.running) page.state.world.show(null, null);
    editor.showResult({ error: errorText(error) });
    // (When the bridge went away meanwhile, the page says so and offers the NPC back once connected.)
    if (!page.running && stopped.name !== null && page.link.state === "open") {
      const { name } = stopped;
      await page.putBack.refused({ ...stopped, name }, { doing: "the new start", error: errorText(error) });
    }
  }
}
