/**
 * An NPC's changing state as the model learns it: late, in the newest prompt, and only what changed.
 *
 * A model reuses its prompt cache only up to the first changed token. So an NPC's instructions (persona,
 * rules, tool definitions) stay byte-identical while the persona and options stay, and everything that
 * changes during a conversation enters the turn's prompt instead, ahead of the player's line:
 *
 * ```text
 * Memory:
 * - Your attitude toward the player is friendly (30 on a scale from -100 to 100).
 * - You also remember: The player's name is Aria.
 * - The player has earned your trust; you may reveal your secret if they ask. Your secret: He deserted.
 * Game state:
 * player.gold: 12
 * Situation: The player just paid.
 * Player: Hello again.
 * ```
 *
 * Each line appears only when it differs from what the history the model still sees already says (the
 * first turn, or the first after the history lost entries at its start, carries the full state). The prompt
 * is stored in the history as sent, so later turns repeat it byte for byte.
 * @module
 */
import type { ConversationEntry } from "../../protocol/transcript.ts";
import { attitude, factKey } from "./npc_memory.ts";
import { listSentence } from "./prose.ts";

/** What the model should know now. */
export interface NpcStateView {
  /** The relationship, -100…100. */
  relationship: number;
  /** Tell the attitude even at 0 (the NPC can change it with `change_relationship`). */
  showNeutral: boolean;
  /** Remembered facts, oldest first. */
  facts: readonly string[];
  /** The summary of earlier conversations, or null (also while the summarized turns are still shown). */
  summary: string | null;
  /** The secrets' sentence when the player may now hear them (threshold reached), else null. */
  secret: string | null;
  /** `path: value` lines of the world context paths. */
  world: readonly string[];
}

/** What the history the model sees says about the state. */
interface Shown {
  relationship: number | null;
  facts: readonly string[];
  summary: string | null;
  secret: string | null;
  /** World lines by path. */
  world: ReadonlyMap<string, string>;
}

const NOTHING_SHOWN: Shown = { relationship: null, facts: [], summary: null, secret: null, world: new Map() };

/** The lines a turn's prompt carries, and what the model knows once the turn is committed. */
export interface StateLines {
  /** Lines of the `Memory:` block (empty: no block). */
  memory: string[];
  /** Lines of the `Game state:` block (empty: no block). */
  world: string[];
  /** Pass to {@link NpcContext.delivered} when the turn committed. */
  next: Shown;
}

/** The path of a world summary line (`path: value`), or the whole line when it has none. */
function worldKey(line: string): string {
  const colon = line.indexOf(": ");
  return colon < 0 ? line : line.slice(0, colon);
}

function relationshipLine(value: number): string {
  return `- Your attitude toward the player is ${attitude(value)} (${value} on a scale from -100 to 100).`;
}

function factLines(shown: readonly string[], facts: readonly string[]): string[] {
  const known = new Set(shown.map(factKey));
  const current = new Set(facts.map(factKey));
  const added = facts.filter((f) => !known.has(factKey(f)));
  const removed = shown.some((f) => !current.has(factKey(f)));
  if (!removed && added.length === 0) return [];
  if (!removed && shown.length > 0) return [`- You also remember: ${listSentence(added)}`];
  const list = listSentence(facts);
  return [
    list === "" ? "- You no longer remember any facts about the player." : `- Things you remember: ${list}`,
  ];
}

function worldLines(shown: ReadonlyMap<string, string>, lines: readonly string[]): {
  lines: string[];
  next: Map<string, string>;
} {
  const next = new Map<string, string>();
  for (const line of lines) next.set(worldKey(line), line);
  const out = lines.filter((line) => shown.get(worldKey(line)) !== line);
  for (const key of shown.keys()) if (!next.has(key)) out.push(`${key}: (no longer set)`);
  return { lines: out, next };
}

/** What the model has been told about an NPC's state, and what to tell it next. */
export class NpcContext {
  #shown: Shown = NOTHING_SHOWN;
  /** The first entry the model saw when it was last told; a history that starts elsewhere lost entries. */
  #anchor: ConversationEntry | undefined = undefined;

  /**
   * The lines for the next prompt: what differs between `view` and what the visible history says.
   * `entries` is the committed history, `hidden` how many of its first entries the model's latest step
   * did not see; when the visible history no longer starts where it did, everything is told again.
   */
  compose(view: NpcStateView, entries: readonly ConversationEntry[], hidden: number): StateLines {
    if (entries[hidden] !== this.#anchor) {
      this.#shown = NOTHING_SHOWN;
      this.#anchor = entries[hidden];
    }
    const shown = this.#shown;
    const memory: string[] = [];
    // 0 is worth a line when the NPC can change it, or to correct an attitude the model was told.
    const worthTelling = view.relationship !== 0 || view.showNeutral || shown.relationship !== null;
    if (worthTelling && view.relationship !== shown.relationship) {
      memory.push(relationshipLine(view.relationship));
    }
    memory.push(...factLines(shown.facts, view.facts));
    if (view.summary !== null && view.summary !== shown.summary) {
      memory.push(`- Your earlier conversations with the player: ${view.summary}`);
    }
    if (view.secret !== shown.secret) {
      memory.push(
        view.secret !== null
          ? `- The player has earned your trust; you may reveal your secret if they ask. ${view.secret}`
          : "- The player no longer has your trust: keep your secret to yourself.",
      );
    }
    const world = worldLines(shown.world, view.world);
    return {
      memory,
      world: world.lines,
      next: {
        relationship: worthTelling ? view.relationship : shown.relationship,
        facts: [...view.facts],
        summary: view.summary ?? shown.summary,
        secret: view.secret,
        world: world.next,
      },
    };
  }

  /** Records that a committed turn carried `lines` (the model now knows `lines.next`). */
  delivered(lines: StateLines, entries: readonly ConversationEntry[], hidden: number): void {
    this.#shown = lines.next;
    this.#anchor = entries[hidden];
  }

  /** Forgets what was told (the next prompt carries the full state). */
  forget(): void {
    this.#shown = NOTHING_SHOWN;
    this.#anchor = undefined;
  }
}
