/**
 * Apply, keep conversation: rebuilds the running NPC with the editor's persona, options and tools, keeping its
 * conversation, memory and world. When the bridge refuses the edit, the NPC runs on as it was (the client puts
 * it back) and the editor keeps the edits.
 * @module
 */
import type { NpcState } from "../../../client/game_types.ts";
import type { Npc } from "../../../client/npc.ts";
import { isJsonObject, type JsonObject } from "../../../protocol/json.ts";
import type { NpcPage } from "./npc_page.ts";
import { worldSeedOf } from "./npc_setup.ts";
import { type Running, toolSettings } from "./running.ts";
import { asEditorNames } from "./bridge_paths.ts";
import { errorText } from "./values.ts";

/**
 * Rebuilds the running NPC with the editor's persona, options and tools; conversation and memory stay.
 *
 * @example
 * ```ts ignore
 * await applyEditor(page);
 * ```
 */
export function applyEditor(page: NpcPage): Promise<void> {
  page.editor.commitRenames();
  return page.changes.run("Applying the editor to the NPC", () => apply(page));
}

async function apply(page: NpcPage): Promise<void> {
  const r = await runningToApply(page);
  if (r === null) return;
  try {
    page.link.require();
    const value = page.editor.doc.value;
    const restored = await restoreWithEditor(page, { r, value });
    takeEdits(page, { r, value, ...restored });
    showApplied(page, { r, value, npc: restored.npc });
    await page.files.refresh();
  } catch (error) {
    showRefused(page, { r, error });
  }
}

/**
 * The NPC Apply rebuilds, once a reply still running has ended; null (the editor says why) when no NPC runs
 * or the editor has problems to fix first.
 */
async function runningToApply(page: NpcPage): Promise<Running | null> {
  const r = page.running;
  const editor = page.editor;
  if (!r) {
    editor.showResult({ error: "No NPC is running: use Start NPC." });
    return null;
  }
  if (!editor.canStart) {
    editor.showResult({ error: "Fix the problems listed above first." });
    return null;
  }
  if (page.conversation.busy) {
    // Apply keeps the conversation, so a reply still running (a call waiting for its answer) ends first.
    // (Not by queueing npc/state behind it: cancelling the reply would cancel that too.)
    editor.showResult({
      note: "Waiting for the running reply to end (answer or cancel it), then applying…",
    });
    await page.conversation.idle();
  }
  return r;
}

/** What the bridge restored: the NPC with the editor's persona, options and tools, and what it took. */
interface Restored {
  npc: Npc;
  /** The state sent (the running NPC's, with the editor's persona, options and tools). */
  next: NpcState;
  tools: JsonObject[];
  settings: string;
}

/**
 * Restores the running NPC's state (conversation, memory) with the editor's persona, options and tools, on
 * the editor's model and the live world (the client puts the NPC back when the bridge refuses it).
 */
async function restoreWithEditor(
  page: NpcPage,
  { r, value }: { r: Running; value: JsonObject },
): Promise<Restored> {
  const editor = page.editor;
  const state = await r.npc.state();
  const tools = editor.toolDefinitions();
  const next: NpcState = {
    ...state,
    persona: (isJsonObject(value.persona) ? value.persona : { name: "" }) as never,
    options: (isJsonObject(value.options) ? value.options : {}) as never,
    tools: tools as never,
  };
  page.setup.registerTools(tools);
  const settings = editor.settingsKey();
  const npc = await r.npc.restore(next, {
    model: editor.model() as never,
    world: r.world?.id ?? null,
  });
  return { npc, tools, settings, next };
}

/** The page's record of the running NPC takes the restored NPC and the editor's settings; the conversation says so. */
function takeEdits(
  page: NpcPage,
  { r, value, npc, tools, settings, next }: Restored & { r: Running; value: JsonObject },
): void {
  const editor = page.editor;
  r.npc = npc;
  r.name = typeof next.persona.name === "string" ? next.persona.name : r.name;
  r.settings = settings;
  r.model = editor.model();
  editor.setRunning(r.name, settings);
  Object.assign(r, toolSettings(value.options, tools), {
    scripted: page.setup.scriptedRun(r.name, value.options),
  });
  page.conversation.note(
    `Applied the editor's persona, options and tools to ${r.name}; the conversation goes on.${
      r.scripted === null ? "" : " The script starts again from its first step (the NPC gets a new model)."
    }`,
  );
  // The tools the NPC calls now are the editor's (not before: a refused Apply leaves the old ones).
  page.setup.tookTools(tools);
}

/** The editor says Apply is done, with what the bridge ignored and what the page noticed. */
function showApplied(page: NpcPage, { r, value, npc }: { r: Running; value: JsonObject; npc: Npc }): void {
  const editor = page.editor;
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
  const unfit = page.setup.unfitScript(value, { name: r.name, model: editor.model() });
  if (unfit !== null) pageWarnings.push(unfit);
  editor.showResult({ warnings, pageWarnings, note: `Applied to ${r.name}.` });
}

/** The bridge refused Apply (or a step after it failed): the NPC runs on as before, and the page says so. */
function showRefused(page: NpcPage, { r, error }: { r: Running; error: unknown }): void {
  // The client put the NPC back as it was (its state, world, tools and model); the bridge names the key it
  // refused under 'state.' (the state Apply sent), where the editor has it as 'options.x'. The NPC calls
  // its tools as before: the renames since it took them, and the answers kept for them, stay.
  const refused = asEditorNames(errorText(error));
  const again = r.scripted === null
    ? ""
    : " Its script starts again from its first step (the NPC gets a new model).";
  if (page.running === r) {
    page.conversation.note(
      `The bridge refused the apply (see under Start): ${r.name} runs on as before, with this ` +
        `conversation, its memory and its world.${again}`,
      "warning",
    );
  }
  page.editor.showResult({
    error: refused,
    afterError: `${r.name} runs on as before; the editor keeps your edits.`,
  });
}
