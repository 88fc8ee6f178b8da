/// <reference lib="dom" />
/**
 * A turn's end in its entry: the reply shown whole (its line and emotion, the badges, the player options to
 * pick, when things came and the tokens used, the bridge's warnings), or what became of a turn that did not
 * reply (cancelled by the designer, cancelled by the bridge, or failed: the badge, the error and its hint).
 * What the conversation itself keeps across turns (the header's emotion, the player's line given back, a
 * reply cut off) stays the conversation's.
 * @module
 */
import type { NpcReply } from "../../../client/game_types.ts";
import type { BridgeError } from "../../../protocol/errors.ts";
import { h } from "./dom.ts";
import { withoutBridgeHint } from "./script_hint.ts";
import { ms } from "./turn_format.ts";
import type { TurnEntry } from "./turn_view.ts";

/** Timings of a turn, in ms after it was sent. */
export interface TurnTimings {
  /** The emotion arrived. */
  emotion?: number;
  /** The first words arrived. */
  firstLine?: number;
  /** The response arrived. */
  total?: number;
}

/** A finished (or failed) turn. */
export interface TurnRecord {
  /** 1-based. */
  index: number;
  /** What the player said. */
  line: string;
  /** The reply, when it succeeded. */
  reply?: NpcReply;
  /** The failure, when it failed. */
  error?: BridgeError;
  /** When things arrived. */
  timings: TurnTimings;
}

/** What {@link showReply} shows and needs. */
export interface ReplyShown {
  /** The NPC's reply. */
  reply: NpcReply;
  /** When things arrived (the meta line says them). */
  timings: TurnTimings;
  /** The NPC's display name (the announcement and the "ended the conversation" note name it). */
  npcName: string;
  /** The designer picked one of the player options. */
  pick(option: string): void;
}

/**
 * Fills the turn's `entry` with its `reply`. Returns what the live region says of it and, when the reply ends
 * the conversation, the note that goes after the turn.
 *
 * @example
 * ```ts ignore
 * const { announcement, endNote } = showReply(entry, { reply, timings, npcName: "Mira", pick: say });
 * ```
 */
export function showReply(
  entry: TurnEntry,
  { reply, timings: t, npcName, pick }: ReplyShown,
): { announcement: string; endNote: HTMLElement | null } {
  entry.line.textContent = reply.line;
  entry.emotion.dataset.emotion = reply.emotion;
  entry.emotion.textContent = reply.emotion;
  const badges: HTMLElement[] = [];
  if (reply.endsConversation) {
    badges.push(h("span", { class: "badge ends", text: "ends the conversation" }));
  }
  if (reply.isFallback) badges.push(h("span", { class: "badge fallback", text: "fallback line" }));
  badges.push(h("span", { class: "badge relationship", text: `relationship ${reply.relationship}` }));
  entry.badges.replaceChildren(...badges);
  entry.options.replaceChildren(
    ...reply.playerOptions.map((option) =>
      h("button", {
        type: "button",
        class: "option",
        dir: "auto",
        text: option,
        on: { click: () => pick(option) },
      })
    ),
  );
  const u = reply.usage;
  entry.meta.textContent =
    `emotion after ${ms(t.emotion)} · first words ${ms(t.firstLine)} · done in ${ms(t.total)} · ` +
    `tokens: ${u.inputTokens} in (${u.cachedInputTokens} cached), ${u.outputTokens} out`;
  if (reply.warnings && reply.warnings.length > 0) {
    entry.meta.after(
      h("ul", { class: "messages" }, ...reply.warnings.map((w) => h("li", { class: "warning", text: w }))),
    );
  }
  const ended = `${npcName} ended the conversation.`;
  const announcement = [
    `${npcName} (${reply.emotion}): ${reply.line}`,
    reply.endsConversation ? ended : "",
    ...(reply.warnings ?? []).map((w) => `Warning: ${w}`),
  ].filter(Boolean).join(" ");
  // (The note is part of the reply: it is followed, not scrolled to, as the reply is.)
  const endNote = reply.endsConversation ? h("li", { class: "note info", text: ended }) : null;
  return { announcement, endNote };
}

/** What became of a turn that did not reply. */
export interface TurnFailure {
  /** Cancelled by the designer (Cancel reply, a start or a restore): the turn left no trace. */
  cancelled: boolean;
  /** Cancelled by the bridge (it stopped, or the NPC was closed): a failure, its line comes back. */
  byBridge: boolean;
}

/** A turn that did not reply: its error, what became of it, and why it failed and what to do (null: none). */
export interface TurnEnded {
  /** The error the turn ended with. */
  error: BridgeError;
  /** Cancelled by the designer or by the bridge ({@link failureOf}). */
  failure: TurnFailure;
  /** Why it failed and what to do; null: no hint (and always null when cancelled by the designer). */
  hint: string | null;
}

/**
 * Says what became of a turn that failed with `error`: cancelled by the designer when `aborted` (the turn's
 * own signal) is, else by the bridge when the error is still `cancelled`, else failed.
 *
 * @example
 * ```ts ignore
 * failureOf(BridgeError.turnCancelled(), true); // { cancelled: true, byBridge: false }
 * ```
 */
export function failureOf(error: BridgeError, aborted: boolean): TurnFailure {
  const cancelled = error.dataCode === "cancelled" && aborted;
  return { cancelled, byBridge: error.dataCode === "cancelled" && !cancelled };
}

/**
 * Shows in the turn's `entry` what became of it (`failure`): its badge in place of the emotion (none is
 * coming; one that came before the failure goes, as the turn left no trace), and the error under it with
 * `hint` (why it failed and what to do; null: none).
 *
 * @example
 * ```ts ignore
 * showFailure(entry, { error, failure: failureOf(error, aborted), hint: null });
 * ```
 */
export function showFailure(entry: TurnEntry, ended: TurnEnded): void {
  const { error, failure: { cancelled, byBridge }, hint } = ended;
  entry.root.classList.add(cancelled ? "cancelled" : "failed");
  entry.emotion.remove();
  entry.badges.replaceChildren(
    h("span", {
      class: `badge ${cancelled ? "cancelled" : "error"}`,
      text: cancelled ? "cancelled" : "failed",
    }),
  );
  entry.meta.replaceChildren(
    h("span", {
      class: "error",
      text: cancelled
        ? "The reply was cancelled; the turn left no trace in the NPC's history."
        : `${error.dataCode || error.code}: ${
          byBridge ? "The bridge cancelled the reply (it stopped, or the NPC was closed): " : ""
        }${hint === null ? error.message : withoutBridgeHint(error.message)}`,
    }),
  );
  if (hint !== null) entry.meta.append(h("span", { class: "hint", text: hint }));
}

/**
 * What the live region says of a turn that did not reply (`cancelled` by the designer, or failed with `error`
 * and `hint`).
 *
 * @example
 * ```ts ignore
 * failureAnnouncement({ error, failure: { cancelled: false, byBridge: false }, hint: null }); // "The turn failed: Too many requests."
 * ```
 */
export function failureAnnouncement({ error, failure, hint }: TurnEnded): string {
  return failure.cancelled
    ? "Reply cancelled."
    : `The turn failed: ${error.message}${hint === null ? "" : ` ${hint}`}`;
}
