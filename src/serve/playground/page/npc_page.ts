/**
 * The parts of the page that starting, applying, stopping and putting back the NPC work with (the playground
 * page itself, `main.ts`, is one).
 * @module
 */
import type { Conversation } from "./conversation.ts";
import type { Editor } from "./editor.ts";
import type { Link } from "./link.ts";
import type { NpcChanges } from "./npc_changes.ts";
import type { NpcPutBack } from "./npc_put_back.ts";
import type { NpcSetup } from "./npc_setup.ts";
import type { Running } from "./running.ts";
import type { StateFiles } from "./state_files.ts";
import type { StatePanel } from "./state_panel.ts";

/** The page as Start, Apply and putting the NPC back see it. */
export interface NpcPage {
  readonly link: Link;
  readonly editor: Editor;
  readonly conversation: Conversation;
  readonly state: StatePanel;
  /** Saving and restoring the NPC's state (and reading its memory after a change). */
  readonly files: StateFiles;
  /** The start, apply or restore running (one at a time). */
  readonly changes: NpcChanges;
  /** Setting up an NPC the bridge creates (its tools, its world, the record of it running). */
  readonly setup: NpcSetup;
  /** Stopping the NPC for a start or a restore, and putting it back when the bridge refuses that. */
  readonly putBack: NpcPutBack;
  /** What runs on the bridge now, or null (set: the editor's status line says which NPC runs). */
  running: Running | null;
  /** The last state seen, as the page names it ("" when none is kept). */
  lastLabel(): string;
}
