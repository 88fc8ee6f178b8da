/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
/**
 * Small DOM helpers of the playground page: element creation, accessible tabs, downloads and file reading.
 * @module
 */

/** A child of {@link h}: nodes and text; `null`, `undefined` and `false` are skipped. */
export type Child = Node | string | null | undefined | false;

/** Attributes and properties of {@link h}. */
export interface Props {
  /** `class` attribute. */
  class?: string;
  /** Text content (instead of children). */
  text?: string;
  /** Event listeners. */
  on?: Record<string, (event: Event) => void>;
  /** Any other attribute (`false`/`null`/`undefined` leave it out; `true` sets it empty). */
  [attribute: string]: unknown;
}

const PROPERTIES = new Set(["value", "checked", "disabled", "hidden", "selected", "open"]);

/** Creates an element: `h("button", { type: "button", on: { click } }, "Start")`. */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: Props = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (key === "class") el.className = String(value ?? "");
    else if (key === "text") el.textContent = String(value ?? "");
    else if (key === "on") {
      for (const [type, listener] of Object.entries(value as Record<string, (event: Event) => void>)) {
        el.addEventListener(type, listener);
      }
    } else if (PROPERTIES.has(key)) (el as unknown as Record<string, unknown>)[key] = value;
    else if (value === true) el.setAttribute(key, "");
    else if (value !== false && value !== null && value !== undefined) el.setAttribute(key, String(value));
  }
  append(el, children);
  return el;
}

/** Appends children (skipping empty ones). */
export function append(parent: Element, children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    parent.append(child);
  }
}

/** The element with `id`; throws when the page lacks it (a broken page should fail loudly). */
export function byId<T extends HTMLElement = HTMLElement>(id: string): T {
  const el = document.getElementById(id);
  if (!el) throw new Error(`The page has no element #${id}.`);
  return el as T;
}

let nextId = 0;

/** A fresh element id with `prefix`. */
export function uid(prefix: string): string {
  return `${prefix}-${++nextId}`;
}

/** One tab of {@link tabs}. */
export interface Tab {
  /** Short id (used in element ids and the remembered selection). */
  id: string;
  /** The tab's label. */
  label: string;
  /** The panel it shows. */
  panel: HTMLElement;
}

/** What {@link tabs} shows. */
export interface TabsOptions {
  /** The tab list's accessible name. */
  name: string;
  /** The tabs, in order; the first is selected. */
  items: Tab[];
  /** Called with the id of the tab selected (also the first one, at once). */
  onSelect?: (id: string) => void;
}

/**
 * Accessible tabs (WAI-ARIA tabs pattern: arrow keys, Home and End move between tabs) in `host`. Returns a
 * function that selects a tab by id.
 */
export function tabs(host: HTMLElement, { name, items, onSelect }: TabsOptions): (id: string) => void {
  const list = h("div", { class: "tablist", role: "tablist", "aria-label": name });
  const buttons = items.map((item) => {
    const button = h("button", {
      type: "button",
      role: "tab",
      id: `tab-${item.id}`,
      "aria-controls": `panel-${item.id}`,
      "data-tab": item.id,
      text: item.label,
    });
    item.panel.id = `panel-${item.id}`;
    item.panel.setAttribute("role", "tabpanel");
    item.panel.setAttribute("aria-labelledby", `tab-${item.id}`);
    item.panel.classList.add("tabpanel");
    return button;
  });
  const select = (id: string, focus = false) => {
    items.forEach((item, i) => {
      const on = item.id === id;
      buttons[i].setAttribute("aria-selected", String(on));
      buttons[i].tabIndex = on ? 0 : -1;
      item.panel.hidden = !on;
      if (on && focus) buttons[i].focus();
    });
    onSelect?.(id);
  };
  buttons.forEach((button, i) => {
    button.addEventListener("click", () => select(items[i].id));
    button.addEventListener("keydown", (event) => {
      const keys: Record<string, number> = {
        ArrowRight: i + 1,
        ArrowLeft: i - 1,
        Home: 0,
        End: items.length - 1,
      };
      if (!(event.key in keys)) return;
      event.preventDefault();
      const next = (keys[event.key] + items.length) % items.length;
      select(items[next].id, true);
    });
  });
  list.append(...buttons);
  host.append(list, ...items.map((item) => item.panel));
  select(items[0].id);
  return (id: string) => select(id);
}

/** The file of {@link download}. */
export interface DownloadOptions {
  /** The file's text. */
  text: string;
  /** Its media type (default `application/json`). */
  type?: string;
}

/** Where a file the page offers as a download goes (the page cannot know the folder the browser chose). */
export const DOWNLOADS = "your browser's downloads folder";

/**
 * What the page says after a file was saved with {@link download}: its name, what it is, where it went and how
 * to open it again.
 *
 * @example
 * ```ts ignore
 * savedNote({ name: "mira.jsonc", what: "the persona file", opener: "Load file…" });
 * // "Saved mira.jsonc (the persona file) to your browser's downloads folder; Load file… opens it again."
 * ```
 */
export function savedNote({ name, what, opener }: { name: string; what: string; opener: string }): string {
  return `Saved ${name} (${what}) to ${DOWNLOADS}; ${opener} opens it again.`;
}

/**
 * What {@link savedNote} adds for a file saved with a problem (`problem`: what the page says of it).
 *
 * @example
 * ```ts ignore
 * toFix("The script is empty.");
 * // "It has a problem to fix before it starts: The script is empty."
 * ```
 */
export function toFix(problem: string): string {
  return `It has a problem to fix before it starts: ${problem}`;
}

/** Offers `text` as a file download named `name`. */
export function download(name: string, { text, type = "application/json" }: DownloadOptions): void {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const a = h("a", { href: url, download: name, hidden: true });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/** The file input of {@link fileButton}. */
export interface FileButtonOptions {
  /** The button's text (its accessible name). */
  label: string;
  /** The input's `accept` (`.json,.jsonc`). */
  accept: string;
  /** Gets the chosen files (never called with none). */
  onFiles: (files: File[]) => void;
  /** Whether several files may be chosen at once (default false). */
  multiple?: boolean;
  /** The button's tooltip (and accessible description). */
  title?: string;
}

/**
 * A button that opens the file chooser of a hidden file input (`id`); `onFiles` gets the chosen files. Only
 * the button is a control (one Tab stop, one node in the accessibility tree): the input is `hidden`.
 */
export function fileButton(
  id: string,
  { label, accept, onFiles, multiple = false, title }: FileButtonOptions,
): HTMLElement {
  const input = h("input", { type: "file", id, accept, hidden: true, multiple });
  input.addEventListener("change", () => {
    const files = [...(input.files ?? [])];
    input.value = "";
    if (files.length > 0) onFiles(files);
  });
  const button = h("button", {
    type: "button",
    id: `${id}-button`,
    text: label,
    title,
    on: { click: () => input.click() },
  });
  return h("span", { class: "file-button" }, input, button);
}

/**
 * Makes every link of class `skip-link` (`<a class="skip-link" href="#player-line">`) put the focus on its
 * target without changing the page's address: a keyboard user gets past the controls in between with one
 * Tab and Enter. The links are hidden until they have the focus (playground.css).
 */
export function followSkipLinks(doc: Document = document): void {
  doc.addEventListener("click", (event) => {
    const link = (event.target as Element | null)?.closest?.("a.skip-link");
    const id = link?.getAttribute("href")?.replace(/^#/, "");
    const target = id ? doc.getElementById(id) : null;
    if (!target) return;
    event.preventDefault();
    target.focus();
  });
}

/** No control has the focus (it fell to the page's body, e.g. when the focused button was disabled). */
export function focusLost(): boolean {
  const active = document.activeElement;
  return active === null || active === document.body;
}

/** Enter that sends a line from a text box: not Shift+Enter (a new line), not while an input method composes. */
export function isSendKey(event: KeyboardEvent): boolean {
  return event.key === "Enter" && !event.shiftKey && !event.isComposing;
}

/** Pretty JSON (2 spaces). */
export function pretty(value: unknown): string {
  return JSON.stringify(value, null, 2);
}

/** Compact JSON for one-line display, shortened to `max` characters. */
export function brief(value: unknown, max = 160): string {
  const text = typeof value === "string" ? value : JSON.stringify(value);
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** Calls `fn` once `ms` after the last call. */
export function debounce(fn: () => void, ms: number): () => void {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return () => {
    clearTimeout(timer);
    timer = setTimeout(fn, ms);
  };
}

/** A file name made from `name` (letters, digits, `-`, `_`, `.`). */
export function fileName(name: string, suffix: string): string {
  const base = name.trim().toLowerCase().replace(/[^a-z0-9_.-]+/g, "-").replace(/^-+|-+$/g, "") || "npc";
  return `${base}${suffix}`;
}
