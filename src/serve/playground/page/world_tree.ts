/// <reference lib="dom" />
/**
 * The live world as a tree: it follows `world/changed` (each changed path flashes and is logged with who
 * changed it), and every value can be edited, added or removed in place (`world/set`, `world/remove`). A
 * value that the bridge rejects keeps what was typed, with the bridge's message beside it.
 * @module
 */
import type { WorldChange } from "../../../client/game_types.ts";
import { isJsonObject, type JsonValue } from "../../../protocol/json.ts";
import { brief, h } from "./dom.ts";
import { applyChange, typedValue } from "./values.ts";

/** What the tree asks the page to do. */
export interface WorldActions {
  /** `world/set` of `path`; rejects with the bridge's error. */
  set(path: string, value: JsonValue): Promise<void>;
  /** `world/remove` of `path`. */
  remove(path: string): Promise<void>;
}

interface Editing {
  path: string;
  kind: "edit" | "add";
  key: string;
  value: string;
  message: string;
  /** The text the designer was asked about and saves again to keep as text (see {@link textInsteadOf}). */
  asked?: string;
  /** The value the edit started from (or the one taken since with "Use …"): an edit's only. */
  seen?: JsonValue;
  /** Who last changed the value while the form was open ("the NPC, during a turn"). */
  changedBy?: string;
}

/** Where the caret of a text box was: its selection (and direction) and how far it was scrolled. */
interface Caret {
  start: number | null;
  end: number | null;
  direction: "forward" | "backward" | "none" | undefined;
  scroll: number;
}

/** The same JSON value. */
function same(a: JsonValue | undefined, b: JsonValue | undefined): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** A path is `other` or inside it, or the other way round. */
function overlaps(path: string, other: string): boolean {
  const under = (a: string, b: string) => b === "" || a === b || a.startsWith(`${b}.`);
  return under(path, other) || under(other, path);
}

/**
 * The question to ask before an edit replaces a number or a boolean with text (`2o` typed for `20` would
 * be saved as the text "2o"), or null when `typed` keeps the kind or is meant as text.
 */
function textInsteadOf(path: string, old: JsonValue | undefined, typed: string): string | null {
  const kind = typeof old === "number" ? "a number" : typeof old === "boolean" ? "true or false" : null;
  if (kind === null || typeof typedValue(typed) !== "string") return null;
  const one = kind === "a number" ? "is not one" : "is neither";
  return `${path} is ${kind}; ${typed} ${one} and would be saved as the text ${JSON.stringify(typed)}. ` +
    `Save again to keep it as text, or write ${kind === "a number" ? "a number" : "true or false"}.`;
}

function join(path: string, key: string | number): string {
  return path === "" ? String(key) : `${path}.${key}`;
}

/** The path of the object or list `path` is in ("" at the top). */
function parentOf(path: string): string {
  const dot = path.lastIndexOf(".");
  return dot < 0 ? "" : path.slice(0, dot);
}

/** The world tree. */
export class WorldTree {
  /** The tree's element. */
  readonly root: HTMLElement;
  readonly #actions: WorldActions;
  readonly #tree: HTMLElement;
  readonly #log: HTMLOListElement;
  readonly #title: HTMLElement;
  #state: JsonValue | null = null;
  #closed = new Set<string>();
  #editing: Editing | null = null;
  /** An input method is composing text in a field of the tree (compositionstart, until compositionend). */
  #composing = false;
  /** A render was put off until the composition ends. */
  #renderLater = false;
  /** The paths changed meanwhile: they flash once the tree shows them. */
  #flashLater: string[] = [];

  /** A tree that edits through `actions`. */
  constructor(actions: WorldActions) {
    this.#actions = actions;
    this.#title = h("p", {
      class: "hint world-title",
      text: "No world: add an initial world in the editor's World tab.",
    });
    this.#tree = h("div", { class: "world-tree" });
    this.#log = h("ol", { class: "world-log", "aria-label": "World changes, newest first" });
    // A world change that arrives while an input method composes in an edit form (Japanese, Chinese, Korean…)
    // waits for the composition to end: building the form again would replace the field and end it.
    this.#tree.addEventListener("compositionstart", () => this.#composing = true);
    this.#tree.addEventListener("compositionend", () => {
      this.#composing = false;
      if (!this.#renderLater) return;
      this.#renderLater = false;
      const paths = this.#flashLater;
      queueMicrotask(() => {
        this.#render();
        for (const path of paths) this.#flash(path);
      });
    });
    this.root = h(
      "div",
      {},
      this.#title,
      this.#tree,
      h("h3", { text: "Changes" }),
      this.#log,
    );
  }

  /** The state shown (null: no world). */
  get state(): JsonValue | null {
    return this.#state;
  }

  /**
   * Shows a world (`id` and its snapshot), or none: `none` says why (by default, that the persona has no
   * initial world).
   */
  show(id: string | null, state: JsonValue | null, none?: string): void {
    this.#state = state;
    this.#editing = null;
    this.#title.textContent = id === null
      ? none ?? "No world: add an initial world in the editor's World tab."
      : `World '${id}': click a value to change it; the NPC's changes appear as they happen.`;
    this.#log.replaceChildren();
    this.#render();
  }

  /** Applies a `world/changed` (made by `source`: "the NPC, turn 2", "you"…), flashes and logs it. */
  change(change: WorldChange, source: string): void {
    if (this.#state === null) return;
    this.#state = applyChange(this.#state, change);
    const e = this.#editing;
    if (e?.kind === "edit" && overlaps(e.path, change.path)) e.changedBy = source;
    if (this.#composing && this.#tree.isConnected) {
      this.#renderLater = true;
      this.#flashLater.push(change.path);
    } else {
      this.#render();
      this.#flash(change.path);
    }
    // As JSON, as the tree shows values: text in quotes (20 → "twenty" is not 20 → 20).
    const before = "oldValue" in change ? brief(JSON.stringify(change.oldValue), 60) : "(new)";
    const after = "newValue" in change ? brief(JSON.stringify(change.newValue), 60) : "(removed)";
    this.#log.prepend(
      h(
        "li",
        {},
        h("code", { text: change.path || "(root)" }),
        `: ${before} → ${after}`,
        h("span", { class: "source", text: ` · ${source}` }),
      ),
    );
    while (this.#log.children.length > 50) this.#log.lastElementChild?.remove();
  }

  /** Flashes the row of `path`, if the tree shows it. */
  #flash(path: string): void {
    const row = this.#tree.querySelector<HTMLElement>(`[data-path="${CSS.escape(path)}"]`);
    if (!row) return;
    row.classList.remove("changed");
    void row.offsetWidth; // restart the animation
    row.classList.add("changed");
  }

  #render(): void {
    // Building the tree again replaces every field: a composition in one of them ends with it.
    this.#composing = false;
    this.#renderLater = false;
    this.#flashLater = [];
    const focused = this.#tree.contains(document.activeElement)
      ? (document.activeElement as HTMLElement)
      : null;
    const focusName = focused?.dataset.focus ?? null;
    // A world change arriving while the designer types in an edit form rebuilds the form: its caret and
    // selection go back where they were (the text is kept by the form's state).
    const caret = focused instanceof HTMLInputElement
      ? {
        start: focused.selectionStart,
        end: focused.selectionEnd,
        direction: focused.selectionDirection ?? undefined,
        scroll: focused.scrollLeft,
      }
      : null;
    if (this.#state === null) {
      this.#tree.replaceChildren();
      return;
    }
    const list = h("ul", { class: "tree", "aria-label": "World" });
    if (isJsonObject(this.#state)) {
      for (const [key, value] of Object.entries(this.#state)) list.append(this.#node(key, key, value));
    }
    // An edit whose value was removed meanwhile keeps its form (and the draft) below the tree, where it says so.
    const e = this.#editing;
    const removed = e?.kind === "edit" && e.path !== "" && this.#at(e.path) === undefined;
    this.#tree.replaceChildren(
      list,
      removed
        ? h("div", { class: "row" }, h("code", { text: e.path }), ": ", this.#editForm(e.path, false))
        : "",
      this.#editForm("", false),
      h("div", { class: "row" }, this.#addButton("")),
    );
    if (focusName) this.#refocus(focusName, caret);
  }

  /**
   * Gives the focus back to the control named `name` (`data-focus`) after a render, or, when it is gone,
   * to the one next to it: a closed edit form's value (Escape, Cancel, Save), else the Add button it was
   * opened from; a removed value's parent's Add button. Without this the focus fell to the page's body. The
   * same text box found again gets its `caret` (selection and scroll) back.
   */
  #refocus(name: string, caret: Caret | null = null): void {
    const find = (n: string) => this.#tree.querySelector<HTMLElement>(`[data-focus="${CSS.escape(n)}"]`);
    const colon = name.indexOf(":");
    const kind = name.slice(0, colon);
    const path = name.slice(colon + 1);
    const candidates = [name];
    if (kind === "use") candidates.push(`value:${path}`);
    if (["value", "key", "save", "cancel", "use"].includes(kind)) {
      candidates.push(`edit:${path}`, `add:${path}`);
    }
    if (kind === "remove") candidates.push(`add:${parentOf(path)}`, "add:");
    for (const candidate of candidates) {
      const el = find(candidate);
      if (!el || (el as HTMLButtonElement).disabled) continue;
      el.focus();
      if (candidate === name && caret !== null && el instanceof HTMLInputElement) {
        el.setSelectionRange(caret.start, caret.end, caret.direction);
        el.scrollLeft = caret.scroll;
      }
      return;
    }
  }

  #addButton(path: string): HTMLElement {
    return h("button", {
      type: "button",
      class: "small",
      text: path === "" ? "+ Add a value" : "+",
      "aria-label": path === "" ? "Add a value at the top of the world" : `Add a value in ${path}`,
      "data-focus": `add:${path}`,
      on: {
        click: () => {
          this.#editing = { path, kind: "add", key: "", value: "", message: "" };
          this.#render();
          this.#tree.querySelector<HTMLElement>(
            `[data-focus="key:${CSS.escape(path)}"], [data-focus="value:${CSS.escape(path)}"]`,
          )
            ?.focus();
        },
      },
    });
  }

  #removeButton(path: string): HTMLElement {
    return h("button", {
      type: "button",
      class: "small danger",
      text: "×",
      "aria-label": `Remove ${path}`,
      "data-focus": `remove:${path}`,
      on: { click: () => void this.#remove(path) },
    });
  }

  #node(key: string, path: string, value: JsonValue): HTMLElement {
    const addressable = !key.includes(".");
    if (value !== null && typeof value === "object") {
      const entries: [string, JsonValue][] = Array.isArray(value)
        ? value.map((v, i) => [String(i), v])
        : Object.entries(value);
      const open = !this.#closed.has(path);
      const children = h("ul", { hidden: !open });
      for (const [k, v] of entries) children.append(this.#node(k, join(path, k), v));
      const toggle = h("button", {
        type: "button",
        class: "toggle",
        "aria-expanded": String(open),
        "aria-label": `${open ? "Collapse" : "Expand"} ${path}`,
        "data-focus": `toggle:${path}`,
        text: open ? "▾" : "▸",
        on: {
          click: () => {
            if (this.#closed.has(path)) this.#closed.delete(path);
            else this.#closed.add(path);
            this.#render();
          },
        },
      });
      return h(
        "li",
        { class: "branch", "data-path": path },
        h(
          "div",
          { class: "branch-head" },
          toggle,
          h("span", { class: "key", text: key }),
          h("span", {
            class: "count",
            text: Array.isArray(value) ? ` [${value.length}]` : ` {${entries.length}}`,
          }),
          addressable ? this.#addButton(path) : null,
          addressable ? this.#removeButton(path) : null,
        ),
        children,
        this.#editForm(path, Array.isArray(value)),
      );
    }
    const editing = this.#editing?.kind === "edit" && this.#editing.path === path;
    return h(
      "li",
      { class: "leaf", "data-path": path },
      h("span", { class: "key", text: key }),
      ": ",
      editing ? this.#editForm(path, false) : h("button", {
        type: "button",
        class: `value ${value === null ? "null" : typeof value}`,
        text: JSON.stringify(value),
        "aria-label": `${path} is ${JSON.stringify(value)}; change it`,
        "data-focus": `edit:${path}`,
        disabled: !addressable,
        on: {
          click: () => {
            this.#editing = {
              path,
              kind: "edit",
              key,
              value: JSON.stringify(value),
              message: "",
              seen: value,
            };
            this.#render();
            this.#tree.querySelector<HTMLElement>(`[data-focus="value:${CSS.escape(path)}"]`)?.focus();
          },
        },
      }),
      editing || !addressable ? null : this.#removeButton(path),
    );
  }

  /** The edit/add form for `path` when one is open there (else an empty placeholder). */
  #editForm(path: string, isList: boolean): HTMLElement | "" {
    const e = this.#editing;
    if (!e || e.path !== path) return "";
    const valueInput = h("input", {
      type: "text",
      class: "code",
      value: e.value,
      "aria-label": e.kind === "edit" ? `New value of ${path}` : `Value to add in ${path || "the world"}`,
      "data-focus": `value:${path}`,
      autocomplete: "off",
      "aria-invalid": String(e.message !== ""),
    });
    valueInput.addEventListener("input", () => e.value = valueInput.value);
    // (The composed text is the form's before a render put off until the composition ended runs.)
    valueInput.addEventListener("compositionend", () => e.value = valueInput.value);
    const keyInput = e.kind === "add" && !isList
      ? h("input", {
        type: "text",
        class: "key-input",
        value: e.key,
        placeholder: "key",
        "aria-label": `Key to add in ${path || "the world"}`,
        "data-focus": `key:${path}`,
        autocomplete: "off",
      })
      : null;
    keyInput?.addEventListener("input", () => e.key = keyInput.value);
    keyInput?.addEventListener("compositionend", () => e.key = keyInput.value);
    const cancel = () => {
      this.#editing = null;
      this.#render();
    };
    const form = h(
      "form",
      { class: "world-edit" },
      keyInput,
      valueInput,
      h("button", { type: "submit", class: "small primary", text: "Save", "data-focus": `save:${path}` }),
      h("button", {
        type: "button",
        class: "small",
        text: "Cancel",
        "data-focus": `cancel:${path}`,
        on: { click: cancel },
      }),
      h("p", { class: "hint", text: "JSON (42, true, null, {…}, […]) or plain text." }),
      this.#changedUnderneath(e, valueInput),
      e.message ? h("p", { class: "message", role: "alert", text: e.message }) : null,
    );
    form.addEventListener("keydown", (event) => {
      if (event.key === "Escape") {
        event.preventDefault();
        cancel();
      }
    });
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      void this.#commit(isList);
    });
    return form;
  }

  /**
   * What an edit form says when its value changed while it was open (the NPC wrote it, the bridge or a tool
   * did): the value now, with a button that takes it into the form. The draft stays until the designer takes
   * the new value; null when the value is still the one the edit started from, or what the draft says.
   */
  #changedUnderneath(e: Editing, valueInput: HTMLInputElement): HTMLElement | null {
    if (e.kind !== "edit") return null;
    const now = this.#at(e.path);
    if (same(now, e.seen) || same(now, typedValue(e.value))) return null;
    const by = e.changedBy ? ` (${e.changedBy})` : "";
    if (now === undefined) {
      return h("p", {
        class: "changed-underneath",
        role: "status",
        text: `${e.path} was removed meanwhile${by}. Save writes your ${e.value} back.`,
      });
    }
    const shown = brief(JSON.stringify(now), 60);
    return h(
      "p",
      {
        class: "changed-underneath",
        role: "status",
        text: `${e.path} changed meanwhile${by}: it is ${shown} now, not ${
          brief(JSON.stringify(e.seen), 60)
        }. Save writes your ${e.value} over it.`,
      },
      " ",
      h("button", {
        type: "button",
        class: "small",
        text: `Use ${shown}`,
        "aria-label": `Use ${shown}, the value of ${e.path} now, in place of your draft`,
        "data-focus": `use:${e.path}`,
        on: {
          click: () => {
            e.value = JSON.stringify(now);
            e.seen = now;
            e.message = "";
            delete e.asked;
            delete e.changedBy;
            valueInput.value = e.value;
            this.#render();
            this.#tree.querySelector<HTMLElement>(`[data-focus="value:${CSS.escape(e.path)}"]`)?.focus();
          },
        },
      }),
    );
  }

  async #commit(isList: boolean): Promise<void> {
    const e = this.#editing;
    if (!e) return;
    let target = e.path;
    if (e.kind === "add") {
      if (isList) {
        const list = this.#at(e.path);
        target = join(e.path, Array.isArray(list) ? list.length : 0);
      } else {
        const key = e.key.trim();
        if (key === "" || key.includes(".")) {
          e.message = "Give a key (no dots: they separate the parts of a path).";
          this.#render();
          return;
        }
        target = join(e.path, key);
      }
    }
    const question = e.kind === "edit" ? textInsteadOf(e.path, this.#at(e.path), e.value) : null;
    if (question !== null && e.asked !== e.value) {
      e.asked = e.value;
      e.message = question;
      this.#render();
      return;
    }
    try {
      await this.#actions.set(target, typedValue(e.value));
      if (this.#editing === e) this.#editing = null;
      this.#render();
    } catch (error) {
      e.message = error instanceof Error ? error.message : String(error);
      this.#render();
    }
  }

  async #remove(path: string): Promise<void> {
    try {
      await this.#actions.remove(path);
    } catch (error) {
      this.#log.prepend(
        h("li", { class: "error", text: `Could not remove ${path}: ${(error as Error).message}` }),
      );
    }
  }

  #at(path: string): JsonValue | undefined {
    let node: JsonValue | undefined = this.#state ?? undefined;
    for (const segment of path === "" ? [] : path.split(".")) {
      if (Array.isArray(node)) node = node[Number(segment)];
      else if (isJsonObject(node)) node = node[segment];
      else return undefined;
    }
    return node;
  }
}
