/// <reference lib="dom" />
/**
 * The editor's status line above Start: whether the NPC running now is as the editor has it (the settings it
 * was started, applied or restored with, compared with the editor's), the summary (problems that block a start,
 * warnings), and the list of checks, each with a link to the field, tool or script it is about.
 * @module
 */
import { isJsonObject, type JsonValue } from "../../../protocol/json.ts";
import { type Review, unknownFieldsText } from "./document.ts";
import { h } from "./dom.ts";
import type { Check } from "./fields.ts";
import { OPTION_DEFAULTS, PERSONA_DEFAULTS, withoutDefaults } from "./npc_defaults.ts";

/**
 * What Apply gives a running NPC (its persona, options and client tools) and the model it runs on, as one
 * text with the objects' keys sorted and the bridge's defaults left out ({@link withoutDefaults}): an NPC
 * started, applied or restored from settings with the same text runs as the editor has it.
 *
 * For example (not a doc test: this module needs the DOM):
 *   settingsKey({ persona: { role: "innkeeper", name: "Mira" } }, undefined) ===
 *     settingsKey({ persona: { name: "Mira", role: "innkeeper" }, tools: [] }, null); // true
 */
export function settingsKey(
  from: { persona?: JsonValue; options?: JsonValue; tools?: JsonValue },
  model: JsonValue | undefined,
): string {
  const sorted = (v: JsonValue): JsonValue =>
    Array.isArray(v)
      ? v.map(sorted)
      : isJsonObject(v)
      ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, sorted(v[k])]))
      : v;
  // A default spelled out (a restored NPC's settings have every key) is the same as one left out.
  const persona = withoutDefaults(from.persona, PERSONA_DEFAULTS);
  const options = withoutDefaults(from.options, OPTION_DEFAULTS);
  return JSON.stringify(sorted([persona, options, from.tools ?? [], model ?? null] as JsonValue));
}

/**
 * The NPC running now, as the status line knows it: its name, and the {@link settingsKey} of what it was
 * started, applied or restored with (null when unknown).
 *
 * For example (not a doc test: this module needs the DOM):
 *   const running = new RunningNpc();
 *   running.set("Mira", settingsKey({ persona: { name: "Mira" } }, null));
 *   running.stale(settingsKey({ persona: { name: "Mira", role: "innkeeper" } }, null)); // true
 */
export class RunningNpc {
  #name: string | null = null;
  #key: string | null = null;

  /** The name of the NPC running now ("" when it has none), or null when none runs. */
  get name(): string | null {
    return this.#name;
  }

  /** Sets the NPC running now (`name` null: none); false when it was already so. */
  set(name: string | null, key: string | null = null): boolean {
    if (name === this.#name && key === this.#key) return false;
    this.#name = name;
    this.#key = name === null ? null : key;
    return true;
  }

  /** Whether the NPC running now is not as the editor has it, the editor's settings being `editorKey`. */
  stale(editorKey: string): boolean {
    return this.#name !== null && this.#key !== null && this.#key !== editorKey;
  }
}

/** A check in the status list: `link` (to the field, tool or script it is about), then its text. */
export function checkItem(check: Check, link: HTMLElement): HTMLElement {
  return h("li", { class: check.error ? "error" : "warning" }, link, `: ${check.error ?? check.warning}`);
}

/** The links of the status list's checks. */
export interface CheckLinks {
  /** To the field at `path` (`persona.name`). */
  field(path: string): HTMLElement;
  /** To tool `index`. */
  tool(index: number): HTMLElement;
}

/**
 * The review's checks as list items, in order: the file's, each field's and each tool's (the page's, then
 * the bridge's `toolNotes`, by index), each with its link, and the unknown fields.
 */
export function reviewItems(
  review: Review,
  { toolNotes, links }: {
    /** The bridge's notes on each tool, by its index. */
    toolNotes: Map<number, Check[]>;
    /** Where each check's link goes. */
    links: CheckLinks;
  },
): HTMLElement[] {
  const items: HTMLElement[] = review.file.map((c) =>
    h("li", { class: c.error ? "error" : "warning", text: c.error ?? c.warning ?? "" })
  );
  for (const [path, check] of review.fields) items.push(checkItem(check, links.field(path)));
  review.tools.forEach((checks, i) => {
    for (const c of checks) items.push(checkItem(c, links.tool(i)));
  });
  for (const [i, checks] of toolNotes) {
    for (const c of checks) items.push(checkItem(c, links.tool(i)));
  }
  if (review.unknown.length > 0) {
    items.push(h("li", { class: "warning unknown-fields" }, unknownFieldsText(review)));
  }
  return items;
}

/**
 * The status summary: whether an NPC is running (`running`, its name) and whether as the editor has it now
 * (`stale`: not), then how many problems block a start (or an apply and a restart, while one runs) or "Ready to
 * start" ("ready to apply or restart"), and how many warnings.
 */
function statusSummary({ problems, warnings, more, running, stale }: {
  problems: number;
  warnings: number;
  /** A list of checks follows. */
  more: boolean;
  /** The name of the NPC running now, or null. */
  running: string | null;
  /** The NPC running now is not as the editor has it (its persona, options, tools or model differ). */
  stale: boolean;
}): HTMLElement {
  const blocked = (what: string) => `${problems} problem${problems > 1 ? "s" : ""} to fix before ${what}`;
  const ready = problems > 0 ? blocked("starting") : "Ready to start";
  const readyAgain = problems > 0 ? blocked("applying or restarting") : "ready to apply or restart";
  return h(
    "p",
    { class: problems > 0 ? "error summary" : "summary" },
    running === null
      ? ready
      : `${running || "The NPC"} is running${stale ? ", not as the editor has it now" : ""}; ${readyAgain}`,
    warnings > 0 ? ` (${warnings} warning${warnings > 1 ? "s" : ""})` : "",
    more ? ":" : ".",
  );
}

/** What the status line shows (see {@link statusLine}). */
export interface StatusParts {
  /** The JSONC text's syntax problem (with its link), or null. */
  syntax: HTMLElement | null;
  /**
   * Problems outside the file's own checks, as list items (with their links), each blocking a start: the
   * script's, and the World tab's text that is not a world (kept as a draft, not in the file).
   */
  outside: HTMLElement[];
  /** The review's checks ({@link reviewItems}); not shown while there is a syntax problem. */
  checks: HTMLElement[];
  /** How many of `checks` are errors. */
  errors: number;
  /** The name of the NPC running now, or null. */
  running: string | null;
  /** The NPC running now is not as the editor has it. */
  stale: boolean;
}

/**
 * The status line's content: the JSONC syntax problem, a summary (problems that block a start, warnings),
 * and the list of checks; while the text has a syntax problem, the checks of the file are paused (those of
 * its last valid version may no longer hold): the summary counts the syntax problem (and the script's, which
 * those outside the file) and a note says the others come back once it is fixed.
 */
export function statusLine({ syntax, outside, checks, errors, running, stale }: StatusParts): Node[] {
  if (syntax) {
    const more = outside.length > 0;
    return [
      syntax,
      statusSummary({ problems: 1 + outside.length, warnings: 0, more, running, stale }),
      ...(more ? [h("ul", { class: "messages" }, ...outside)] : []),
      h("p", { class: "paused-note", text: "The other checks are paused until the syntax error is fixed." }),
    ];
  }
  const list = [...checks, ...outside];
  const problems = errors + outside.length;
  return [
    statusSummary({ problems, warnings: list.length - problems, more: list.length > 0, running, stale }),
    ...(list.length > 0 ? [h("ul", { class: "messages" }, ...list)] : []),
  ];
}

/**
 * Marks the status line `status` as waiting for an edit to be checked (a long document's edits are written
 * after a pause in typing): the summary says so, and the list of checks, which may no longer hold, is dimmed
 * and hidden from assistive technology until the next {@link statusLine} replaces it. Nothing changes height,
 * so the field being typed in does not move.
 *
 * @example
 * ```ts ignore
 * showChecking(document.getElementById("editor-status")!, "Checked when you pause typing.");
 * ```
 */
export function showChecking(status: HTMLElement, text: string): void {
  status.setAttribute("aria-busy", "true");
  status.querySelector(".summary")?.replaceWith(h("p", { class: "summary checking", text }));
  for (const stale of status.querySelectorAll(":scope > :not(.summary)")) {
    stale.classList.add("checking");
    stale.setAttribute("aria-hidden", "true");
  }
}
