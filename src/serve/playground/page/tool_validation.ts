/**
 * Checks the editor's tools with the bridge (`tools/validate`) while the designer types, and puts what the
 * bridge says next to each tool: a refusal (Start would fail on it) as a problem, anything else as a
 * warning. Owns which tool definitions were checked last, so the same tools are not checked twice.
 * @module
 */
import { BridgeError } from "../../../protocol/errors.ts";
import type { Editor } from "./editor.ts";
import type { Check } from "./fields.ts";
import type { Link } from "./link.ts";
import { errorText } from "./values.ts";

/**
 * The bridge's checks of the editor's tools.
 *
 * @example
 * ```ts ignore
 * const validation = new ToolValidation(link, () => editor);
 * validation.reset(); // connected again: check again
 * await validation.validate();
 * ```
 */
export class ToolValidation {
  readonly #link: Link;
  readonly #editor: () => Editor;
  /** The tool definitions checked last (JSON), or "": none (check again). */
  #validated = "";

  constructor(link: Link, editor: () => Editor) {
    this.#link = link;
    this.#editor = editor;
  }

  /** Forgets what was checked (a new connection checks the tools again). */
  reset(): void {
    this.#validated = "";
  }

  /** Checks the editor's tools with the bridge, unless they were checked as they are. */
  async validate(): Promise<void> {
    const editor = this.#editor();
    const connection = this.#link.connection;
    if (!connection || this.#link.state !== "open" || editor.doc.problem) return;
    const tools = editor.toolDefinitions();
    const key = JSON.stringify(tools);
    if (key === this.#validated) return;
    this.#validated = key;
    const notes = new Map<number, Check[]>();
    await Promise.all(tools.map(async (tool, i) => {
      if (editor.review.tools[i]?.some((c) => c.error)) return;
      try {
        const result = await connection.request("tools/validate", { tools: [tool] as never });
        const warnings = result.tools[0]?.warnings ?? [];
        if (warnings.length > 0) notes.set(i, warnings.map((warning) => ({ warning })));
      } catch (error) {
        if (error instanceof BridgeError && error.dataCode === "shut_down") {
          this.#validated = ""; // check again once connected
          return;
        }
        // The bridge refuses the tool (Start would fail on it): a problem; anything else only a warning.
        const text = errorText(error).replace(/^tools\[0\]/, `tools[${i}]`);
        const refused = error instanceof BridgeError &&
          (error.dataCode === "invalid_params" || error.dataCode === "invalid_schema");
        notes.set(i, [refused ? { error: text } : { warning: text }]);
      }
    }));
    if (key !== this.#validated) return;
    editor.setToolNotes(notes, tools);
  }
}
