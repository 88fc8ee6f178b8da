/**
 * The persona document: the JSONC text of a persona file (`npc`, `persona`, `options`, `tools`, `memory`,
 * `world`, `greeting`) that the form and the raw view both edit. The text is the source of truth: a form
 * edit becomes a minimal text edit (comments and layout survive), a text edit is parsed back for the form.
 * A syntax error keeps the last valid value and says where it is. Pure: no DOM.
 * @module
 */
import {
  applyEdits,
  findNodeAtLocation,
  type JSONPath,
  modify,
  type Node,
  parse,
  type ParseError,
  parseTree,
  printParseErrorCode,
} from "npm:jsonc-parser@3.3.1";
import { isJsonObject, type JsonObject, type JsonValue } from "../../../protocol/json.ts";
import { didYouMean, nearestName } from "../../../protocol/edit_distance.ts";
import {
  BUILTIN_TOOLS,
  type Check,
  checkField,
  FIELDS,
  FILE_KEYS,
  keysOf,
  type Section,
  TOOL_KEYS,
  TOOL_NAME,
} from "./fields.ts";

/**
 * What the tool card's description box shows while it is empty. "Add a tool" once wrote this text as the
 * description, so a file may still have it: the review warns until it is replaced.
 */
export const DESCRIPTION_PLACEHOLDER = "What it does and what it returns.";

/** Where the text stops being JSONC. */
export interface SyntaxProblem {
  /** e.g. "CommaExpected on line 4, column 7". */
  message: string;
  /** 1-based. */
  line: number;
  /** 1-based. */
  column: number;
  /** Offset of the problem in the text. */
  offset: number;
}

const EXPLANATIONS: Record<string, string> = {
  InvalidSymbol: "an unexpected character",
  InvalidNumberFormat: "a malformed number",
  PropertyNameExpected: "a property name was expected (in double quotes)",
  ValueExpected: "a value was expected",
  ColonExpected: "a colon was expected",
  CommaExpected: "a comma was expected",
  CloseBraceExpected: "a closing } was expected",
  CloseBracketExpected: "a closing ] was expected",
  EndOfFileExpected: "the text goes on after the end of the value",
  InvalidCommentToken: "a malformed comment",
  UnexpectedEndOfComment: "a comment is not closed",
  UnexpectedEndOfString: "a string is not closed",
  UnexpectedEndOfNumber: "a number is cut off",
  InvalidUnicode: "a malformed \\u escape",
  InvalidEscapeCharacter: "a malformed escape",
  InvalidCharacter: "a character that is not allowed in a string",
};

function position(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, offset);
  const line = before.split("\n").length;
  return { line, column: offset - before.lastIndexOf("\n") };
}

/**
 * The quoting slip of someone new to JSON at `offset` (where the parser stopped): a name or text in single
 * quotes, or one without quotes; with what to write instead. Null for any other problem.
 */
function quoteSlip(text: string, offset: number, code: string): { what: string; fix: string } | null {
  if (code !== "InvalidSymbol" && code !== "PropertyNameExpected" && code !== "ValueExpected") return null;
  const single = /^'([^'\n]*)'/.exec(text.slice(offset));
  if (single) {
    return {
      what: "single quotes",
      fix: `JSON takes double quotes: ${JSON.stringify(single[1])}, not '${single[1]}'.`,
    };
  }
  const word = /^[A-Za-z_][\w-]*/.exec(text.slice(offset))?.[0];
  if (!word || ["true", "false", "null"].includes(word)) return null;
  // A name comes after `{` or `,`; a text after `:` or `[`.
  const before = text.slice(0, offset).replace(/\/\/[^\n]*|\/\*[\s\S]*?\*\//g, "").trimEnd();
  const kind = before.endsWith(":") || before.endsWith("[") ? "a text" : "a name";
  return {
    what: `${kind} without quotes`,
    fix: `Put names and texts in double quotes: ${JSON.stringify(word)}, not ${word}.`,
  };
}

/**
 * Parses JSON with comments and trailing commas. `what` names the text in messages ("The JSONC text").
 * Returns the value or the first problem with its line and column.
 */
export function parseJsonc(
  text: string,
  what = "The text",
): { value: JsonValue; problem: null } | { value: undefined; problem: SyntaxProblem } {
  const errors: ParseError[] = [];
  const value = parse(text, errors, { allowTrailingComma: true, disallowComments: false });
  if (text.trim() === "" || (errors.length === 0 && value === undefined)) {
    return { value: undefined, problem: { message: `${what} is empty.`, line: 1, column: 1, offset: 0 } };
  }
  if (errors.length > 0) {
    const e = errors[0];
    const code = printParseErrorCode(e.error);
    const { line, column } = position(text, e.offset);
    const slip = quoteSlip(text, e.offset, code);
    const why = slip?.what ?? EXPLANATIONS[code] ?? code;
    return {
      value: undefined,
      problem: {
        message: `${what} is not valid JSON: ${why} on line ${line}, column ${column}.${
          slip ? ` ${slip.fix}` : ""
        }`,
        line,
        column,
        offset: e.offset,
      },
    };
  }
  return { value: value as JsonValue, problem: null };
}

/** Start of the line containing `offset`. */
function lineStart(text: string, offset: number): number {
  return text.lastIndexOf("\n", offset - 1) + 1;
}

/** Offset of the newline ending the line containing `offset` (or the text's end). */
function lineEnd(text: string, offset: number): number {
  const end = text.indexOf("\n", offset);
  return end === -1 ? text.length : end;
}

/**
 * After a property ending at `end`: the rest of its line is only a comma, blanks and a line comment.
 * Returns the offset of that comma, -1 without one, or null when something else follows on the line.
 */
function restOfLine(text: string, end: number): number | null {
  const rest = text.slice(end, lineEnd(text, end));
  const m = /^(\s*)(,?)\s*(\/\/.*)?$/.exec(rest);
  if (!m) return null;
  return m[2] === "," ? end + m[1].length : -1;
}

/** True when only blanks precede `offset` on its line. */
function startsLine(text: string, offset: number): boolean {
  return text.slice(lineStart(text, offset), offset).trim() === "";
}

/** `value` as JSON text, its later lines indented by `indent`. */
function jsonAt(value: JsonValue, indent: string): string {
  return JSON.stringify(value, null, 2).split("\n").join(`\n${indent}`);
}

/**
 * Inserts or removes a property of a multi-line object line by line, so every comment stays beside the
 * property it was written next to (the JSONC library's own edits re-flow neighbouring lines and move or drop
 * trailing comments). Null when the layout is not one property per line: then the library edits.
 */
function lineEdit(
  text: string,
  path: JSONPath,
  value: JsonValue | undefined,
  order: readonly string[] | null,
): string | null {
  const tree = parseTree(text, [], { allowTrailingComma: true, disallowComments: false });
  const key = path[path.length - 1];
  if (!tree || typeof key !== "string") return null;
  const parent = path.length === 1 ? tree : findNodeAtLocation(tree, path.slice(0, -1));
  if (!parent || parent.type !== "object") return null;
  const props: Node[] = parent.children ?? [];
  const names = props.map((p) => String(p.children?.[0]?.value));
  const closing = parent.offset + parent.length - 1;
  const multiLine =
    props.every((p) => startsLine(text, p.offset) && restOfLine(text, p.offset + p.length) !== null) &&
    props.length > 0 && startsLine(text, closing);
  if (!multiLine) return null;
  const at = names.indexOf(key);
  if (value === undefined) {
    if (at === -1) return text;
    const p = props[at];
    const from = lineStart(text, p.offset);
    let to = lineEnd(text, p.offset + p.length);
    to = to < text.length ? to + 1 : to;
    let out = text.slice(0, from) + text.slice(to);
    if (at === props.length - 1 && at > 0) {
      // The new last property loses its comma (strict JSON readers of the file would stumble on it).
      const prev = props[at - 1];
      const comma = restOfLine(text, prev.offset + prev.length);
      if (comma !== null && comma >= 0) out = out.slice(0, comma) + out.slice(comma + 1);
    }
    return out;
  }
  if (at !== -1) return null; // a replacement: the library edits only the value
  const rank = (k: string) => {
    const i = order?.indexOf(k) ?? -1;
    return i === -1 ? (order?.length ?? 0) : i;
  };
  let index = order ? props.findIndex((_, i) => rank(names[i]) > rank(key)) : -1;
  if (index === -1) index = props.length;
  if (index < props.length) {
    const next = props[index];
    const start = lineStart(text, next.offset);
    const indent = text.slice(start, next.offset);
    return `${text.slice(0, start)}${indent}${JSON.stringify(key)}: ${jsonAt(value, indent)},\n${
      text.slice(start)
    }`;
  }
  const last = props[props.length - 1];
  const indent = text.slice(lineStart(text, last.offset), last.offset);
  const comma = restOfLine(text, last.offset + last.length)!;
  const end = lineEnd(text, last.offset + last.length);
  const line = `\n${indent}${JSON.stringify(key)}: ${jsonAt(value, indent)}`;
  const withComma = comma >= 0
    ? text
    : `${text.slice(0, last.offset + last.length)},${text.slice(last.offset + last.length)}`;
  const shift = comma >= 0 ? 0 : 1;
  return withComma.slice(0, end + shift) + line + withComma.slice(end + shift);
}

/** Spec order of the keys that can appear at `path` (for inserting a new key where a reader expects it). */
function keyOrder(path: JSONPath): readonly string[] | null {
  if (path.length === 1) return FILE_KEYS;
  if (path.length === 2 && (path[0] === "persona" || path[0] === "options" || path[0] === "memory")) {
    return keysOf(path[0] as Section);
  }
  if (path.length === 3 && path[0] === "tools") return TOOL_KEYS;
  return null;
}

/**
 * A persona file as JSONC text plus its last valid value.
 *
 * @example
 * ```ts
 * const doc = new PersonaDocument('{\n  // the blacksmith\n  "persona": {"name": "Gorm"}\n}\n');
 * doc.set(["persona", "role"], "the village blacksmith");
 * doc.text.includes("// the blacksmith"); // true: comments survive form edits
 * ```
 */
export class PersonaDocument {
  #text: string;
  #value: JsonObject = {};
  #problem: SyntaxProblem | null = null;

  /** A document for `text` (which may be invalid: then the value is `{}` until it is fixed). */
  constructor(text: string) {
    this.#text = text;
    this.setText(text);
  }

  /** The JSONC text. */
  get text(): string {
    return this.#text;
  }

  /** The value of the text, or of the last valid text while it has a syntax problem. */
  get value(): JsonObject {
    return this.#value;
  }

  /** The syntax problem of the text, or null. */
  get problem(): SyntaxProblem | null {
    return this.#problem;
  }

  /** Replaces the text; returns false (keeping the last valid value) when it is not a JSONC object. */
  setText(text: string): boolean {
    this.#text = text;
    const parsed = parseJsonc(text, "The persona file");
    if (parsed.problem) {
      this.#problem = parsed.problem;
      return false;
    }
    if (!isJsonObject(parsed.value)) {
      this.#problem = {
        message: `The persona file must be a JSON object ({…}); got ${
          Array.isArray(parsed.value) ? "a list" : JSON.stringify(parsed.value)
        }.`,
        line: 1,
        column: 1,
        offset: 0,
      };
      return false;
    }
    this.#problem = null;
    this.#value = parsed.value;
    return true;
  }

  /** The value at `path`, or undefined. */
  get(path: JSONPath): JsonValue | undefined {
    let node: JsonValue | undefined = this.#value;
    for (const key of path) {
      if (Array.isArray(node) && typeof key === "number") node = node[key];
      else if (isJsonObject(node) && typeof key === "string" && Object.hasOwn(node, key)) node = node[key];
      else return undefined;
    }
    return node;
  }

  /**
   * Sets the value at `path` (`undefined` removes it) with a minimal edit of the text: comments and the
   * layout elsewhere stay, a new key goes where the spec orders it. Throws while the text has a syntax problem.
   */
  set(path: JSONPath, value: JsonValue | undefined): void {
    if (this.#problem) throw new Error("The JSONC text has a syntax problem; fix it first.");
    if (value === undefined && this.get(path) === undefined) return;
    const order = keyOrder(path);
    const edited = lineEdit(this.#text, path, value, order);
    if (edited !== null) {
      this.setText(edited);
      return;
    }
    const key = path[path.length - 1];
    const edits = modify(this.#text, path, value, {
      formattingOptions: { insertSpaces: true, tabSize: 2, eol: "\n" },
      getInsertionIndex: order && typeof key === "string"
        ? (properties) => {
          const rank = (k: string) => {
            const i = order.indexOf(k);
            return i === -1 ? order.length : i;
          };
          const mine = rank(key);
          const at = properties.findIndex((p) => rank(p) > mine);
          return at === -1 ? properties.length : at;
        }
        : undefined,
    });
    this.setText(applyEdits(this.#text, edits));
  }
}

/** What is wrong or odd in a persona file's value. */
export interface Review {
  /** Checks of form fields, by `section.key`. */
  fields: Map<string, Check>;
  /** Checks of tools, by index (`name`, `parameters`… problems of one tool, in order). */
  tools: Check[][];
  /** Problems of the file that belong to no field (shape of a section, the world seed, the id). */
  file: Check[];
  /** Keys the bridge does not know (it ignores them with a warning), as paths. */
  unknown: string[];
  /** The known key an unknown one most likely misspells, by the unknown key's path (`persona.nmae` → `name`). */
  hints: Map<string, string>;
  /**
   * The section an unknown key belongs in when it is a key of another one (`name` at the top level →
   * `persona`; `persona.replyFormat` → `options`), by the unknown key's path.
   */
  moves: Map<string, Section>;
}

/** The tools an NPC made from `value` will have: its client tools and the built-in ones its options add. */
export function npcToolNames(value: JsonObject): string[] {
  const names: string[] = [];
  if (Array.isArray(value.tools)) {
    for (const tool of value.tools) {
      if (isJsonObject(tool) && typeof tool.name === "string") names.push(tool.name);
    }
  }
  const options = isJsonObject(value.options) ? value.options : {};
  if (isJsonObject(value.world)) {
    const readable = options.worldReadable;
    if (!Array.isArray(readable) || readable.length > 0) names.push("read_world_state");
    if (Array.isArray(options.worldWritable) && options.worldWritable.length > 0) {
      names.push("update_world_state");
    }
  }
  const memory = options.memoryTools;
  const all = memory === "all" || memory === 3;
  const has = (a: string, b: string) =>
    all || (Array.isArray(memory) && (memory.includes(a) || memory.includes(b)));
  if (has("rememberFact", "remember_fact") || memory === 1) names.push("remember_fact");
  if (has("changeRelationship", "change_relationship") || memory === 2) names.push("change_relationship");
  return names;
}

function checkTool(tool: JsonValue, index: number, seen: Set<string>, review: Review): Check[] {
  if (!isJsonObject(tool)) return [{ error: `Tool ${index + 1} must be an object with a name.` }];
  const checks: Check[] = [];
  for (const key of Object.keys(tool)) {
    if (!(TOOL_KEYS as readonly string[]).includes(key)) {
      unknownKey(review, `tools[${index}].${key}`, key, TOOL_KEYS, null);
    }
  }
  const name = tool.name;
  if (typeof name !== "string" || !TOOL_NAME.test(name)) {
    const fixed = typeof name === "string" ? name.trim().replace(/[^A-Za-z0-9_.-]+/g, "_") : "";
    const example = TOOL_NAME.test(fixed) ? ` (e.g. ${JSON.stringify(fixed)})` : "";
    checks.push({
      error: `Name must be 1–64 of A–Z a–z 0–9 _ - . ; got ${JSON.stringify(name ?? null)}${example}.`,
    });
  } else if (seen.has(name)) {
    checks.push({ error: `Two tools are named '${name}'; names are unique per NPC.` });
  } else if (BUILTIN_TOOLS.includes(name)) {
    checks.push({ warning: `'${name}' is a built-in tool name; the bridge may reject the duplicate.` });
  }
  if (typeof name === "string") seen.add(name);
  const description = tool.description;
  if (
    description === undefined || description === null ||
    (typeof description === "string" && description.trim() === "")
  ) {
    // Only spaces or line breaks tell the model nothing either (the bridge trims before it warns).
    checks.push({ warning: "No description: the model decides from it (the bridge warns)." });
  } else if (typeof description !== "string") {
    checks.push({ error: "The description must be text." });
  } else if (description.trim() === DESCRIPTION_PLACEHOLDER) {
    checks.push({
      warning: `The description is still the placeholder "${DESCRIPTION_PLACEHOLDER}": ` +
        "write what this tool does, since the model decides from it.",
    });
  }
  if (tool.parameters !== undefined && tool.parameters !== null && !isJsonObject(tool.parameters)) {
    checks.push({ error: 'Parameters must be a JSON Schema object, e.g. {"type": "object", …}.' });
  } else if (isJsonObject(tool.parameters) && isJsonObject(tool.parameters.properties)) {
    // A parameter written as its type ("door": "string"): the bridge says "expected a schema object".
    const types = ["string", "number", "integer", "boolean", "array", "object"];
    for (const [name, schema] of Object.entries(tool.parameters.properties)) {
      if (isJsonObject(schema) || schema === true) continue;
      const fix = typeof schema === "string" && types.includes(schema)
        ? `: write ${JSON.stringify(name)}: {"type": ${JSON.stringify(schema)}}`
        : `, e.g. ${JSON.stringify(name)}: {"type": "string"}`;
      checks.push({
        error: `Parameter '${name}' must be a schema object${fix}; got ${JSON.stringify(schema)}.`,
      });
    }
  }
  const timeout = tool.timeoutSeconds;
  if (
    timeout !== undefined && timeout !== null &&
    (typeof timeout !== "number" || !Number.isFinite(timeout) || timeout < 0 || timeout > 86400)
  ) {
    checks.push({ error: "The timeout must be a number of seconds from 0 to 86400 (0 means no limit)." });
  }
  if (tool.execution !== undefined && tool.execution !== null && tool.execution !== "client") {
    checks.push({ error: 'The execution must be "client" (the only kind over the bridge).' });
  }
  return checks;
}

/**
 * Adds the unknown key `key` (at `path`, in section `from`; a tool's keys have none) to the review, with the
 * section it belongs in when it is another section's key, else the name of `known` it most likely misspells.
 */
function unknownKey(
  review: Review,
  path: string,
  key: string,
  known: readonly string[],
  from: Section | null,
): void {
  review.unknown.push(path);
  const home = from === null
    ? undefined
    : (["persona", "options", "memory"] as const).find((s) => s !== from && keysOf(s).includes(key));
  if (home !== undefined) {
    review.moves.set(path, home);
    return;
  }
  const meant = nearestName(key, known);
  if (meant !== undefined) review.hints.set(path, meant);
}

/**
 * Reviews a persona file's value: field checks, tool checks, file problems and unknown keys (with the known
 * key each most likely misspells).
 */
export function reviewDocument(value: JsonObject): Review {
  const review: Review = {
    fields: new Map(),
    tools: [],
    file: [],
    unknown: [],
    hints: new Map(),
    moves: new Map(),
  };
  for (const key of Object.keys(value)) {
    if (!(FILE_KEYS as readonly string[]).includes(key)) unknownKey(review, key, key, FILE_KEYS, "file");
  }
  const tools = npcToolNames(value);
  for (const spec of FIELDS.filter((f) => f.section === "file")) {
    const check = checkField(spec, {
      value: Object.hasOwn(value, spec.key) ? value[spec.key] : undefined,
      tools,
    });
    if (check.error || check.warning) review.fields.set(`file.${spec.key}`, check);
  }
  for (const section of ["persona", "options", "memory"] as const) {
    const raw = value[section];
    if (raw !== undefined && raw !== null && !isJsonObject(raw)) {
      review.file.push({ error: `'${section}' must be an object; got ${JSON.stringify(raw)}.` });
    }
    const object = isJsonObject(raw) ? raw : {};
    const known = keysOf(section);
    for (const key of Object.keys(object)) {
      if (!known.includes(key)) unknownKey(review, `${section}.${key}`, key, known, section);
    }
    for (const spec of FIELDS.filter((f) => f.section === section)) {
      const check = checkField(spec, {
        value: Object.hasOwn(object, spec.key) ? object[spec.key] : undefined,
        tools,
      });
      if (check.error || check.warning) review.fields.set(`${section}.${spec.key}`, check);
    }
    if (section === "persona" && (raw === undefined || raw === null)) {
      // One problem, said where it is fixed (typing a name creates the section), with what the file needs.
      review.fields.set("persona.name", {
        error: 'Name is required: type one here, or write "persona": {"name": "Gorm"} in the JSONC text.',
      });
    }
  }
  if (value.tools !== undefined && value.tools !== null && !Array.isArray(value.tools)) {
    review.file.push({ error: "'tools' must be a list of tool definitions." });
  } else if (Array.isArray(value.tools)) {
    const seen = new Set<string>();
    review.tools = value.tools.map((tool, i) => checkTool(tool, i, seen, review));
  }
  if (value.world !== undefined && value.world !== null && !isJsonObject(value.world)) {
    review.file.push({ error: "'world' (the initial world) must be an object." });
  }
  return review;
}

/**
 * The status list's line about the unknown fields of `review` (each with the section it belongs in or the
 * name it most likely misspells, and what to do); empty when there are none.
 */
export function unknownFieldsText(review: Review): string {
  if (review.unknown.length === 0) return "";
  const one = review.unknown.length === 1;
  return `Unknown field${one ? "" : "s"}: ${
    review.unknown.map((path) => {
      const meant = review.hints.get(path);
      const home = review.moves.get(path);
      if (home !== undefined) return `${path} (belongs in '${home}')`;
      return `${path}${didYouMean(meant)}`;
    }).join(", ")
  }. The bridge ignores ${one ? "it" : "them"} (with a warning); ${
    review.moves.size === 0
      ? "check the spelling."
      : review.moves.size === review.unknown.length
      ? `move ${one ? "it" : "each"} into the section it belongs in.`
      : "check the spelling, and move the ones that belong elsewhere."
  }`;
}

/** The number of errors (not warnings) in a review. */
export function errorCount(review: Review): number {
  let n = review.file.filter((c) => c.error).length;
  for (const check of review.fields.values()) if (check.error) n++;
  for (const checks of review.tools) n += checks.filter((c) => c.error).length;
  return n;
}
