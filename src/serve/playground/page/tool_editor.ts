/// <reference lib="dom" />
/**
 * The Tools tab: the NPC's client tools (name, description, JSON Schema of the arguments, timeout) as cards
 * that edit the persona document, and how the page answers each tool (by hand, or automatically with a
 * canned answer). A schema that is not valid JSON stays in its box as typed, with the problem beside it.
 * @module
 */
import type { JsonObject, JsonValue } from "../../../protocol/json.ts";
import type { Check } from "./fields.ts";
import { parseJsonc, type PersonaDocument } from "./document.ts";
import { h, pretty, uid } from "./dom.ts";
import { numberFrom } from "./values.ts";
import type { Draft, ToolAnswer } from "./storage.ts";

/** What the tool editor needs from the page. */
export interface ToolEditorHost {
  /** The persona document. */
  doc: PersonaDocument;
  /** Drafts by key (shared with the page's storage). */
  drafts: Record<string, Draft>;
  /** Answer settings by tool name (shared with the page's storage). */
  answers: Record<string, ToolAnswer>;
  /** The document or a setting changed. */
  changed(): void;
}

function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The answer settings of a tool (manual by default). */
export function answerOf(answers: Record<string, ToolAnswer>, name: string): ToolAnswer {
  return Object.hasOwn(answers, name) ? answers[name] : { mode: "manual", text: "", asError: false };
}

interface Card {
  root: HTMLElement;
  /** JSON of the document's tool when the card was built (or last written by the card). */
  synced: string;
  mark(checks: Check[], bridge: string[]): void;
  setDisabled(disabled: boolean): void;
}

/** The Tools tab. */
export class ToolEditor {
  /** The tab's content. */
  readonly root: HTMLElement;
  readonly #host: ToolEditorHost;
  readonly #list: HTMLElement;
  readonly #add: HTMLButtonElement;
  #cards: Card[] = [];
  #bridge: Map<number, string[]> = new Map();

  /** A tools tab editing `host.doc`. */
  constructor(host: ToolEditorHost) {
    this.#host = host;
    this.#list = h("div", { class: "tool-cards" });
    this.#add = h("button", {
      type: "button",
      text: "Add a tool",
      on: { click: () => this.#addTool() },
    });
    this.root = h(
      "div",
      {},
      h("p", {
        class: "hint",
        text:
          "Client tools the game executes: when the NPC calls one, the call appears in the conversation " +
          "and you answer it there (or it is answered automatically).",
      }),
      this.#list,
      this.#add,
    );
  }

  /** The tools of the document. */
  #tools(): JsonValue[] {
    const tools = this.#host.doc.get(["tools"]);
    return Array.isArray(tools) ? tools : [];
  }

  /** Rebuilds the cards whose tool changed in the document (others keep what is typed in them). */
  sync(): void {
    const tools = this.#tools();
    if (tools.length !== this.#cards.length) {
      this.#cards = tools.map((tool, i) => this.#card(tool, i));
      this.#list.replaceChildren(...this.#cards.map((c) => c.root));
      return;
    }
    tools.forEach((tool, i) => {
      if (JSON.stringify(tool) === this.#cards[i].synced) return;
      const card = this.#card(tool, i);
      this.#cards[i].root.replaceWith(card.root);
      this.#cards[i] = card;
    });
  }

  /** Shows checks per tool (from the review) and the bridge's warnings from `tools/validate`. */
  mark(checks: Check[][]): void {
    this.#cards.forEach((card, i) => card.mark(checks[i] ?? [], this.#bridge.get(i) ?? []));
  }

  /** Sets the bridge's warnings or error for tool `index` (from `tools/validate`). */
  setBridgeNotes(notes: Map<number, string[]>): void {
    this.#bridge = notes;
  }

  /** Enables or disables editing (while the JSONC text has a syntax problem). */
  setDisabled(disabled: boolean): void {
    this.#add.disabled = disabled;
    for (const card of this.#cards) card.setDisabled(disabled);
  }

  /** The first control of tool `index` (to focus it). */
  focus(index: number): void {
    this.#cards[index]?.root.querySelector<HTMLElement>("input, textarea")?.focus();
  }

  #addTool(): void {
    const tools = this.#tools();
    const names = new Set(tools.map((t) => isObject(t) ? t.name : undefined));
    let n = tools.length + 1;
    while (names.has(`tool_${n}`)) n++;
    const tool = {
      name: `tool_${n}`,
      description: "What it does and what it returns.",
      parameters: { type: "object", properties: {}, required: [] },
    };
    if (this.#host.doc.get(["tools"]) === undefined) this.#host.doc.set(["tools"], [tool]);
    else this.#host.doc.set(["tools", tools.length], tool);
    this.#host.changed();
    this.focus(tools.length);
  }

  #card(tool: JsonValue, index: number): Card {
    const host = this.#host;
    const doc = host.doc;
    const t = isObject(tool) ? tool : {};
    let name = typeof t.name === "string" ? t.name : "";
    const id = uid(`tool-${index}`);
    const write = (key: string, value: JsonValue | undefined) => {
      try {
        doc.set(["tools", index, key], value);
      } catch (error) {
        problem.textContent = (error as Error).message;
        return;
      }
      card.synced = JSON.stringify(doc.get(["tools", index]));
      host.changed();
    };
    const legend = h("legend", { text: `Tool ${index + 1}: ${name || "(no name)"}` });
    const nameInput = h("input", { type: "text", id: `${id}-name`, value: name, autocomplete: "off" });
    nameInput.addEventListener("input", () => {
      const old = name;
      name = nameInput.value;
      legend.textContent = `Tool ${index + 1}: ${name || "(no name)"}`;
      if (Object.hasOwn(host.answers, old) && !Object.hasOwn(host.answers, name)) {
        host.answers[name] = host.answers[old];
        delete host.answers[old];
      }
      write("name", name);
    });
    const description = h("textarea", {
      id: `${id}-description`,
      rows: 2,
      value: typeof t.description === "string"
        ? t.description
        : t.description === undefined
        ? ""
        : pretty(t.description),
    });
    description.addEventListener(
      "input",
      () => write("description", description.value === "" ? undefined : description.value),
    );

    const draftKey = `tools.${index}.parameters`;
    const base = JSON.stringify(t.parameters ?? null);
    const draft = host.drafts[draftKey];
    const schema = h("textarea", {
      id: `${id}-parameters`,
      wrap: "off",
      class: "code",
      rows: 6,
      spellcheck: "false",
      value: draft && draft.base === base
        ? draft.text
        : t.parameters === undefined
        ? ""
        : pretty(t.parameters),
      "aria-describedby": `${id}-parameters-message`,
    });
    const schemaMessage = h("p", { class: "message", id: `${id}-parameters-message`, "aria-live": "polite" });
    const checkSchema = (): boolean => {
      if (schema.value.trim() === "") {
        schemaMessage.textContent = "";
        schema.setAttribute("aria-invalid", "false");
        return true;
      }
      const parsed = parseJsonc(schema.value, "The schema");
      schemaMessage.textContent = parsed.problem ? `${parsed.problem.message} Nothing was changed.` : "";
      schema.setAttribute("aria-invalid", String(parsed.problem !== null));
      schema.closest(".field")?.classList.toggle("has-error", parsed.problem !== null);
      return parsed.problem === null;
    };
    schema.addEventListener("input", () => {
      if (!checkSchema()) {
        host.drafts[draftKey] = {
          text: schema.value,
          base: JSON.stringify(doc.get(["tools", index, "parameters"]) ?? null),
        };
        host.changed();
        return;
      }
      delete host.drafts[draftKey];
      const text = schema.value.trim();
      write("parameters", text === "" ? undefined : parseJsonc(text).value);
    });

    const timeout = h("input", {
      type: "text",
      id: `${id}-timeout`,
      class: "short",
      inputmode: "decimal",
      placeholder: "NPC's",
      value: t.timeoutSeconds === undefined || t.timeoutSeconds === null ? "" : String(t.timeoutSeconds),
    });
    timeout.addEventListener("input", () => write("timeoutSeconds", numberFrom(timeout.value)));

    const answer = answerOf(host.answers, name);
    const setAnswer = (change: Partial<ToolAnswer>) => {
      host.answers[name] = { ...answerOf(host.answers, name), ...change };
      canned.closest(".canned")?.classList.toggle("active", host.answers[name].mode === "auto");
      host.changed();
    };
    const manual = h("input", {
      type: "radio",
      name: `${id}-mode`,
      id: `${id}-manual`,
      checked: answer.mode === "manual",
    });
    const auto = h("input", {
      type: "radio",
      name: `${id}-mode`,
      id: `${id}-auto`,
      checked: answer.mode === "auto",
    });
    manual.addEventListener("change", () => setAnswer({ mode: "manual" }));
    auto.addEventListener("change", () => setAnswer({ mode: "auto" }));
    const canned = h("textarea", {
      id: `${id}-canned`,
      class: "code",
      rows: 2,
      spellcheck: "false",
      value: answer.text,
      placeholder: '{"stock": 3} or plain text',
    });
    canned.addEventListener("input", () => setAnswer({ text: canned.value }));
    const asError = h("input", { type: "checkbox", id: `${id}-as-error`, checked: answer.asError });
    asError.addEventListener("change", () => setAnswer({ asError: asError.checked }));

    const problem = h("ul", { class: "messages", "aria-live": "polite" });
    const remove = h("button", {
      type: "button",
      class: "small danger",
      text: "Remove",
      "aria-label": `Remove tool ${name || index + 1}`,
      on: {
        click: () => {
          doc.set(["tools", index], undefined);
          delete host.drafts[draftKey];
          host.changed();
        },
      },
    });
    const controls = [nameInput, description, schema, timeout, manual, auto, canned, asError, remove];
    const root = h(
      "fieldset",
      { class: "tool-card", "data-tool": String(index) },
      legend,
      h(
        "div",
        { class: "field" },
        h("label", { for: nameInput.id, text: "Name" }),
        nameInput,
        h("p", { class: "hint", text: "1–64 of A–Z a–z 0–9 _ - . (unique)." }),
      ),
      h(
        "div",
        { class: "field" },
        h("label", { for: description.id, text: "Description" }),
        description,
        h("p", { class: "hint", text: "What it does and returns: the model decides from it." }),
      ),
      h(
        "div",
        { class: "field" },
        h("label", { for: schema.id, text: "Parameters (JSON Schema)" }),
        schema,
        schemaMessage,
      ),
      h(
        "div",
        { class: "field" },
        h("label", { for: timeout.id, text: "Timeout (s)" }),
        timeout,
        h("p", { class: "hint", text: "0–86400; 0 = none. Default: the NPC's tool timeout." }),
      ),
      h(
        "fieldset",
        { class: "answer-mode" },
        h("legend", { text: "Answer" }),
        h(
          "label",
          { class: "check", for: manual.id },
          manual,
          h("span", { text: "by hand, in the conversation" }),
        ),
        h("label", { class: "check", for: auto.id }, auto, h("span", { text: "automatically with:" })),
        h(
          "div",
          { class: `canned${answer.mode === "auto" ? " active" : ""}` },
          h("label", { for: canned.id, class: "visually-hidden", text: `Canned answer of ${name}` }),
          canned,
          h("label", { class: "check", for: asError.id }, asError, h("span", { text: "as an error" })),
        ),
      ),
      problem,
      remove,
    );
    if (draft && draft.base === base) checkSchema();
    const card: Card = {
      root,
      synced: JSON.stringify(tool),
      mark(checks, bridge) {
        const items = [
          ...checks.map((c) =>
            h("li", { class: c.error ? "error" : "warning", text: c.error ?? c.warning ?? "" })
          ),
          ...bridge.map((b) => h("li", { class: "warning", text: `Bridge: ${b}` })),
        ];
        problem.replaceChildren(...items);
        root.classList.toggle("has-error", checks.some((c) => c.error));
      },
      setDisabled(disabled) {
        for (const c of controls) c.disabled = disabled;
      },
    };
    return card;
  }
}
