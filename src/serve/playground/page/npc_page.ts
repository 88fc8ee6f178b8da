/**
 * The parts of the page that starting, applying, stopping and putting back the NPC work with (the playground
 * page itself, `main.ts`, is one).
 * @module
 */
import type { NpcChanges } from "./npc_changes.ts";
import type { NpcPutBack, PutBackPage } from "./npc_put_back.ts";

/** The page as Start and Apply see it: what putting the NPC back sees, with the changes running and that. */
export interface NpcPage extends PutBackPage {
  /** The start, apply or restore running (one at a time). */
  readonly changes: NpcChanges;
  /** Stopping the NPC for a start or a restore, and putting it back when the bridge refuses that. */
  readonly putBack: NpcPutBack;
}
