/// <reference lib="dom" />
/**
 * A bark in the conversation: its entry (who barks, the situation, how long the model has been at it, then the
 * line and how long it took, or the error) and the `npc/bark` request that fills it.
 * @module
 */
import type { Npc } from "../../../client/npc.ts";
import type { BridgeError } from "../../../protocol/errors.ts";
import { h } from "./dom.ts";
import { describeError, ms, thinkingFor } from "./turn_format.ts";

/** What {@link runBark} needs from the conversation. */
export interface BarkHost {
  /** The NPC's display name (now: it may be edited while the model works). */
  npcName(): string;
  /** The situation to bark about ("": none). */
  situation: string;
  /** What to add to the bark's line (e.g. it played a script step written for a turn), or null. */
  hint(line: string): string | null;
  /** What to add to a failed bark (e.g. the bridge's model cannot answer: the way round it), or null. */
  failureHint(error: BridgeError): string | null;
  /** Puts the entry in the conversation, in view. */
  show(entry: HTMLElement): void;
  /** Says `text` in the conversation's live region. */
  say(text: string): void;
  /** The bark ended (its line or its error is shown): keeps it in view. */
  ended(): void;
}

/**
 * Shows a bark's entry and asks `npc` for the line; settles once the entry shows the line or the error.
 *
 * @example
 * ```ts ignore
 * await runBark(npc, { npcName: () => "Mira", situation: "", hint: () => null, failureHint: () => null, show, say, ended });
 * ```
 */
export async function runBark(npc: Pick<Npc, "bark">, host: BarkHost): Promise<void> {
  const { situation } = host;
  const entry = h("li", { class: "bark" }, h("span", { class: "who", text: `${host.npcName()} (bark)` }));
  // (Empty until the line comes, as a turn's: the line under it says the model is thinking.)
  const text = h("p", { class: "line streaming", dir: "auto" });
  entry.append(text);
  if (situation) entry.append(h("p", { class: "context", text: `Situation: ${situation}` }));
  // As a turn's bubble: how long the model has been at it (a local model can take a while before a bark).
  const thinkingSince = Date.now();
  const progress = h("p", { class: "progress hint", text: thinkingFor(thinkingSince) });
  text.after(progress);
  const ticking = setInterval(() => progress.textContent = thinkingFor(thinkingSince), 1000);
  host.show(entry);
  const started = performance.now();
  try {
    const line = await npc.bark(situation === "" ? undefined : situation);
    text.textContent = line;
    entry.append(h("p", { class: "meta", text: `done in ${ms(performance.now() - started)}` }));
    const hint = host.hint(line);
    if (hint !== null) entry.append(h("p", { class: "hint", text: hint }));
    host.say(`${host.npcName()} barks: ${line}${hint === null ? "" : ` ${hint}`}`);
  } catch (error) {
    const e = describeError(error);
    text.textContent = "";
    entry.classList.add("failed");
    entry.append(h("p", { class: "error", text: `${e.dataCode || e.code}: ${e.message}` }));
    const hint = host.failureHint(e);
    if (hint !== null) entry.append(h("p", { class: "hint", text: hint }));
    host.say(`The bark failed: ${e.message}${hint === null ? "" : ` ${hint}`}`);
  } finally {
    clearInterval(ticking);
    progress.remove();
    text.classList.remove("streaming");
    host.ended();
  }
}
