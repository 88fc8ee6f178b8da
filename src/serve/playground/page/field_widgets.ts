/// <reference lib="dom" />
/**
 * Form widgets of the persona editor, one per field kind: each reads its value for the persona document
 * (`undefined` = absent, the default applies) and shows a value from it. Input that is not what the field
 * takes (letters in a number field) is kept as typed and stored as is, so the check beside the field says
 * what is wrong and nothing typed is lost.
 * @module
 */
import type { JsonValue } from "../../../protocol/json.ts";
import { h, uid } from "./dom.ts";
import { EMOTION_NAMES, fieldHint, type FieldKind, type FieldSpec, MEMORY_TOOLS } from "./fields.ts";
import { listFrom, numberFrom } from "./values.ts";

/** A field's widget. */
export interface FieldWidget {
  /** The field. */
  spec: FieldSpec;
  /** `section.key`. */
  path: string;
  /** The whole field (label, control, hint, message). */
  root: HTMLElement;
  /** The control a keyboard user lands on. */
  focusable: HTMLElement;
  /** Reads the value for the document. */
  read(): JsonValue | undefined;
  /** Shows `value`. */
  write(value: JsonValue | undefined): void;
  /** Shows a check's message (error or warning) or clears it. */
  mark(check: { error?: string; warning?: string } | undefined): void;
  /**
   * Says the field is checked again once the designer pauses typing (a long document): the check it shows,
   * which may no longer hold, is not shown meanwhile.
   */
  checking(): void;
  /** Updates the tool names a tool field offers. */
  setTools(names: readonly string[]): void;
  /** Enables or disables the control(s). */
  setDisabled(disabled: boolean): void;
}

/** What a field or the status list says while an edit waits for a pause in typing to be checked. */
export const CHECKING = "Checked when you pause typing.";

function textOf(value: JsonValue | undefined): string {
  if (value === undefined || value === null) return "";
  return typeof value === "string" ? value : JSON.stringify(value);
}

function listText(value: JsonValue | undefined): string {
  if (value === undefined || value === null) return "";
  if (!Array.isArray(value)) return JSON.stringify(value);
  return value.map((item) => typeof item === "string" ? item : JSON.stringify(item)).join("\n");
}

function selectOptions(select: HTMLSelectElement, options: [string, string][], current: string): void {
  select.replaceChildren(...options.map(([value, label]) => h("option", { value, text: label })));
  if (!options.some(([value]) => value === current)) {
    select.append(h("option", { value: current, text: `${current} (not available)` }));
  }
  select.value = current;
}

/** A form control of a widget (marked invalid and disabled together). */
type Control = HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement;

/** What a widget kind's builder gets: the field's ids and attributes, and the edit callback. */
interface WidgetContext {
  /** The control's id (checkboxes: `${id}-${name}`). */
  id: string;
  /** `hint-id message-id`, for `aria-describedby`. */
  describedBy: string;
  /** The attributes of the field's main control: id, name, aria-describedby. */
  common: { id: string; name: string; "aria-describedby": string };
  /** Reports an edit. */
  fire(): void;
}

/** What a widget kind's builder makes: the control(s) and how they read and show a value. */
interface WidgetParts {
  /** The field's content between its label and its hint. */
  body: HTMLElement;
  /** The control a keyboard user lands on. */
  focusable: HTMLElement;
  /** Every control (marked invalid and disabled together). */
  controls: Control[];
  read(): JsonValue | undefined;
  write(value: JsonValue | undefined): void;
  /** Updates the tool names offered (tool fields only). */
  setTools?(names: readonly string[]): void;
  /** Re-applies what enabling all controls undid (the unlock field's "always" box). */
  afterEnable?(): void;
}

/** Text, id, long text, list and paths: an input or a textarea (a list is one item per line). */
function textWidget(spec: FieldSpec, { common, fire }: WidgetContext): WidgetParts {
  const multi = spec.kind !== "text" && spec.kind !== "id";
  const control = multi
    ? h("textarea", { ...common, rows: spec.kind === "longtext" ? 2 : 3, spellcheck: "true", dir: "auto" })
    : h("input", { ...common, type: "text", autocomplete: "off", dir: "auto" }); // Arabic reads right to left
  if (spec.required) control.setAttribute("aria-required", "true");
  control.placeholder = spec.kind === "list" || spec.kind === "paths" ? "one per line" : "";
  control.addEventListener("input", fire);
  const isList = spec.kind === "list" || spec.kind === "paths";
  return {
    body: control,
    focusable: control,
    controls: [control],
    read: () => {
      if (isList) return listFrom(control.value);
      return control.value === "" ? undefined : control.value;
    },
    write: (value) => control.value = isList ? listText(value) : textOf(value),
  };
}

/** Integer, number and seconds: a short text input (so what is typed stays as typed). */
function numberWidget(spec: FieldSpec, { common, fire }: WidgetContext): WidgetParts {
  const control = h("input", {
    ...common,
    type: "text",
    inputmode: spec.kind === "integer" ? "numeric" : "decimal",
    autocomplete: "off",
    class: "short",
    placeholder: spec.defaultText,
  });
  control.addEventListener("input", fire);
  return {
    body: control,
    focusable: control,
    controls: [control],
    read: () => numberFrom(control.value),
    write: (value) => control.value = textOf(value),
  };
}

/** The options of a select field (value, label), the first one "(default: …)". */
function choicesOf(spec: FieldSpec, tools: readonly string[]): [string, string][] {
  const none: [string, string] = ["", `(default: ${spec.defaultText})`];
  switch (spec.kind) {
    case "boolean":
      return [none, ["true", "true"], ["false", "false"]];
    case "choice":
      return [none, ...(spec.choices ?? []).map((c): [string, string] => [c, c])];
    case "emotion":
      return [none, ...EMOTION_NAMES.map((e): [string, string] => [e, e])];
    case "tool":
      return [none, ...tools.map((t): [string, string] => [t, t])];
    default:
      return [
        none,
        ...["auto", "none", "required", "explicit"].map((c): [string, string] => [c, c]),
        ...tools.map((t): [string, string] => [`tool:${t}`, `{"tool": "${t}"}`]),
      ];
  }
}

/** A document value as a select field's option value (`{"tool": "x"}` is `tool:x`). */
function choiceValue(spec: FieldSpec, value: JsonValue | undefined): string {
  if (value === undefined || value === null) return "";
  if (spec.kind === "toolChoice" && typeof value === "object" && !Array.isArray(value)) {
    return typeof value.tool === "string" ? `tool:${value.tool}` : JSON.stringify(value);
  }
  return typeof value === "string" ? value : JSON.stringify(value);
}

/** A select field's option value as a document value (undefined for the default). */
function choiceRead(spec: FieldSpec, v: string): JsonValue | undefined {
  if (v === "") return undefined;
  if (spec.kind === "boolean") return v === "true" ? true : v === "false" ? false : v;
  if (spec.kind === "toolChoice" && v.startsWith("tool:")) return { tool: v.slice(5) };
  if (v.startsWith("{") || v.startsWith("[")) {
    try {
      return JSON.parse(v);
    } catch {
      return v;
    }
  }
  return v;
}

/** Boolean, choice, emotion, tool and tool choice: a select; a value it does not offer shows as "not available". */
function selectWidget(spec: FieldSpec, { common, fire }: WidgetContext): WidgetParts {
  const control = h("select", common);
  control.addEventListener("change", fire);
  let tools: readonly string[] = [];
  let current: JsonValue | undefined;
  const render = () => selectOptions(control, choicesOf(spec, tools), choiceValue(spec, current));
  const read = () => choiceRead(spec, control.value);
  render();
  return {
    body: control,
    focusable: control,
    controls: [control],
    read,
    write: (value) => {
      current = value;
      render();
    },
    setTools: (names) => {
      tools = names;
      current = read();
      render();
    },
  };
}

/** The checkboxes a value checks: `"all"`, the memory tools levels 1–3, or a list (tool names in either spelling). */
function checkedNames(value: JsonValue | undefined, names: readonly string[]): string[] {
  if (value === "all" || value === 3) return [...names];
  if (value === 1) return ["rememberFact"];
  if (value === 2) return ["changeRelationship"];
  if (!Array.isArray(value)) return [];
  return value.map((v) =>
    v === "remember_fact" ? "rememberFact" : v === "change_relationship" ? "changeRelationship" : String(v)
  );
}

/** Emotions and memory tools: a fieldset of checkboxes (none checked: absent). */
function checksWidget(spec: FieldSpec, { id, describedBy, fire }: WidgetContext): WidgetParts {
  const names = spec.kind === "emotions" ? EMOTION_NAMES : MEMORY_TOOLS;
  const boxes = names.map((name) => {
    const box = h("input", { type: "checkbox", id: `${id}-${name}`, value: name });
    box.addEventListener("change", fire);
    return box;
  });
  const fieldset = h(
    "fieldset",
    { class: `checks ${spec.kind}`, "aria-describedby": describedBy },
    h("legend", { text: spec.label }),
    ...boxes.map((box) => h("label", { class: "check", for: box.id }, box, h("span", { text: box.value }))),
  );
  return {
    body: fieldset,
    focusable: boxes[0],
    controls: [...boxes],
    read: () => {
      const on = boxes.filter((b) => b.checked).map((b) => b.value);
      return on.length === 0 ? undefined : on;
    },
    write: (value) => {
      const on = checkedNames(value, names);
      for (const box of boxes) box.checked = on.includes(box.value);
    },
  };
}

/** The secrets' unlock threshold: a number, or "always" (`null`: guarded only). */
function unlockWidget(spec: FieldSpec, { id, common, fire }: WidgetContext): WidgetParts {
  const control = h("input", {
    ...common,
    type: "text",
    inputmode: "numeric",
    class: "short",
    autocomplete: "off",
    placeholder: spec.defaultText,
  });
  const always = h("input", { type: "checkbox", id: `${id}-always` });
  control.addEventListener("input", fire);
  always.addEventListener("change", () => {
    control.disabled = always.checked;
    fire();
  });
  return {
    body: h(
      "span",
      { class: "inline" },
      control,
      h("label", { class: "check", for: always.id }, always, h("span", { text: "always (null: guarded)" })),
    ),
    focusable: control,
    controls: [control, always],
    read: () => always.checked ? null : numberFrom(control.value),
    write: (value) => {
      always.checked = value === null;
      control.disabled = value === null;
      control.value = value === null ? "" : textOf(value);
    },
    afterEnable: () => control.disabled = always.checked,
  };
}

/** The builder of each field kind. */
const BUILDERS: Record<FieldKind, (spec: FieldSpec, context: WidgetContext) => WidgetParts> = {
  text: textWidget,
  id: textWidget,
  longtext: textWidget,
  list: textWidget,
  paths: textWidget,
  integer: numberWidget,
  number: numberWidget,
  seconds: numberWidget,
  boolean: selectWidget,
  choice: selectWidget,
  emotion: selectWidget,
  tool: selectWidget,
  toolChoice: selectWidget,
  emotions: checksWidget,
  memoryTools: checksWidget,
  unlock: unlockWidget,
};

/** Builds the widget of `spec`; `onInput` is called on every edit. */
export function fieldWidget(spec: FieldSpec, onInput: (widget: FieldWidget) => void): FieldWidget {
  const id = uid(`f-${spec.section}-${spec.key}`);
  const hintId = `${id}-hint`;
  const messageId = `${id}-message`;
  const describedBy = `${hintId} ${messageId}`;
  const hint = h("p", { class: "hint", id: hintId, text: fieldHint(spec) });
  const message = h("p", { class: "message", id: messageId, "aria-live": "polite" });
  const common = { id, name: `${spec.section}.${spec.key}`, "aria-describedby": describedBy };
  const parts = BUILDERS[spec.kind](spec, { id, describedBy, common, fire: () => onInput(widget) });
  const grouped = spec.kind === "emotions" || spec.kind === "memoryTools";
  const root = h(
    "div",
    { class: `field kind-${spec.kind}`, "data-field": `${spec.section}.${spec.key}` },
    grouped ? null : h("label", { for: id, text: spec.label }),
    parts.body,
    hint,
    message,
  );
  const widget: FieldWidget = {
    spec,
    path: `${spec.section}.${spec.key}`,
    root,
    focusable: parts.focusable,
    read: () => parts.read(),
    write: (value) => parts.write(value),
    mark(check) {
      const text = check?.error ?? check?.warning ?? "";
      message.textContent = text;
      message.classList.remove("checking");
      root.classList.toggle("has-error", Boolean(check?.error));
      root.classList.toggle("has-warning", !check?.error && Boolean(check?.warning));
      for (const c of parts.controls) c.setAttribute("aria-invalid", String(Boolean(check?.error)));
    },
    checking() {
      // Only a check shown now is replaced (a field with none gets no line that comes and goes while typing).
      if (message.textContent === "") return;
      widget.mark(undefined);
      message.textContent = CHECKING;
      message.classList.add("checking");
    },
    setTools(names) {
      parts.setTools?.(names);
    },
    setDisabled(disabled) {
      for (const c of parts.controls) c.disabled = disabled;
      if (!disabled) parts.afterEnable?.();
    },
  };
  return widget;
}
