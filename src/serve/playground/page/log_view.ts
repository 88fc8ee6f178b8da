/// <reference lib="dom" />
/**
 * The raw JSON-RPC log: every message between the page and the bridge, in wire order, with its time; a
 * filter, and each line expandable to pretty JSON. Shown or hidden with a toggle; it records either way.
 * @module
 */
import type { JsonValue } from "../../../protocol/json.ts";
import { h, pretty } from "./dom.ts";
import type { RpcEntry } from "./rpc_log.ts";

/** Messages kept (older ones are dropped). */
export const LOG_LIMIT = 5000;

/** "1 message", "2 messages". */
function count(n: number): string {
  return `${n} message${n === 1 ? "" : "s"}`;
}

/** A one-line summary: method and id, or the id of a response. */
export function summarize(message: JsonValue): string {
  if (typeof message !== "object" || message === null || Array.isArray(message)) return "(not an object)";
  const m = message as Record<string, JsonValue>;
  const id = m.id === undefined ? "" : ` #${JSON.stringify(m.id)}`;
  if (typeof m.method === "string") {
    const params = m.params as Record<string, JsonValue> | undefined;
    const event =
      params && typeof params.event === "object" && params.event !== null && !Array.isArray(params.event)
        ? ` ${String((params.event as Record<string, JsonValue>).type)}`
        : "";
    return `${m.method}${event}${id}`;
  }
  if (m.error !== undefined) return `error${id}`;
  return `result${id}`;
}

/** The log panel. */
export class LogView {
  /** The panel's element. */
  readonly root: HTMLElement;
  readonly #list: HTMLOListElement;
  readonly #filter: HTMLInputElement;
  readonly #count: HTMLElement;
  #entries: RpcEntry[] = [];
  #origin = performance.now();
  #visible = false;

  /** A log panel (hidden until {@link LogView.setVisible}). */
  constructor() {
    this.#list = h("ol", { class: "rpc-lines", "aria-label": "JSON-RPC messages" });
    this.#filter = h("input", {
      type: "search",
      id: "log-filter",
      placeholder: "e.g. tool/call or npc/event",
      autocomplete: "off",
    });
    this.#filter.addEventListener("input", () => this.#renderAll());
    this.#count = h("span", { class: "hint" });
    this.root = h(
      "section",
      { id: "rpc-log", class: "rpc-log", "aria-labelledby": "rpc-log-title", hidden: true },
      h(
        "div",
        { class: "row" },
        h("h2", { id: "rpc-log-title", text: "JSON-RPC log" }),
        h("label", { for: "log-filter", text: "Filter" }),
        this.#filter,
        h("button", { type: "button", class: "small", text: "Clear", on: { click: () => this.clear() } }),
        this.#count,
      ),
      this.#list,
    );
  }

  /** Every recorded entry. */
  get entries(): readonly RpcEntry[] {
    return this.#entries;
  }

  /** Shows or hides the panel. */
  setVisible(visible: boolean): void {
    this.#visible = visible;
    this.root.hidden = !visible;
    if (visible) this.#renderAll();
  }

  /** Records a message (and shows it when visible). */
  add(entry: RpcEntry): void {
    this.#entries.push(entry);
    if (this.#entries.length > LOG_LIMIT) this.#entries.splice(0, this.#entries.length - LOG_LIMIT);
    if (!this.#visible) return;
    if (this.#matches(entry)) {
      const atBottom = this.#list.scrollTop + this.#list.clientHeight >= this.#list.scrollHeight - 4;
      this.#list.append(this.#line(entry));
      while (this.#list.children.length > LOG_LIMIT) this.#list.firstElementChild?.remove();
      if (atBottom) this.#list.scrollTop = this.#list.scrollHeight;
    }
    this.#count.textContent = count(this.#entries.length);
  }

  /** Forgets every entry. */
  clear(): void {
    this.#entries = [];
    this.#origin = performance.now();
    this.#renderAll();
  }

  #matches(entry: RpcEntry): boolean {
    const q = this.#filter.value.trim().toLowerCase();
    return q === "" || JSON.stringify(entry.message).toLowerCase().includes(q);
  }

  #renderAll(): void {
    this.#list.replaceChildren(...this.#entries.filter((e) => this.#matches(e)).map((e) => this.#line(e)));
    this.#count.textContent = count(this.#entries.length);
    this.#list.scrollTop = this.#list.scrollHeight;
  }

  #line(entry: RpcEntry): HTMLElement {
    const text = JSON.stringify(entry.message);
    const details = h(
      "details",
      {},
      h(
        "summary",
        {},
        h("span", { class: "time", text: `${((entry.at - this.#origin) / 1000).toFixed(3)}s` }),
        h("span", {
          class: `dir ${entry.direction}`,
          text: entry.direction === "out" ? "→" : "←",
          "aria-label": entry.direction === "out" ? "sent" : "received",
        }),
        h("span", { class: "what", text: summarize(entry.message) }),
        h("code", { class: "raw", text }),
      ),
    );
    details.addEventListener("toggle", () => {
      if (details.open && !details.querySelector("pre")) {
        details.append(h("pre", { text: pretty(entry.message) }));
      }
    }, { once: false });
    return h("li", { class: entry.direction }, details);
  }
}
