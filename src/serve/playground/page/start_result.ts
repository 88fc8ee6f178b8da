/// <reference lib="dom" />
/**
 * What the persona editor shows under its toolbars after a start, restore or apply: the bridge's error or
 * warnings, the page's own warnings, a note.
 * @module
 */
import { didYouMean } from "../../../protocol/edit_distance.ts";
import { h } from "./dom.ts";

/** The outcome of a start, restore or apply. */
export interface StartResult {
  /** The error (a field it names is marked too, unless `marks` says what it is about). */
  error?: string;
  /**
   * The paths the error is about, whose fields are marked with it (default: those it names, `pathsIn` of
   * bridge_paths.ts). A restore's error is about the state file's keys, not the editor's fields of the same names.
   */
  marks?: readonly string[];
  /** What the page says after the error (not by the field): "Mira runs on as before." */
  afterError?: string;
  /** The bridge's warnings. */
  warnings?: readonly string[];
  /** The page's own warnings (e.g. a state file with no world snapshot). */
  pageWarnings?: readonly string[];
  /** A note. */
  note?: string;
  /** A note in the warning's colour (e.g. a loaded file with problems). */
  warningNote?: string;
  /** Offer "Start anyway" after the error. */
  force?: boolean;
}

/**
 * The page's own hint after a bridge warning about an unknown key that names no field meant ("Unknown
 * parameter 'persona.nmae' was ignored."): the known key it most likely misspells (from the review's `hints`),
 * or null. The bridge's text stays as it came; a warning where the bridge names the field itself ("… (did you
 * mean 'name'?).") gets none.
 */
export function misspeltHint(warning: string, hints: ReadonlyMap<string, string>): HTMLElement | null {
  const path = /^Unknown parameter '([^']+)' was ignored\.$/.exec(warning)?.[1];
  const meant = path === undefined ? undefined : hints.get(path);
  return meant === undefined
    ? null
    : h("span", { class: "hint", text: didYouMean(meant, { as: "sentence" }) });
}

/**
 * The outcome of a start, restore or apply as elements: an error (with "Start anyway" when `force`), the
 * bridge's warnings (with the page's "did you mean" after one about a misspelt key: {@link misspeltHint}),
 * the page's own, a note, or a note in the warning's colour.
 *
 * @example
 * ```ts ignore
 * const items = resultItems({ note: "Started Mira (npc-1)." }, { startAnyway: () => {}, hints: new Map() });
 * document.getElementById("start-result")!.replaceChildren(...items);
 * ```
 */
export function resultItems(
  result: StartResult,
  how: { startAnyway: () => void; hints: ReadonlyMap<string, string> },
): Node[] {
  const items: Node[] = [];
  if (result.error) {
    items.push(
      h(
        "p",
        { class: "error" },
        result.error,
        result.afterError ? ` ${result.afterError}` : null,
        // The space between the two sentences goes before the link: one at the start of its text is lost.
        result.force ? " " : null,
        result.force
          ? h("button", {
            type: "button",
            class: "link",
            text: "Start anyway",
            on: { click: how.startAnyway },
          })
          : null,
      ),
    );
  }
  if (result.warnings && result.warnings.length > 0) {
    items.push(
      h(
        "div",
        { class: "warning" },
        h("p", { text: "The bridge's warnings:" }),
        h(
          "ul",
          { class: "messages" },
          ...result.warnings.map((w) => h("li", { class: "warning" }, w, misspeltHint(w, how.hints))),
        ),
      ),
    );
  }
  if (result.pageWarnings && result.pageWarnings.length > 0) {
    items.push(
      h(
        "ul",
        { class: "messages warning" },
        ...result.pageWarnings.map((w) => h("li", { class: "warning", text: w })),
      ),
    );
  }
  if (result.note) items.push(h("p", { class: "note", text: result.note }));
  if (result.warningNote) items.push(h("p", { class: "warning", text: result.warningNote }));
  return items;
}
