/**
 * Start, Apply and restore as the page runs them: one at a time, with Start and Apply disabled meanwhile and
 * the focus given back to the button pressed, and, while the page is still connecting, a wait for the
 * connection (said under Start). Owns which of them is running now.
 * @module
 */
import { byId, focusLost } from "./dom.ts";
import type { Editor } from "./editor.ts";
import type { Link, ServerInfo } from "./link.ts";

/** What {@link NpcChanges} asks of the page. */
export interface NpcChangesOptions {
  link: Link;
  /** The editor, where each change says what it does (under Start). */
  editor: () => Editor;
  /** The server's info (its model), or null when unknown. */
  info: () => ServerInfo | null;
}

/**
 * One start, apply or restore at a time.
 *
 * @example
 * ```ts ignore
 * const changes = new NpcChanges({ link, editor: () => editor, info: () => null });
 * await changes.run("Starting the NPC", async () => {
 *   await changes.connected("starting the NPC");
 *   // …
 * });
 * ```
 */
export class NpcChanges {
  /** What start, apply or restore is running, or null. */
  current: string | null = null;
  readonly #options: NpcChangesOptions;

  constructor(options: NpcChangesOptions) {
    this.#options = options;
  }

  /**
   * Runs one start, apply or restore at a time, with Start and Apply disabled meanwhile. The button pressed
   * gets the focus back when it is enabled again (disabling it dropped the focus to the page's body, where a
   * keyboard or screen reader user loses their place), unless the focus moved on meanwhile.
   */
  async run(label: string, run: () => Promise<void>): Promise<void> {
    const editor = this.#options.editor();
    if (this.current !== null) {
      editor.showResult({ error: `${this.current} is not finished yet.` });
      return;
    }
    this.current = label;
    const buttons = ["start", "apply"].map((id) => byId<HTMLButtonElement>(id));
    const pressed = buttons.find((b) => b === document.activeElement) ?? null;
    for (const b of buttons) b.disabled = true;
    editor.showResult({ note: `${label}…` });
    try {
      await run();
    } finally {
      this.current = null;
      for (const b of buttons) b.disabled = false;
      if (pressed && focusLost()) pressed.focus();
    }
  }

  /**
   * Waits while the page is still connecting: the first connection waits for the bridge's model (a GGUF model
   * is loaded first, seconds or more), and a Start or restore pressed meanwhile runs once it is open (`doing`
   * says what, under Start). Rejects when the connection fails.
   */
  async connected(doing: string): Promise<void> {
    const { link, info } = this.#options;
    if (!link.pending) return;
    const editor = this.#options.editor();
    const loading = info()?.model.name === "llama";
    editor.showResult({
      note: loading
        ? `Waiting for the bridge to load its model, then ${doing}…`
        : `Waiting for the connection to the bridge, then ${doing}…`,
    });
    await link.opened();
    editor.showResult({ note: `${doing[0].toUpperCase()}${doing.slice(1)}…` });
  }
}
