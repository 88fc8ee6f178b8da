/// <reference lib="dom" />
/**
 * The top bar's connection side: the connection pill ("Connected to the bridge", "Connecting…", "Not
 * connected"), Reconnect and the retries (1 s, doubling up to 10 s), the alert banner that says the bridge went
 * away (once, with what became of a reply it cut off), and the model pill (the model and its availability).
 * @module
 */
import type { ModelAvailability } from "../../../client/types.ts";
import { byId, h } from "./dom.ts";
import { availabilityText } from "./availability_text.ts";

/** A reply the bridge cut off when it went away: its line, and whether it is back in the player's box. */
export interface CutReply {
  line: string;
  back: boolean;
}

/**
 * The connection pill, Reconnect, the retries and the banner; `connect` opens a fresh connection.
 *
 * For example (not a doc test: this module needs the DOM):
 *   const bar = new ConnectionBar(() => void link.connect());
 *   bar.closed("The server stopped.", null); // "Not connected", the banner, a retry in 1 s
 */
export class ConnectionBar {
  readonly #connect: () => void;
  #retry: ReturnType<typeof setTimeout> | undefined;
  #retryDelay = 1000;

  /** The bar of the page's elements (#connection-status, #banner, #reconnect); Reconnect calls `connect`. */
  constructor(connect: () => void) {
    this.#connect = connect;
    byId("reconnect").addEventListener("click", () => this.reconnect());
  }

  /** The Reconnect button: connect now, and start the retry delay over. */
  reconnect(): void {
    clearTimeout(this.#retry);
    this.#retryDelay = 1000;
    this.#connect();
  }

  /** Connected: the pill says so, the banner and Reconnect go, the retry delay starts over. */
  open(): void {
    this.#pill("open", "Connected to the bridge");
    byId("banner").hidden = true;
    byId("reconnect").hidden = true;
    this.#retryDelay = 1000;
  }

  /** Connecting: the pill says so. */
  connecting(): void {
    this.#pill("connecting", "Connecting…");
  }

  /**
   * The socket is open and the bridge has not answered `initialize` yet: it answers once its model said
   * whether it can run, and a GGUF model (`model`: `llama`) is loaded first, which takes seconds or more.
   */
  waiting(model: string | undefined): void {
    this.#pill(
      "waiting",
      model === "llama"
        ? "Connected; the bridge is loading its model…"
        : "Connected; waiting for the bridge…",
    );
  }

  /**
   * Not connected (`detail`: why): the pill says so, Reconnect shows, the banner says the bridge went away and
   * what became of the reply it cut off (`cut`), and a retry is due (each one waits twice as long, up to 10 s).
   */
  closed(detail: string | undefined, cut: CutReply | null): void {
    this.#pill("closed", "Not connected");
    byId("reconnect").hidden = false;
    const banner = byId("banner");
    banner.hidden = false;
    banner.replaceChildren(
      h("strong", { text: "The bridge went away. " }),
      `${detail ?? ""} `,
      cut === null
        ? ""
        : `The reply to “${cut.line}” was cut off${cut.back ? ": your line is back in the box" : ""}. `,
      "Everything you typed is kept in this page. ",
      h("button", {
        type: "button",
        text: "Reconnect now",
        on: { click: () => byId("reconnect").click() },
      }),
      " (it also retries by itself)",
    );
  }

  /** Tries to connect again after the retry delay (which then doubles, up to 10 s). */
  retryLater(): void {
    clearTimeout(this.#retry);
    this.#retry = setTimeout(() => this.#connect(), this.#retryDelay);
    this.#retryDelay = Math.min(this.#retryDelay * 2, 10_000);
  }

  #pill(state: string, text: string): void {
    const status = byId("connection-status");
    status.dataset.state = state;
    // "Not connected" is shown, not said: the alert banner says the bridge went away (once).
    status.setAttribute("aria-live", state === "closed" ? "off" : "polite");
    status.textContent = text;
  }
}

/**
 * The model pill: the Model tab's script (always available) when `useScript`, else the bridge's model
 * (`label`) and its availability. On a phone the pill is cut short: its whole text is its tooltip.
 */
export function showModelPill(
  { useScript, label, availability, checking, connected = true }: {
    /** The NPC plays the page's script rather than the bridge's model. */
    useScript: boolean;
    /** The model's label. */
    label: string;
    /** What the bridge said about the model (undefined before it answered). */
    availability: ModelAvailability | undefined;
    /** While the bridge is still checking its model (undefined otherwise): the model's kind (`llama`, …). */
    checking?: string;
    /** Whether the page is connected to the bridge (false: it went away, its model's availability is not known). */
    connected?: boolean;
  },
): void {
  const status = byId("model-status");
  if (useScript) {
    status.textContent = "Model: scripted (the Model tab's script) · always available";
    status.dataset.available = "true";
  } else {
    status.textContent = `Model: ${label} · ${availabilityText(availability, { checking, connected })}`;
    status.dataset.available = String(availability?.available ?? "unknown");
  }
  status.title = status.textContent;
}
