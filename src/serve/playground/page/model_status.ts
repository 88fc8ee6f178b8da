/**
 * The bridge's model as the page shows it: the server's info (which model it runs), the model's
 * availability from the bridge, and both in the editor's Model tab and the top bar's model pill. Owns the
 * {@link ServerInfo} the page knows and fetching it again after a reconnect.
 * @module
 */
import { availabilityText } from "./availability_text.ts";
import type { Editor } from "./editor.ts";
import { fetchServerInfo, type Link, type ServerInfo } from "./link.ts";
import type { Saved } from "./storage.ts";
import { showModelPill } from "./top_bar.ts";

/** What {@link ModelStatus} shows and where. */
export interface ModelStatusOptions {
  link: Link;
  saved: Saved;
  /** The editor (undefined while it is being built: nothing is shown in it then). */
  editor: () => Editor | undefined;
}

/**
 * The bridge's model, its availability, and where the page shows them.
 *
 * @example
 * ```ts ignore
 * const status = new ModelStatus({ link, saved, editor: () => editor });
 * await status.load(); // the server's info, then shown
 * ```
 */
export class ModelStatus {
  /** The server's info (its model), or null until fetched (or when the server did not answer). */
  info: ServerInfo | null = null;
  readonly #options: ModelStatusOptions;

  constructor(options: ModelStatusOptions) {
    this.#options = options;
  }

  /** Fetches the server's info; the editor's model follows the server's, and both are shown. */
  async load(): Promise<void> {
    this.info = await fetchServerInfo();
    if (this.info) this.#options.editor()?.followServerModel(this.info.model.name);
    this.show();
  }

  /** Once connected: asks the bridge about its model (after a reconnect, the server's info again too). */
  async connected(): Promise<void> {
    const { link, editor } = this.#options;
    if (link.generation > 1) {
      // Connected again: the server may have been restarted with another model.
      const info = await fetchServerInfo();
      if (info) {
        this.info = info;
        editor()?.followServerModel(info.model.name);
      }
    }
    try {
      const availability = await link.availability();
      if (availability && link.server) link.server.model = availability;
    } catch {
      // shown as unknown
    }
    this.show();
  }

  /** The bridge's model and its availability, in the editor's Model tab and the top bar's model pill. */
  show(): void {
    const { link, saved } = this.#options;
    const editor = this.#options.editor();
    const label = this.info ? `${this.info.model.label}` : "system";
    const availability = link.server?.model;
    // Until the bridge answers `initialize` it is checking its model (loading a GGUF one); so it is before the
    // page's first connection is made (the server's info comes first), not "availability unknown".
    // The page's connection went away (and its retries, until one is answered): nothing is checking the model.
    const connected = !link.gone;
    const checking = link.pending && connected ? this.info?.model.name ?? "system" : undefined;
    editor?.setBridgeModel(
      `${label}, ${availabilityText(availability, { checking, connected })}`,
      availability ? availability.available : null,
      this.info?.model ?? null,
    );
    editor?.setBridgeContext(availability?.contextSize ?? null);
    showModelPill({ useScript: saved.useScript, label, availability, checking, connected });
  }
}
