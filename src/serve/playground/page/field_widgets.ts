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
import { EMOTION_NAMES, type FieldSpec, MEMORY_TOOLS } from "./fields.ts";
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
  /** Updates the tool names a tool field offers. */
  setTools(names: readonly string[]): void;
  /** Enables or disables the control(s). */
  setDisabled(disabled: boolean): void;
}

function textOf(value: JsonValue | undefined): string {
  if (value === undefined || value === null) return "";
  return typeof value === "string" ? value : JSON.stringify(value);
}

function listText(value: JsonValue | undefined): string {
  if (value === undefined || value === null) return "";
  if (!Array.isArray(value)) return JSON.stringify(value);
  return value.map((item) => typeof item === "string" ? item : JSON.stringify(item)).join("\n");
}

function hintText(spec: FieldSpec): string {
  const limits: string[] = [];
  if (spec.min !== undefined && spec.max !== undefined) limits.push(`${spec.min}–${spec.max}`);
  else if (spec.min !== undefined) limits.push(`≥ ${spec.min}`);
  else if (spec.max !== undefined) limits.push(`≤ ${spec.max}`);
  const head = spec.required ? "Required" : `Default: ${spec.defaultText}`;
  return [head, ...limits].join(" · ") + `. ${spec.help}`;
}

function selectOptions(select: HTMLSelectElement, options: [string, string][], current: string): void {
  select.replaceChildren(...options.map(([value, label]) => h("option", { value, text: label })));
  if (!options.some(([value]) => value === current)) {
    select.append(h("option", { value: current, text: `${current} (not available)` }));
  }
  select.value = current;
}

/** Builds the widget of `spec`; `onInput` is called on every edit. */
export function fieldWidget(spec: FieldSpec, onInput: (widget: FieldWidget) => void): FieldWidget {
  const id = uid(`f-${spec.section}-${spec.key}`);
  const hintId = `${id}-hint`;
  const messageId = `${id}-message`;
  const describedBy = `${hintId} ${messageId}`;
  const hint = h("p", { class: "hint", id: hintId, text: hintText(spec) });
  const message = h("p", { class: "message", id: messageId, "aria-live": "polite" });
  const controls: (HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement)[] = [];
  let read: () => JsonValue | undefined;
  let write: (value: JsonValue | undefined) => void;
  let focusable: HTMLElement;
  let body: HTMLElement;
  let tools: readonly string[] = [];
  let current: JsonValue | undefined;
  let widgetTools: ((names: readonly string[]) => void) | undefined;
  let afterEnable: (() => void) | undefined;
  const fire = () => onInput(widget);
  const common = { id, name: `${spec.section}.${spec.key}`, "aria-describedby": describedBy };

  switch (spec.kind) {
    case "text":
    case "id":
    case "longtext":
    case "list":
    case "paths": {
      const multi = spec.kind !== "text" && spec.kind !== "id";
      const control = multi
        ? h("textarea", { ...common, rows: spec.kind === "longtext" ? 2 : 3, spellcheck: "true" })
        : h("input", { ...common, type: "text", autocomplete: "off" });
      if (spec.required) control.setAttribute("aria-required", "true");
      control.placeholder = spec.kind === "list" || spec.kind === "paths" ? "one per line" : "";
      control.addEventListener("input", fire);
      controls.push(control);
      const isList = spec.kind === "list" || spec.kind === "paths";
      read = () => {
        if (isList) return listFrom(control.value);
        return control.value === "" ? undefined : control.value;
      };
      write = (value) => control.value = isList ? listText(value) : textOf(value);
      focusable = control;
      body = control;
      break;
    }
    case "integer":
    case "number":
    case "seconds": {
      const control = h("input", {
        ...common,
        type: "text",
        inputmode: spec.kind === "integer" ? "numeric" : "decimal",
        autocomplete: "off",
        class: "short",
        placeholder: spec.defaultText,
      });
      control.addEventListener("input", fire);
      controls.push(control);
      read = () => numberFrom(control.value);
      write = (value) => control.value = textOf(value);
      focusable = control;
      body = control;
      break;
    }
    case "boolean":
    case "choice":
    case "emotion":
    case "tool":
    case "toolChoice": {
      const control = h("select", common);
      control.addEventListener("change", fire);
      controls.push(control);
      const optionsFor = (): [string, string][] => {
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
      };
      const encode = (value: JsonValue | undefined): string => {
        if (value === undefined || value === null) return "";
        if (spec.kind === "toolChoice" && typeof value === "object" && !Array.isArray(value)) {
          return typeof value.tool === "string" ? `tool:${value.tool}` : JSON.stringify(value);
        }
        return typeof value === "string" ? value : JSON.stringify(value);
      };
      const render = () => selectOptions(control, optionsFor(), encode(current));
      read = () => {
        const v = control.value;
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
      };
      write = (value) => {
        current = value;
        render();
      };
      widgetTools = (names) => {
        tools = names;
        current = read();
        render();
      };
      render();
      focusable = control;
      body = control;
      break;
    }
    case "emotions":
    case "memoryTools": {
      const names = spec.kind === "emotions" ? EMOTION_NAMES : MEMORY_TOOLS;
      const boxes = names.map((name) => {
        const box = h("input", { type: "checkbox", id: `${id}-${name}`, value: name });
        box.addEventListener("change", fire);
        controls.push(box);
        return box;
      });
      read = () => {
        const on = boxes.filter((b) => b.checked).map((b) => b.value);
        return on.length === 0 ? undefined : on;
      };
      write = (value) => {
        let on: string[] = [];
        if (value === "all" || value === 3) on = [...names];
        else if (value === 1) on = ["rememberFact"];
        else if (value === 2) on = ["changeRelationship"];
        else if (Array.isArray(value)) {
          on = value.map((v) =>
            v === "remember_fact"
              ? "rememberFact"
              : v === "change_relationship"
              ? "changeRelationship"
              : String(v)
          );
        }
        for (const box of boxes) box.checked = on.includes(box.value);
      };
      const fieldset = h(
        "fieldset",
        { class: `checks ${spec.kind}`, "aria-describedby": describedBy },
        h("legend", { text: spec.label }),
        ...boxes.map((box) =>
          h("label", { class: "check", for: box.id }, box, h("span", { text: box.value }))
        ),
      );
      focusable = boxes[0];
      body = fieldset;
      break;
    }
    case "unlock": {
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
      controls.push(control, always);
      read = () => always.checked ? null : numberFrom(control.value);
      write = (value) => {
        always.checked = value === null;
        control.disabled = value === null;
        control.value = value === null ? "" : textOf(value);
      };
      afterEnable = () => control.disabled = always.checked;
      focusable = control;
      body = h(
        "span",
        { class: "inline" },
        control,
        h("label", { class: "check", for: always.id }, always, h("span", { text: "always (null: guarded)" })),
      );
      break;
    }
  }

  const grouped = spec.kind === "emotions" || spec.kind === "memoryTools";
  const root = h(
    "div",
    { class: `field kind-${spec.kind}`, "data-field": `${spec.section}.${spec.key}` },
    grouped ? null : h("label", { for: id, text: spec.label }),
    body!,
    hint,
    message,
  );
  const widget: FieldWidget = {
    spec,
    path: `${spec.section}.${spec.key}`,
    root,
    focusable: focusable!,
    read: () => read(),
    write: (value) => write(value),
    mark(check) {
      const text = check?.error ?? check?.warning ?? "";
      message.textContent = text;
      root.classList.toggle("has-error", Boolean(check?.error));
      root.classList.toggle("has-warning", !check?.error && Boolean(check?.warning));
      for (const c of controls) c.setAttribute("aria-invalid", String(Boolean(check?.error)));
    },
    setTools(names) {
      widgetTools?.(names);
    },
    setDisabled(disabled) {
      for (const c of controls) c.disabled = disabled;
      if (!disabled) afterEnable?.();
    },
  };
  return widget;
}
