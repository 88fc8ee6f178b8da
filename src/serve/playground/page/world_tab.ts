/// <reference lib="dom" />
/**
 * The persona editor's World tab: the initial world as JSONC text. It owns the tab's text box and message, and
 * the draft: text that is not a JSON object is not written into the persona document but kept (with the page's
 * saved state) as a draft of the world it was typed over, shown again after a reload while that world is
 * unchanged. The editor gives it a small {@link WorldTabHost}: the document, the deferred writes, and what to
 * tell when the document changed.
 * @module
 */
import { isJsonObject, type JsonObject, type JsonValue } from "../../../protocol/json.ts";
import { parseJsonc, type PersonaDocument } from "./document.ts";
import { pretty } from "./dom.ts";
import { type FormParts, worldPanel } from "./editor_panels.ts";
import { CHECKING } from "./field_widgets.ts";
import type { Saved } from "./storage.ts";

/** What the World tab needs from the editor. */
export interface WorldTabHost {
  /** The persona document (every edit still waiting written first). */
  readonly doc: PersonaDocument;
  /** What the page saves (the world's draft is kept in its `drafts.world`). */
  readonly saved: Saved;
  /** Whether an edit to the document waits for a pause in typing (a long document). */
  defer(): boolean;
  /** Queues the World tab's edit: `write` runs now, or after a pause in typing when `defer`. */
  edit(write: () => void, defer: boolean): void;
  /** Writes every edit still waiting into the document. */
  flush(): void;
  /** The world was written into the document (update the other views and persist). */
  documentChanged(): void;
  /** The draft changed (persist it). */
  changed(): void;
}

/**
 * The World tab.
 *
 * @example
 * ```ts ignore
 * const world = new WorldTab(form, host);
 * world.sync(doc.value, doc.problem !== null); // after every change of the document
 * world.restoreDraft(); // once, after the first sync
 * ```
 */
export class WorldTab {
  /** The tab's panel. */
  readonly panel: HTMLElement;
  readonly #host: WorldTabHost;
  readonly #input: HTMLTextAreaElement;
  readonly #message: HTMLElement;
  /** The world (as JSON text) the box shows, as last synced from or written to the document. */
  #synced: string | undefined;
  /** Why the box's text is not a world (it is kept as a draft, not written), or null. */
  #problem: string | null = null;

  /** Builds the tab (with `form`'s banner); `host` is the editor. */
  constructor(form: FormParts, host: WorldTabHost) {
    this.#host = host;
    const world = worldPanel(form, { onInput: () => this.#onInput() });
    this.panel = world.panel;
    this.#input = world.input;
    this.#input.addEventListener("focusout", () => host.flush());
    this.#message = world.message;
  }

  /** A World tab edit: written into the document at once, or, in a long document, after a pause in typing. */
  #onInput(): void {
    const defer = this.#host.defer();
    if (defer && this.#message.textContent !== "") {
      this.#message.textContent = CHECKING;
      this.#message.classList.add("checking");
      this.#input.setAttribute("aria-invalid", "false");
      this.#input.closest(".field")?.classList.remove("has-error");
    }
    this.#host.edit(() => this.#write(), defer);
  }

  /** Writes the World tab's box into the document (when it is a JSON object), or keeps it as a draft. */
  #write(): void {
    const host = this.#host;
    this.#message.classList.remove("checking");
    const text = this.#input.value.trim();
    if (text === "") {
      this.#problem = null;
      delete host.saved.drafts.world;
      this.#message.textContent = "";
      this.#input.setAttribute("aria-invalid", "false");
      this.#safeSet(undefined);
      this.#synced = "null";
      host.documentChanged();
      return;
    }
    const parsed = parseJsonc(text, "The world");
    const problem = parsed.problem?.message ??
      (isJsonObject(parsed.value) ? null : "The world must be a JSON object ({…}).");
    this.#input.setAttribute("aria-invalid", String(problem !== null));
    this.#input.closest(".field")?.classList.toggle("has-error", problem !== null);
    this.#problem = problem === null ? null : `${problem} Nothing was changed.`;
    if (problem !== null) {
      this.#message.textContent = this.#problem;
      host.saved.drafts.world = {
        text: this.#input.value,
        base: JSON.stringify(host.doc.get(["world"]) ?? null),
      };
      host.changed();
      return;
    }
    delete host.saved.drafts.world;
    this.#message.textContent = "";
    if (this.#safeSet(parsed.value)) {
      this.#synced = JSON.stringify(parsed.value);
      host.documentChanged();
    }
  }

  /**
   * Why the box's text is not a world, or null: Start would use the document's world, from before that text
   * (the status list says so and Start waits for it).
   */
  problem(): string | null {
    return this.#problem;
  }

  /** Puts the focus in the box. */
  focus(): void {
    this.#input.focus();
  }

  /** Shows the saved draft again when the document's world is still the one it was typed over. */
  restoreDraft(): void {
    const draft = this.#host.saved.drafts.world;
    if (draft && draft.base === JSON.stringify(this.#host.doc.get(["world"]) ?? null)) {
      this.#input.value = draft.text;
      this.#write();
    }
  }

  /** Sets the document's world; false (the message says why) when it could not. */
  #safeSet(value: JsonValue | undefined): boolean {
    try {
      this.#host.doc.set(["world"], value);
      return true;
    } catch (error) {
      this.#message.textContent = `Not saved: ${(error as Error).message}`;
      return false;
    }
  }

  /**
   * Shows the document's world (`value` is the document's value) unless the box shows it already or holds a
   * draft; `disabled` while the JSONC text has a syntax problem.
   */
  sync(value: JsonObject, disabled: boolean): void {
    const world = value.world;
    const worldJson = JSON.stringify(world ?? null);
    if (this.#synced !== worldJson && !this.#host.saved.drafts.world) {
      this.#input.value = world === undefined || world === null ? "" : pretty(world);
      this.#message.textContent = "";
      this.#synced = worldJson;
    }
    this.#input.disabled = disabled;
  }
}
