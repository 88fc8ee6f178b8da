/**
 * The raw log's place on the page: mounted in its host, open or closed as the designer left it, with the
 * top bar's toggle. Owns the toggle's state (`aria-pressed`, the page's `log-open` class).
 * @module
 */
import { byId } from "./dom.ts";
import type { LogView } from "./log_view.ts";
import type { Saved } from "./storage.ts";

/** What {@link mountLog} puts on the page and where it keeps the choice. */
export interface MountLogOptions {
  log: LogView;
  /** Keeps `logOpen`. */
  saved: Saved;
  /** Stores {@link saved} (after a toggle). */
  persist: () => void;
}

/**
 * Puts the raw log on the page (in `#log-host`), open or closed as it was, with its toggle (`#toggle-log`).
 *
 * @example
 * ```ts ignore
 * mountLog({ log: new LogView(), saved, persist: () => storeSaved(saved) });
 * ```
 */
export function mountLog({ log, saved, persist }: MountLogOptions): void {
  byId("log-host").append(log.root);
  const toggle = byId<HTMLButtonElement>("toggle-log");
  const setLog = (open: boolean) => {
    saved.logOpen = open;
    toggle.setAttribute("aria-pressed", String(open));
    log.setVisible(open);
    document.body.classList.toggle("log-open", open);
  };
  toggle.addEventListener("click", () => {
    setLog(!saved.logOpen);
    persist();
    // In one column (a phone) the log opens below every panel: bring it on the screen.
    if (saved.logOpen) log.root.scrollIntoView({ block: "nearest" });
  });
  setLog(saved.logOpen);
}
