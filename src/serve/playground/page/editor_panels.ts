/// <reference lib="dom" />
/**
 * The panels and toolbars of the persona editor (editor.ts): the form panels (Persona, Options in groups,
 * Memory) laid out around the field widgets the editor makes, the initial World, the Model tab (which
 * model, the script, its files, the step types), the raw JSONC text, and the file and start toolbars.
 *
 * They only build elements: each returns the ones the editor reads or updates later, and what a control
 * does is a callback of its options. The document, the syncing between the views and the checks stay in
 * editor.ts.
 * @module
 */
import { fileButton, h } from "./dom.ts";
import type { Section } from "./fields.ts";

/** The form's parts the editor makes (and keeps, to sync them with the document and show their checks). */
export interface FormParts {
  /** A new banner for a form panel, shown while the JSONC text has a syntax problem. */
  banner(): HTMLElement;
  /** The widgets of `section`'s fields (only `keys`, when given), in the field table's order. */
  fields(section: Section, keys?: readonly string[]): HTMLElement[];
}

const OPTION_GROUPS: [string, string[]][] = [
  ["Reply", ["replyFormat", "playerOptionCount", "canEndConversation", "emotions", "extraInstructions"]],
  ["Tools", ["groundingTool", "toolChoice", "maxToolRounds", "maxToolCalls", "toolTimeoutSeconds"]],
  ["World", ["worldReadable", "worldWritable", "worldContextPaths"]],
  [
    "Memory and secrets",
    [
      "memoryTools",
      "maxFacts",
      "maxRelationshipChange",
      "secretsUnlockAtRelationship",
      "compactAfterTurns",
      "keepRecentTurns",
    ],
  ],
  [
    "Guardrails and generation",
    ["fallbackOnGuardrail", "fallbackLines", "temperature", "maximumResponseTokens", "barkMaximumTokens"],
  ],
];

const STEP_HELP: [string, string][] = [
  ['{"text": "[happy] Hello.", "chunks": 3}', "an answer, streamed in about 3 pieces (text replies)"],
  ['{"json": {"emotion", "line", "player_options", "ends_conversation"}}', "a structured reply"],
  [
    '{"toolCalls": [{"name": "check_stock", "arguments": {…}}]}',
    "one tool round (several calls run together)",
  ],
  ['{"template": "[happy] We have {toolOutput}"}', "an answer with {prompt}, {toolOutput}, {toolOutputs}"],
  ['{"error": "guardrail_violation"}', "a failure with any error code"],
  ['…, "delayMs": 2000', "wait first (to try cancelling)"],
];

/** The Persona tab: the file's top-level fields (id, greeting), then the persona's. */
export function personaPanel(form: FormParts): HTMLElement {
  return h("div", {}, form.banner(), ...form.fields("file"), ...form.fields("persona"));
}

/** The Options tab: the NPC options in groups (reply, tools, world, memory, guardrails and generation). */
export function optionsPanel(form: FormParts): HTMLElement {
  return h(
    "div",
    {},
    form.banner(),
    ...OPTION_GROUPS.map(([legend, keys]) =>
      h(
        "fieldset",
        { class: "group" },
        h("legend", { text: legend }),
        ...form.fields("options", keys),
      )
    ),
  );
}

/** The Memory tab: the memory the NPC starts with. */
export function memoryPanel(form: FormParts): HTMLElement {
  return h(
    "div",
    {},
    form.banner(),
    h("p", {
      class: "hint",
      text: "The memory the NPC starts with. The State panel shows the live memory.",
    }),
    ...form.fields("memory"),
  );
}

/** The World tab's elements. */
export interface WorldPanel {
  /** The tab's panel. */
  panel: HTMLElement;
  /** The initial world's JSONC text. */
  input: HTMLTextAreaElement;
  /** Why the text is not a world (or ""). */
  message: HTMLElement;
}

/** The World tab: the initial world as JSONC text; `onInput` gets each edit. */
export function worldPanel(form: FormParts, { onInput }: { onInput: () => void }): WorldPanel {
  const input = h("textarea", {
    id: "world-seed",
    wrap: "off",
    class: "code",
    rows: 10,
    spellcheck: "false",
    "aria-describedby": "world-seed-hint world-seed-message",
  });
  const message = h("p", { class: "message", id: "world-seed-message", "aria-live": "polite" });
  input.addEventListener("input", () => onInput());
  const panel = h(
    "div",
    {},
    form.banner(),
    h(
      "div",
      { class: "field" },
      h("label", { for: "world-seed", text: "Initial world (JSON object)" }),
      input,
      h("p", {
        class: "hint",
        id: "world-seed-hint",
        text:
          "Created when the NPC starts. The NPC reads it with read_world_state and changes the paths of " +
          "Options → World writable with update_world_state. Empty: no world. Edit the live world in the State panel.",
      }),
      message,
    ),
  );
  return { panel, input, message };
}

/** What the Model tab shows first, and what its controls do. */
export interface ModelPanelOptions {
  /** New NPCs run on the script (else on the bridge's model). */
  useScript: boolean;
  /** The script's text. */
  script: string;
  /** The bridge's model or the script was chosen. */
  onModelKind(useScript: boolean): void;
  /** The script's text was edited. */
  onScriptInput(text: string): void;
  /** A script file was chosen. */
  onLoadScript(file: File): void;
  /** Save script was clicked. */
  onSaveScript(): void;
}

/** The Model tab's elements. */
export interface ModelPanel {
  /** The tab's panel. */
  panel: HTMLElement;
  /** The radio button that chooses the script. */
  useScript: HTMLInputElement;
  /** The radio button that chooses the bridge's model. */
  useBridge: HTMLInputElement;
  /** What `"system"` is on this server (filled in when the bridge says). */
  bridgeModel: HTMLElement;
  /** The script's text. */
  script: HTMLTextAreaElement;
  /** Why the script cannot be used (or ""). */
  scriptMessage: HTMLElement;
  /** Shown while the bridge's model is chosen: what runs instead of the script (the script box's description). */
  scriptInUse: HTMLElement;
}

/** The Model tab: which model new NPCs run on, the script, its files, and the step types. */
export function modelPanel(options: ModelPanelOptions): ModelPanel {
  const choice = modelChoice(options);
  const scriptInUse = h("p", { class: "banner warning", id: "script-in-use", hidden: true });
  const script = scriptField(options);
  const panel = h("div", {}, choice.fieldset, scriptInUse, script.field, scriptFiles(options), stepHelp());
  return { ...choice, ...script, scriptInUse, panel };
}

/** The bridge's model or the script. */
function modelChoice(
  { useScript: scripted, onModelKind }: ModelPanelOptions,
): {
  fieldset: HTMLElement;
  useScript: HTMLInputElement;
  useBridge: HTMLInputElement;
  bridgeModel: HTMLElement;
} {
  const useBridge = h("input", {
    type: "radio",
    name: "model-kind",
    id: "model-bridge",
    checked: !scripted,
  });
  const useScript = h("input", {
    type: "radio",
    name: "model-kind",
    id: "model-script",
    checked: scripted,
  });
  for (const radio of [useBridge, useScript]) {
    radio.addEventListener("change", () => onModelKind(useScript.checked));
  }
  const bridgeModel = h("span", {
    class: "model-detail",
    id: "bridge-model-detail",
    text: "(connecting…)",
  });
  const fieldset = h(
    "fieldset",
    { class: "group" },
    h("legend", { text: "Which model the NPC runs on" }),
    h(
      "label",
      { class: "check", for: "model-bridge" },
      useBridge,
      h("span", {}, "The bridge's model (", h("code", { text: "system" }), "): ", bridgeModel),
    ),
    h(
      "label",
      { class: "check", for: "model-script" },
      useScript,
      h("span", { text: "The page's script (the scripted model below): deterministic, works everywhere" }),
    ),
  );
  return { fieldset, useScript, useBridge, bridgeModel };
}

/** The script's text. */
function scriptField(
  { script: text, onScriptInput }: ModelPanelOptions,
): { field: HTMLElement; script: HTMLTextAreaElement; scriptMessage: HTMLElement } {
  const script = h("textarea", {
    id: "script",
    wrap: "off",
    class: "code",
    rows: 16,
    spellcheck: "false",
    value: text,
    "aria-describedby": "script-in-use script-message",
  });
  const scriptMessage = h("p", { class: "message", id: "script-message", "aria-live": "polite" });
  script.addEventListener("input", () => onScriptInput(script.value));
  const field = h(
    "div",
    { class: "field" },
    h("label", {
      for: "script",
      text: 'The page\'s script: a list of steps, or {"steps": […], "fallback": step}',
    }),
    script,
    scriptMessage,
  );
  return { field, script, scriptMessage };
}

/** Load and save the script as a file. */
function scriptFiles({ onLoadScript, onSaveScript }: ModelPanelOptions): HTMLElement {
  return h(
    "div",
    { class: "row" },
    fileButton("load-script", {
      label: "Load script…",
      accept: ".json,.jsonc",
      onFiles: (files) => onLoadScript(files[0]),
    }),
    h("button", { type: "button", text: "Save script", on: { click: () => onSaveScript() } }),
  );
}

/** The step types of a script, shown under the script. */
function stepHelp(): HTMLElement {
  return h(
    "details",
    { class: "help" },
    h("summary", { text: "Step types (PROTOCOL.md §10)" }),
    h(
      "ul",
      {},
      ...STEP_HELP.map(([code, text]) => h("li", {}, h("code", { text: code }), ` ${text}`)),
      h("li", {
        text: "Each model step plays the next step: a tool round takes one step and the answer another; " +
          "barks play a step too. Structured replies need exactly “Player options” player_options.",
      }),
    ),
  );
}

/** The JSONC tab's elements. */
export interface JsoncPanel {
  /** The tab's panel. */
  panel: HTMLElement;
  /** The persona file's text. */
  input: HTMLTextAreaElement;
  /** Where the caret's line and column are shown. */
  caret: HTMLElement;
  /** The text box's description (visually hidden): the text's syntax problem, or nothing. */
  problem: HTMLElement;
}

/** What the JSONC tab shows first, and what its text does. */
export interface JsoncPanelOptions {
  /** The persona file's text. */
  text: string;
  /** The text was edited. */
  onInput(): void;
  /** The caret may have moved (a key, a click, a selection). */
  onCaret(): void;
}

/** The JSONC tab: the raw persona file, with the caret's line and column. */
export function jsoncPanel({ text, onInput, onCaret }: JsoncPanelOptions): JsoncPanel {
  const input = h("textarea", {
    id: "jsonc",
    wrap: "off",
    class: "code",
    rows: 28,
    spellcheck: "false",
    value: text,
    "aria-describedby": "jsonc-status",
  });
  // A screen reader reads the syntax problem with the text box; the eye finds it in the editor's status line,
  // which also announces it (so this is not a live region of its own).
  const problem = h("div", { id: "jsonc-status", class: "visually-hidden" });
  const caret = h("span", { class: "caret", "aria-hidden": "true" });
  input.addEventListener("input", () => onInput());
  for (const type of ["keyup", "click", "select"]) {
    input.addEventListener(type, () => onCaret());
  }
  const panel = h(
    "div",
    {},
    h(
      "div",
      { class: "field" },
      h("label", { for: "jsonc", text: "Persona file (JSONC: comments and trailing commas allowed)" }),
      input,
      h("p", { class: "hint" }, caret),
      problem,
    ),
  );
  return { panel, input, caret, problem };
}

/** What the file toolbar's buttons do, and its Undo load button (the editor shows it after a load). */
export interface FileToolbarOptions {
  /** Persona or script files were chosen (several at once). */
  onLoad(files: File[]): void;
  /** Save persona was clicked. */
  onSave(): void;
  /** Export for the engine was clicked. */
  onExport(): void;
  /** The Undo load button. */
  undo: HTMLButtonElement;
}

/** Load, save and export the persona file (and undo a load). */
export function fileToolbar({ onLoad, onSave, onExport, undo }: FileToolbarOptions): HTMLElement {
  return h(
    "div",
    { class: "toolbar" },
    fileButton("load-persona", {
      label: "Load file…",
      title: "A persona file (.jsonc); pick its script (.steps.json) with it, or a saved state (.state.json)",
      accept: ".json,.jsonc",
      onFiles: (files) => onLoad(files),
      multiple: true,
    }),
    h("button", {
      type: "button",
      id: "save-persona",
      text: "Save persona",
      title: "Download the persona file (.jsonc), as the JSONC tab shows it",
      on: { click: () => onSave() },
    }),
    h("button", {
      type: "button",
      id: "export-persona",
      text: "Export for the engine",
      title: "The npc/create (and world/create) params an engine sends",
      on: { click: () => onExport() },
    }),
    undo,
  );
}

/**
 * Start the NPC (`onStart`), or apply the edits to the running one (`onApply`); then a skip link to the
 * player's line.
 */
export function startToolbar({ onStart, onApply }: { onStart(): void; onApply(): void }): HTMLElement {
  return h(
    "div",
    { class: "toolbar" },
    h("button", {
      type: "button",
      id: "start",
      class: "primary",
      text: "Start NPC",
      on: { click: () => onStart() },
    }),
    h("button", {
      type: "button",
      id: "apply",
      text: "Apply, keep conversation",
      title: "Rebuild the running NPC with this persona, options and tools; its conversation and memory stay",
      on: { click: () => onApply() },
    }),
    // Past the persona form, to the player's line (hidden until it has the focus).
    h("a", { class: "skip-link", href: "#player-line", text: "Skip to your line" }),
  );
}
