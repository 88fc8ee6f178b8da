/**
 * Where a JSON pointer's value starts in the text of a JSON or JSONC file, for messages that name the line
 * and column of a schema's part (`#/properties/mood` → line 3, column 14).
 * @module
 */
import { findNodeAtLocation, parseTree } from "npm:jsonc-parser@3.3.1";

/**
 * The line and column (both from 1; the column counts characters) where the value at `pointer` (`#/a/0`, a
 * JSON pointer with or without the leading `#`) starts in JSONC `text`, or null when the text has no such
 * value (a place made when the schema was converted, or a text that does not parse).
 *
 * @example
 * ```ts
 * import { placeOfPointer } from "./json_place.ts";
 * placeOfPointer('{\n  "a": {"type": "x"}\n}', "#/a"); // { line: 2, column: 8 }
 * ```
 */
export function placeOfPointer(text: string, pointer: string): { line: number; column: number } | null {
  const tree = parseTree(text, [], { allowTrailingComma: true, disallowComments: false });
  if (!tree) return null;
  const path = pointer.replace(/^#/, "").split("/").slice(1).map((part) =>
    decodeURIComponent(part).replaceAll("~1", "/").replaceAll("~0", "~")
  );
  let node = tree;
  for (const part of path) {
    const next = node.type === "array" && /^\d+$/.test(part)
      ? findNodeAtLocation(node, [Number(part)])
      : node.type === "object"
      ? findNodeAtLocation(node, [part])
      : undefined;
    if (next === undefined) return null;
    node = next;
  }
  const lines = text.slice(0, node.offset).split("\n");
  return { line: lines.length, column: [...lines[lines.length - 1]].length + 1 };
}

/**
 * How messages name the part of a JSON or JSONC file at `pointer`: the file's label, the pointer and, when the
 * file's `text` is known and has that part, its line and column ("mood.json: #/properties/a (line 3, column
 * 9)").
 *
 * @example
 * ```ts
 * import { placeInFile } from "./json_place.ts";
 * placeInFile({ label: "a.json", text: '{\n  "a": 1\n}' }, "#/a"); // "a.json: #/a (line 2, column 8)"
 * placeInFile({ label: "a.json", text: null }, "#/a"); // "a.json: #/a"
 * ```
 */
export function placeInFile(file: { label: string; text: string | null }, pointer: string): string {
  const place = file.text === null ? null : placeOfPointer(file.text, pointer);
  return `${file.label}: ${pointer}${place ? ` (line ${place.line}, column ${place.column})` : ""}`;
}
