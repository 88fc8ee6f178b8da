/// <reference lib="dom" />
/**
 * The conversation: the player's lines (typed or picked from the NPC's player options), the NPC's replies
 * streaming in with the emotion shown the moment it arrives, the tool calls of each turn — client tools
 * answered by hand right there (JSON or text, an error, or left to time out) or automatically — cancel
 * mid-turn, barks, and each turn's usage and latency. A turn's tool calls are shown and answered by
 * tool_calls.ts; a turn's entry and the restored turns are built by turn_view.ts, and filled in at the turn's
 * end (its reply, or what became of it) by turn_end.ts; a bark's entry and request are bark.ts; the composer
 * (the player's line, the turn's context, Say, Cancel reply and the bark row) is composer.ts.
 * @module
 */
import type { ToolContext } from "../../../client/tools.ts";
import type { NpcEvent, NpcReply } from "../../../client/game_types.ts";
import type { Npc } from "../../../client/npc.ts";
import type { BridgeError } from "../../../protocol/errors.ts";
import { runBark } from "./bark.ts";
import { composer } from "./composer.ts";
import { h } from "./dom.ts";
import type { Saved, SendAs, ToolAnswer } from "./storage.ts";
import type { KeptAnswers } from "./kept_answers.ts";
import { answerByHand, cannedAnswer } from "./tool_calls.ts";
import type { HistoryEntry } from "./transcript.ts";
import { failureAnnouncement, failureOf, showFailure, showReply, type TurnRecord } from "./turn_end.ts";
import { describeError, thinkingFor } from "./turn_format.ts";
import { restoredHistory, type TurnEntry, turnEntry } from "./turn_view.ts";

export type { TurnRecord, TurnTimings } from "./turn_end.ts";

/** What the conversation needs from the page. */
export interface ConversationHost {
  /** The running NPC, or null. */
  npc(): Npc | null;
  /** What is changing the NPC right now (a start, a restore), or null. */
  pending(): string | null;
  /** The persona file's greeting (the default bark situation), or "". */
  greeting(): string;
  /** The NPC's display name. */
  npcName(): string;
  /** Seconds the bridge waits for an answer of tool `name` (null = forever). */
  toolTimeout(name: string): number | null;
  /** How tool `name` is answered. */
  answerOf(name: string): ToolAnswer;
  /** The description of tool `name` as the running NPC has it (what it gives back), or "". */
  toolDescription(name: string): string;
  /** A turn finished (succeeded or failed). */
  turnFinished(record: TurnRecord): void;
  /** The bridge is connected. */
  connected(): boolean;
  /** Something typed changed (persist it). */
  changed(): void;
  /** What to add to a failed turn's error (why it failed and what to do), or null. */
  failureHint(error: BridgeError): string | null;
  /** What to add to a failed bark, or null. */
  barkFailureHint(error: BridgeError): string | null;
  /** The designer picked how a call of `name` sends its answer: its next call starts with it. */
  sendAsPicked(name: string, as: SendAs): void;
  /** What to add to a bark's line (e.g. it played a script step written for a turn), or null. */
  barkHint(line: string): string | null;
  /** The persona's id (answers typed but not sent are kept by persona and tool). */
  persona(): string;
  /** The editor's name now of the tool the running NPC calls `name` (it may have been renamed since). */
  toolNameNow(name: string): string;
  /** Answers typed but not sent, kept for the tab (a reload keeps them). */
  kept: KeptAnswers;
}

interface LiveTurn extends TurnEntry {
  record: TurnRecord;
  abort: AbortController;
  /** The header's emotion when the turn began (null: none), shown again when the turn leaves no trace. */
  emotionBefore: string | null;
  /** Settles once the turn ended and its entry is final. */
  ended: Promise<void>;
  /** "thinking… 12 s": in the bubble while the model works with nothing to show yet (see `#progress`). */
  progress: HTMLElement;
  /** When the model began its current stretch of work (the turn began, or a call's result went back). */
  thinkingSince: number;
}

/** The conversation panel. */
export class Conversation {
  readonly #host: ConversationHost;
  readonly #saved: Saved;
  readonly #list: HTMLOListElement;
  readonly #lineInput: HTMLTextAreaElement;
  readonly #context: HTMLInputElement;
  readonly #situation: HTMLInputElement;
  readonly #send: HTMLButtonElement;
  readonly #cancel: HTMLButtonElement;
  readonly #message: HTMLElement;
  readonly #announce: HTMLElement;
  readonly #portrait: HTMLElement;
  readonly #title: HTMLElement;
  readonly #titleName: HTMLElement;
  readonly #titleModel: HTMLElement;
  #live: LiveTurn | null = null;
  /** The turn whose streamed emotion the header shows, until something else sets it. */
  #emotionOf: LiveTurn | null = null;
  /** The last reply cut off by a bridge that stopped or went away (until the next turn or start). */
  #cutOff: { line: string; back: boolean } | null = null;
  /** The last turn the bridge cancelled by itself (until the next turn): the server may be stopping. */
  #bridgeCancelled: LiveTurn | null = null;
  #turns = 0;
  /** Whether the conversation is scrolled to its bottom (else the designer scrolled up to read). */
  #pinned = true;

  /** Builds the panel in `root`: the header, the turns, and the composer (what was typed comes from `saved`). */
  constructor(root: HTMLElement, saved: Saved, host: ConversationHost) {
    this.#host = host;
    this.#saved = saved;
    // The NPC's name in bold; the model it runs on after it, smaller (one line on a 1280 px laptop; on a
    // phone the model goes on its own line under the name, cut with "…" if it must, its whole text the title).
    this.#titleName = h("span", { class: "npc-name", text: "No NPC yet" });
    this.#titleModel = h("span", { class: "npc-model" });
    this.#title = h("span", { class: "npc-title" }, this.#titleName, this.#titleModel);
    this.#portrait = h("span", {
      class: "portrait emotion",
      "data-emotion": "none",
      text: "–",
      title: "Current emotion",
    });
    this.#list = h("ol", { class: "turns", "aria-label": "Conversation" });
    this.#list.addEventListener("scroll", () => {
      const list = this.#list;
      this.#pinned = list.scrollHeight - list.scrollTop - list.clientHeight < 24;
    }, { passive: true });
    this.#announce = h("p", { class: "visually-hidden", "aria-live": "polite" });
    const parts = composer({
      saved,
      changed: () => this.#host.changed(),
      say: () => this.say(),
      cancel: () => this.cancel(),
      bark: () => void this.bark(),
      replyRunning: () => this.#live !== null,
    });
    this.#lineInput = parts.line;
    this.#context = parts.context;
    this.#situation = parts.situation;
    this.#send = parts.send;
    this.#cancel = parts.cancel;
    this.#message = parts.message;
    root.append(
      h("div", { class: "conversation-head" }, this.#portrait, this.#title),
      this.#list,
      this.#announce,
      parts.root,
    );
  }

  /** A turn is running. */
  get busy(): boolean {
    return this.#live !== null;
  }

  /**
   * The reply a bridge that went away cut off, or null: the one still running, or the last one the bridge
   * cancelled as it stopped; `back` says whether its line is (or will be) back in the player's box. The page's
   * alert banner says it, so the conversation does not announce it again.
   */
  cutOff(): { line: string; back: boolean } | null {
    if (this.#live) return { line: this.#live.record.line, back: this.#lineInput.value.trim() === "" };
    return this.#cutOff;
  }

  /**
   * Shows a line about the NPC's lifecycle (started, restored, the bridge went away); a warning or an error
   * is also said (the live region), as replies and failures are, unless `announced` says another live region
   * (e.g. the page's alert banner) already says it.
   */
  note(text: string, kind: "info" | "error" | "warning" = "info", announced = false): void {
    this.#list.append(h("li", { class: `note ${kind}`, text }));
    if (kind !== "info" && !announced) this.#say(text);
    this.#scroll();
  }

  /**
   * Shows a note that offers an action, with its button (`label`); it goes with the conversation when an NPC
   * starts or is restored (a failed action leaves it, to try again).
   */
  offer(text: string, label: string, action: () => void): void {
    const button = h("button", { type: "button", class: "small", text: label, on: { click: action } });
    const li = h("li", { class: "note info offer" }, `${text} `, button);
    this.#list.append(li);
    this.#scroll();
  }

  /**
   * A new NPC is running: the header shows its name and the model it runs on; `clear` empties the conversation.
   * The focus in the old conversation (on its Restore it, pressed) goes to the player's line, not to the page's
   * body.
   */
  started(name: string, model: string, clear: boolean): void {
    if (clear) {
      const hadFocus = this.#list.contains(document.activeElement);
      this.#list.replaceChildren();
      this.#turns = 0;
      if (hadFocus) this.#lineInput.focus();
    }
    this.#titleName.textContent = name;
    this.#setModel(model);
    this.#setEmotion(null);
    this.#message.textContent = "";
    this.#cutOff = null;
    this.#quiet();
  }

  /** The model part of the title: " · " (hidden on a phone, where the model has its own line), then `model`. */
  #setModel(model: string): void {
    this.#titleModel.replaceChildren(h("span", { class: "npc-sep", text: " · " }), model);
    this.#titleModel.title = model;
  }

  /** The NPC went with the connection: the header says it no longer runs; the message under Say goes. */
  stopped(why: string): void {
    this.#setModel(`not running (${why})`);
    this.#setEmotion(null);
  }

  /**
   * The connection closed because the server is stopping (Ctrl-C): the turn the bridge cancelled just before
   * (every turn is cancelled first) says the server stopped, in its calls' rows and under it; it was not the
   * designer's cancel, nor an NPC closed.
   */
  serverStopped(): void {
    const live = this.#bridgeCancelled;
    this.#bridgeCancelled = null;
    if (live === null) return;
    live.calls.serverStopped();
    live.meta.replaceChildren(
      h("span", { class: "error", text: "cancelled: The server stopped, and cancelled the reply with it." }),
    );
  }

  /** The connection is back: a message about the old one (e.g. "not connected") no longer holds. */
  reconnected(): void {
    this.#message.textContent = "";
  }

  /** Shows the turns of a restored conversation (from its transcript). */
  history(entries: HistoryEntry[]): void {
    if (entries.length === 0) return;
    const last = [...entries].reverse().find((e) => e.who === "npc" && e.emotion);
    if (last?.emotion) this.#setEmotion(last.emotion);
    this.#list.append(restoredHistory(entries, this.#host.npcName()));
    this.#scroll();
  }

  /**
   * Says `text` in the conversation's live region, after what it said since the designer's last turn, bark
   * or start: a screen reader reads what is added, so a note that follows a reply (e.g. the state could not
   * be read after the turn) is said after the reply instead of taking its place before it was read.
   */
  #say(text: string): void {
    this.#announce.append(h("span", { text: this.#announce.hasChildNodes() ? ` ${text}` : text }));
  }

  /** The designer did something new: what the live region said before goes (a removal is not read out). */
  #quiet(): void {
    this.#announce.replaceChildren();
  }

  #setEmotion(emotion: string | null): void {
    this.#emotionOf = null;
    this.#portrait.dataset.emotion = emotion ?? "none";
    this.#portrait.textContent = emotion ?? "–";
  }

  #scroll(): void {
    this.#list.scrollTop = this.#list.scrollHeight;
    this.#pinned = true;
  }

  /**
   * Keeps the newest part of a growing reply in view, unless the designer scrolled up to read an earlier turn:
   * then the conversation stays where they are (a new turn, a note or a restore scrolls down again).
   */
  #follow(): void {
    if (this.#pinned) this.#scroll();
  }

  #fail(text: string): void {
    this.#message.textContent = text;
  }

  /** Says the typed line (or `line`, a picked player option). */
  say(picked?: string): void {
    const line = picked ?? this.#lineInput.value;
    if (this.#live) {
      this.#fail("A reply is still running: wait for it or cancel it.");
      return;
    }
    if (!this.#host.connected()) {
      this.#fail("The bridge is not connected: use Reconnect above. Your line is kept.");
      return;
    }
    const pending = this.#host.pending();
    if (pending !== null) {
      this.#fail(`${pending}: wait a moment. Your line is kept.`);
      return;
    }
    const npc = this.#host.npc();
    if (!npc) {
      this.#fail("Start the NPC first (Start NPC, in the NPC panel). Your line is kept.");
      return;
    }
    if (line.trim() === "" && picked === undefined) {
      this.#fail("Type what the player says first.");
      return;
    }
    this.#fail("");
    if (picked === undefined) {
      this.#lineInput.value = "";
      this.#saved.line = "";
      this.#host.changed();
    } else if (this.#list.contains(document.activeElement)) {
      // Like Say, a picked option hands the focus to the player's line, where the designer goes on: left on
      // the option, it stays in an earlier turn (and the next pick would answer that turn's options again).
      this.#lineInput.focus();
    }
    void this.#talk(npc, line, this.#context.value.trim());
  }

  async #talk(npc: Npc, line: string, context: string): Promise<void> {
    const record: TurnRecord = { index: ++this.#turns, line, timings: {} };
    this.#cutOff = null;
    this.#bridgeCancelled = null;
    this.#quiet();
    let ended!: () => void;
    const live = this.#liveTurn(record, context, new Promise<void>((resolve) => ended = resolve));
    this.#list.append(live.root);
    this.#scroll();
    this.#live = live;
    this.#setBusy(true);
    this.#progress(live);
    const ticking = setInterval(() => this.#progress(live), 1000);
    const started = performance.now();
    try {
      const reply = await npc.talk(line, {
        ...(context ? { context } : {}),
        signal: live.abort.signal,
        stream: true,
        onEvent: (event) => this.#event(live, event, performance.now() - started),
      });
      record.timings.total = performance.now() - started;
      record.reply = reply;
      this.#finish(live, reply);
    } catch (error) {
      record.timings.total = performance.now() - started;
      record.error = describeError(error);
      this.#failed(live, record.error, line);
    } finally {
      clearInterval(ticking);
      live.progress.remove();
      this.#live = null;
      this.#setBusy(false);
      live.root.querySelector(".npc")?.setAttribute("aria-busy", "false");
      live.line.classList.remove("streaming");
      live.calls.closeAll();
      this.#host.turnFinished(record);
      ended();
    }
  }

  /** A turn's entry: what the player said (and the context), and the NPC's part, filled in as events come. */
  #liveTurn(record: TurnRecord, context: string, ended: Promise<void>): LiveTurn {
    const entry = turnEntry({
      index: record.index,
      line: record.line,
      context,
      npcName: this.#host.npcName(),
    });
    return {
      record,
      ...entry,
      abort: new AbortController(),
      progress: h("p", { class: "progress hint" }),
      thinkingSince: Date.now(),
      emotionBefore: this.#portrait.dataset.emotion === "none" ? null : this.#portrait.textContent,
      ended,
    };
  }

  /**
   * Say is disabled while a reply runs, Cancel reply while none does. The button pressed (Say, or Cancel
   * reply once the turn ended) hands the focus to the player's line: disabling it would drop the focus to
   * the page's body, where a keyboard or screen reader user loses their place.
   */
  #setBusy(busy: boolean): void {
    const disabling = busy ? this.#send : this.#cancel;
    const hadFocus = document.activeElement === disabling;
    this.#send.disabled = busy;
    this.#cancel.disabled = !busy;
    if (hadFocus) this.#lineInput.focus();
  }

  /**
   * Shows (or removes) the turn's progress line: while the model works and the bubble has nothing else to
   * show (no words yet, no call waiting for the designer), it says how long it has been at it, counted from
   * the turn's start or from the last call's result. A slow local model takes a minute before its first
   * words, and it writes a tool call whole (not streamed). Quiet: not a live region (it changes every second).
   */
  #progress(live: LiveTurn): void {
    const waitingForDesigner = live.calls.root.querySelector(".tool-call.pending") !== null;
    if ((live.line.textContent ?? "") !== "" || waitingForDesigner) {
      live.progress.remove();
      return;
    }
    live.progress.textContent = thinkingFor(live.thinkingSince);
    if (!live.progress.isConnected) live.line.after(live.progress);
  }

  #event(live: LiveTurn, event: NpcEvent, at: number): void {
    switch (event.type) {
      case "emotion":
        live.record.timings.emotion ??= at;
        live.emotion.dataset.emotion = event.emotion;
        live.emotion.textContent = event.emotion;
        this.#setEmotion(event.emotion);
        this.#emotionOf = live;
        break;
      case "lineDelta":
        live.record.timings.firstLine ??= at;
        live.line.textContent += event.delta;
        break;
      case "lineReset":
        live.record.timings.firstLine ??= at;
        live.line.textContent = event.line;
        break;
      case "toolCallStarted":
        live.calls.row(event.call, event.execution);
        break;
      case "toolCallCompleted":
        live.calls.completed(event.record);
        live.thinkingSince = Date.now();
        break;
    }
    this.#progress(live);
    this.#follow();
  }

  /**
   * Answers a client tool call (its id, name and arguments): automatically with its canned answer, or by
   * hand (the call waits for the designer; the bridge's timeout or a cancelled turn aborts `signal`).
   */
  handleTool({ call, signal }: Pick<ToolContext, "call" | "signal">): Promise<unknown> {
    const live = this.#live;
    const name = call.name;
    const answer = this.#host.answerOf(name);
    if (!live) {
      // A call outside a conversation turn (none is expected): answer it as configured, or as an error.
      if (answer.mode === "auto") return cannedAnswer(answer);
      return Promise.reject(new Error("The playground was not running a turn for this call."));
    }
    const row = live.calls.row(call, "client");
    if (answer.mode === "auto") {
      row.status.textContent = "answered automatically";
      row.root.dataset.how = "answered automatically";
      return cannedAnswer(answer);
    }
    // An answer typed for this tool but not sent (its call ended: the bridge went away, a reload cut the turn
    // off) starts the box; it stays kept while the box holds it, until it is sent (or emptied).
    const kept = this.#host.kept;
    const persona = this.#host.persona();
    const keptAs = this.#host.toolNameNow(name);
    const unsent = kept.get(persona, keptAs);
    const answered = answerByHand(row, {
      name,
      description: this.#host.toolDescription(name),
      answer: unsent === undefined ? answer : { ...answer, text: unsent },
      timeout: this.#host.toolTimeout(name),
      signal,
      focusNext: () => this.#focusAfterAnswer(),
      // The whole form in view (its buttons too) when the conversation follows the turn; the focus alone would
      // scroll only the box into view, which reads as the designer scrolling up.
      shown: () => this.#follow(),
      cancelTurn: () => this.cancel(),
      cancelledByDesigner: () => live.abort.signal.aborted,
      typed: (text) => kept.set(persona, keptAs, text),
      unsent: (text) => kept.set(persona, keptAs, text),
      sendAs: (as) => this.#host.sendAsPicked(name, as),
    });
    this.#progress(live); // the call waits for the designer now: the model is not thinking
    return answered;
  }

  /**
   * Where the focus goes when a call's answer form goes away with the focus in it: the next call still
   * waiting for an answer, else the player's line (not the page's body, where a screen reader loses its
   * place).
   */
  #focusAfterAnswer(): void {
    const next = this.#list.querySelector<HTMLElement>(".tool-call.pending .tool-answer textarea");
    (next ?? this.#lineInput).focus();
  }

  #finish(live: LiveTurn, reply: NpcReply): void {
    const { announcement, endNote } = showReply(live, {
      reply,
      timings: live.record.timings,
      npcName: this.#host.npcName(),
      pick: (option) => this.say(option),
    });
    this.#setEmotion(reply.emotion);
    this.#say(announcement);
    if (endNote) this.#list.append(endNote);
    this.#follow();
  }

  #failed(live: LiveTurn, error: BridgeError, line: string): void {
    // Cancelled by the designer (Cancel reply, a start or a restore); else the bridge cancelled it (it stopped,
    // or the NPC was closed): that turn is a failure, and the line comes back to be said again.
    const failure = failureOf(error, live.abort.signal.aborted);
    const { cancelled, byBridge } = failure;
    const hint = cancelled ? null : this.#host.failureHint(error);
    showFailure(live, { error, failure, hint });
    // The header goes back to the emotion of before the turn (unless a start or the bridge going away set it).
    if (this.#emotionOf === live) this.#setEmotion(live.emotionBefore);
    // The bridge cancelled it as it stopped, or the connection closed under it: the alert banner says so.
    const gone = !cancelled && (byBridge || !this.#host.connected());
    const back = !cancelled && this.#lineInput.value.trim() === "";
    if (back) {
      // Give the line back so it can be sent again.
      this.#lineInput.value = line;
      this.#saved.line = line;
      this.#host.changed();
    }
    if (byBridge) this.#bridgeCancelled = live;
    if (gone) {
      this.#cutOff = { line, back };
      return;
    }
    this.#say(failureAnnouncement({ error, failure, hint }));
  }

  /**
   * The page is going away (a reload, a closed tab) with a reply running: its line goes back in the player's
   * box (when the box is empty) and is kept as cut off, as when the bridge goes away mid-turn.
   */
  keepLiveLine(): void {
    const live = this.#live;
    if (!live || this.#lineInput.value.trim() !== "") return;
    this.#saved.line = live.record.line;
    this.#saved.cutLine = live.record.line;
  }

  /** Cancels the running reply (`npc/cancel`; the turn answers -32009). */
  cancel(): void {
    this.#live?.abort.abort();
  }

  /** Settles once no reply is running (at once when none is). */
  async idle(): Promise<void> {
    await this.#live?.ended;
  }

  /**
   * Cancels the running reply, if any, and waits until it ended (its entry shows it cancelled): what a start
   * or a restore does before it replaces the NPC. Returns the cancelled turn, or null when none was running.
   */
  async cancelRunning(): Promise<TurnRecord | null> {
    const live = this.#live;
    if (!live) return null;
    live.abort.abort();
    await live.ended;
    return live.record;
  }

  /** A bark: a short ambient line (no history, memory or tools). */
  async bark(): Promise<void> {
    const npc = this.#host.npc();
    if (!this.#host.connected()) return this.#fail("The bridge is not connected: use Reconnect above.");
    if (!npc) return this.#fail("Start the NPC first (Start NPC, in the NPC panel).");
    const pending = this.#host.pending();
    if (pending !== null) return this.#fail(`${pending}: wait a moment.`);
    this.#fail("");
    this.#quiet();
    await runBark(npc, {
      npcName: () => this.#host.npcName(),
      situation: this.#situation.value.trim() || this.#host.greeting(),
      hint: (line) => this.#host.barkHint(line),
      // (Not a turn's script hints: a bark plays a text step; the bridge's model that cannot answer, yes.)
      failureHint: (error) => this.#host.barkFailureHint(error),
      show: (entry) => {
        this.#list.append(entry);
        this.#scroll();
      },
      say: (text) => this.#say(text),
      ended: () => this.#scroll(),
    });
  }
}
