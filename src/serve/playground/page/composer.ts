/// <reference lib="dom" />
/**
 * The conversation's composer: the player's line (Enter says it, Shift+Enter starts a new line, Escape
 * cancels a running reply), the turn's context, Say and Cancel reply, the message line, and the bark row
 * with its situation. Owns these controls and keeping what is typed in them (the page's `saved`); what
 * Say, Cancel and Bark do is the conversation's.
 * @module
 */
import { h, isSendKey } from "./dom.ts";
import type { Saved } from "./storage.ts";

/** What the composer's controls do, and where what is typed is kept. */
export interface ComposerOptions {
  /** Keeps the player's line (`line`), the turn's context (`context`) and the bark's situation. */
  saved: Saved;
  /** Something typed changed (persist it). */
  changed: () => void;
  /** Say the player's line. */
  say: () => void;
  /** Cancel the running reply. */
  cancel: () => void;
  /** Ask the NPC for a bark. */
  bark: () => void;
  /** A reply is running (Escape in the player's line cancels it). */
  replyRunning: () => boolean;
}

/** The composer's controls. */
export interface Composer {
  /** The composer (put it under the turns). */
  root: HTMLElement;
  /** The player's line. */
  line: HTMLTextAreaElement;
  /** The turn's context. */
  context: HTMLInputElement;
  /** The bark's situation. */
  situation: HTMLInputElement;
  send: HTMLButtonElement;
  cancel: HTMLButtonElement;
  bark: HTMLButtonElement;
  /** The message line (an alert) under Say. */
  message: HTMLElement;
}

/**
 * Builds the composer, its boxes filled with what was typed before.
 *
 * @example
 * ```ts ignore
 * const parts = composer({ saved, changed, say, cancel, bark, replyRunning: () => false });
 * root.append(parts.root);
 * ```
 */
export function composer(options: ComposerOptions): Composer {
  const line = playerLine(options);
  const context = savedInput(options, "context", {
    id: "turn-context",
    placeholder: "e.g. The player just paid 4 gold.",
  });
  const situation = savedInput(options, "situation", {
    id: "bark-situation",
    placeholder: "the greeting, or e.g. It starts to rain.",
  });
  const send = h("button", {
    type: "button",
    id: "send",
    class: "primary",
    text: "Say",
    on: { click: () => options.say() },
  });
  const cancel = h("button", {
    type: "button",
    id: "cancel",
    text: "Cancel reply",
    disabled: true,
    on: { click: () => options.cancel() },
  });
  const bark = h("button", { type: "button", id: "bark", text: "Bark", on: { click: () => options.bark() } });
  const message = h("p", { id: "conversation-message", class: "message", role: "alert" });
  const root = h(
    "div",
    { class: "composer" },
    h(
      "div",
      { class: "field" },
      h("label", { for: "player-line", text: "Player" }),
      line,
      h("p", {
        class: "hint",
        id: "player-line-hint",
        text: "Enter says it, Shift+Enter starts a new line, Escape cancels a reply.",
      }),
    ),
    h(
      "div",
      { class: "field" },
      h("label", { for: "turn-context", text: "Context of this turn (optional)" }),
      context,
    ),
    h("div", { class: "row" }, send, cancel),
    message,
    h(
      "div",
      { class: "field" },
      // The label above the box (as the turn's context), so the box is wide enough for its whole hint.
      h("label", { for: "bark-situation", text: "Bark situation" }),
      h("div", { class: "row bark-row" }, situation, bark),
    ),
  );
  return { root, line, context, situation, send, cancel, bark, message };
}

/** The player's line: Enter says it, Shift+Enter starts a new line, Escape cancels a running reply. */
function playerLine({ saved, changed, say, cancel, replyRunning }: ComposerOptions): HTMLTextAreaElement {
  const input = h("textarea", {
    id: "player-line",
    rows: 2,
    value: saved.line,
    placeholder: "What the player says…",
    dir: "auto", // Arabic or Hebrew is typed right to left
    "aria-describedby": "player-line-hint conversation-message",
  });
  input.addEventListener("input", () => {
    saved.line = input.value;
    changed();
  });
  input.addEventListener("keydown", (event) => {
    if (isSendKey(event)) {
      event.preventDefault();
      say();
    } else if (event.key === "Escape" && replyRunning()) {
      event.preventDefault();
      cancel();
    }
  });
  return input;
}

/** A one-line input whose text the page keeps as `saved[key]`. */
function savedInput(
  { saved, changed }: ComposerOptions,
  key: "context" | "situation",
  { id, placeholder }: { id: string; placeholder: string },
): HTMLInputElement {
  const input = h("input", {
    id,
    type: "text",
    value: saved[key],
    placeholder,
    autocomplete: "off",
    dir: "auto",
  });
  input.addEventListener("input", () => {
    saved[key] = input.value;
    changed();
  });
  return input;
}
