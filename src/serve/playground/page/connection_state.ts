/// <reference lib="dom" />
/**
 * What the connection to the bridge going open, connecting, waiting (for the bridge's model) or closed means
 * to each panel: the top bar's banner, the Model tab, the tools' check with the bridge, and, once it closed,
 * the NPC, its world and its memory that went with it (and the way back to it, offered once connected again).
 * @module
 */
import type { ModelStatus } from "./model_status.ts";
import type { NpcPage } from "./npc_page.ts";
import type { Saved } from "./storage.ts";
import type { ToolValidation } from "./tool_validation.ts";
import type { ConnectionBar } from "./top_bar.ts";

/** The parts of the page a change of the connection's state shows in. */
export interface ConnectionStateHost {
  page: NpcPage;
  /** The top bar's connection banner. */
  bar: ConnectionBar;
  /** The bridge's model, in the Model tab and the top bar. */
  model: ModelStatus;
  /** The bridge's check of the editor's tools (again on each new connection). */
  tools: ToolValidation;
  saved: Saved;
  /** The NPC went with the connection that closed (until the next start or restore). */
  lost: () => void;
}

/**
 * Shows the connection's new `state` (`open`, `connecting`, `waiting` or `closed`, with the `detail` of why it
 * closed) in each panel.
 *
 * @example
 * ```ts ignore
 * showConnectionState(host, { state: "closed", detail: "The bridge stopped." });
 * ```
 */
export function showConnectionState(
  { page, bar, model, tools, saved, lost }: ConnectionStateHost,
  { state, detail }: { state: string; detail?: string },
): void {
  if (state === "open") {
    bar.open();
    void model.connected();
    tools.reset();
    void tools.validate();
    if (page.link.generation > 1) {
      page.conversation.reconnected();
      page.state.saveMessage("");
      // The way back is offered where the designer looks, as after a reload (not only in State → Save).
      const last = page.lastLabel();
      if (last === "") {
        page.conversation.note("Connected again. The NPC lived in the old connection: start it again.");
      } else {
        page.conversation.offer(
          `Connected again. The NPC (${last}) lived in the old connection: start it again, or restore it.`,
          "Restore it",
          () => void page.files.restoreLast(),
        );
      }
    }
    return;
  }
  if (state === "connecting" || state === "waiting") {
    if (state === "connecting") bar.connecting();
    else bar.waiting(model.info?.model.name);
    model.show();
    return;
  }
  const had = page.running !== null;
  const cut = had ? page.conversation.cutOff() : null;
  const world = page.running?.world?.id ?? null;
  page.running = null;
  page.state.world.show(
    null,
    null,
    world === null
      ? undefined
      : `The world '${world}' went with the bridge: start the NPC again, or restore ` +
        "the last state seen (its world comes back with it).",
  );
  page.state.showMemory(null);
  bar.closed(detail, cut);
  // The model's availability went with the connection.
  model.show();
  const why = (detail ?? "the connection closed").replace(/[.\s]+$/, "");
  // The banner (an alert) says it to a screen reader; the conversation's note is for the eye.
  if (had) {
    lost();
    // "Started Mira (mira)." under Start no longer holds.
    page.editor.showResult({});
    page.conversation.stopped("the bridge went away");
    if (page.link.serverStopped) page.conversation.serverStopped();
    page.conversation.note(`The bridge went away: ${why}.`, "error", true);
  }
  if (saved.lastState !== null) page.state.offerLast(page.lastLabel());
  bar.retryLater();
}
