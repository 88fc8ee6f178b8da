/**
 * The persona document: the JSONC text of a persona file (`npc`, `persona`, `options`, `tools`, `memory`,
 * `world`, `greeting`) that the form and the raw view both edit. The text is the source of truth: a form
 * edit becomes a minimal text edit (comments and layout survive), a text edit is parsed back for the form.
 * A syntax error keeps the last valid value and says where it is. Pure: no DOM.
 * @module
 */
import { applyEdits, type JSONPath, modify, parse, type ParseError, printParseErrorCode } from "jsonc-parser";
import type { JsonObject, JsonValue } from "../../../protocol/json.ts";
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

function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
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
 * Parses JSON with comments and trailing commas. `what` names the text in messages ("The JSONC text").
 * Returns the value or the first problem with its line and column.
 */
export function parseJsonc(
  text: string,
  what = "The text",
): { value: JsonValue; problem: null } | { value: undefined; problem: SyntaxProblem } {
  const errors: ParseError[] = [];
  const value = parse(text, errors, { allowTrailingComma: true, disallowComments: false });
  if (errors.length === 0 && value === undefined) {
    return { value: undefined, problem: { message: `${what} is empty.`, line: 1, column: 1, offset: 0 } };
  }
  if (errors.length > 0) {
    const e = errors[0];
    const code = printParseErrorCode(e.error);
    const { line, column } = position(text, e.offset);
    const why = EXPLANATIONS[code] ?? code;
    return {
      value: undefined,
      problem: {
        message: `${what} is not valid JSON: ${why} on line ${line}, column ${column}.`,
        line,
        column,
        offset: e.offset,
      },
    };
  }
  return { value: value as JsonValue, problem: null };
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
    if (!isObject(parsed.value)) {
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
      else if (isObject(node) && typeof key === "string" && Object.hasOwn(node, key)) node = node[key];
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
}

/** The tools an NPC made from `value` will have: its client tools and the built-in ones its options add. */
export function npcToolNames(value: JsonObject): string[] {
  const names: string[] = [];
  if (Array.isArray(value.tools)) {
    for (const tool of value.tools) {
      if (isObject(tool) && typeof tool.name === "string") names.push(tool.name);
    }
  }
  const options = isObject(value.options) ? value.options : {};
  if (isObject(value.world)) {
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

function checkTool(tool: JsonValue, index: number, seen: Set<string>, unknown: string[]): Check[] {
  if (!isObject(tool)) return [{ error: `Tool ${index + 1} must be an object with a name.` }];
  const checks: Check[] = [];
  for (const key of Object.keys(tool)) {
    if (!(TOOL_KEYS as readonly string[]).includes(key)) unknown.push(`tools[${index}].${key}`);
  }
  const name = tool.name;
  if (typeof name !== "string" || !TOOL_NAME.test(name)) {
    checks.push({ error: `Name must be 1–64 of A–Z a–z 0–9 _ - . ; got ${JSON.stringify(name ?? null)}.` });
  } else if (seen.has(name)) {
    checks.push({ error: `Two tools are named '${name}'; names are unique per NPC.` });
  } else if (BUILTIN_TOOLS.includes(name)) {
    checks.push({ warning: `'${name}' is a built-in tool name; the bridge may reject the duplicate.` });
  }
  if (typeof name === "string") seen.add(name);
  if (tool.description === undefined || tool.description === null || tool.description === "") {
    checks.push({ warning: "No description: the model decides from it (the bridge warns)." });
  } else if (typeof tool.description !== "string") {
    checks.push({ error: "The description must be text." });
  }
  if (tool.parameters !== undefined && tool.parameters !== null && !isObject(tool.parameters)) {
    checks.push({ error: 'Parameters must be a JSON Schema object, e.g. {"type": "object", …}.' });
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

/** Reviews a persona file's value: field checks, tool checks, file problems and unknown keys. */
export function reviewDocument(value: JsonObject): Review {
  const review: Review = { fields: new Map(), tools: [], file: [], unknown: [] };
  for (const key of Object.keys(value)) {
    if (!(FILE_KEYS as readonly string[]).includes(key)) review.unknown.push(key);
  }
  const tools = npcToolNames(value);
  for (const spec of FIELDS.filter((f) => f.section === "file")) {
    const check = checkField(spec, Object.hasOwn(value, spec.key) ? value[spec.key] : undefined, tools);
    if (check.error || check.warning) review.fields.set(`file.${spec.key}`, check);
  }
  for (const section of ["persona", "options", "memory"] as const) {
    const raw = value[section];
    if (raw !== undefined && raw !== null && !isObject(raw)) {
      review.file.push({ error: `'${section}' must be an object; got ${JSON.stringify(raw)}.` });
    }
    const object = isObject(raw) ? raw : {};
    if (section === "persona" && (raw === undefined || raw === null)) {
      review.file.push({ error: "A persona file needs a 'persona' object with at least a 'name'." });
    }
    const known = keysOf(section);
    for (const key of Object.keys(object)) {
      if (!known.includes(key)) review.unknown.push(`${section}.${key}`);
    }
    for (const spec of FIELDS.filter((f) => f.section === section)) {
      const check = checkField(spec, Object.hasOwn(object, spec.key) ? object[spec.key] : undefined, tools);
      if (check.error || check.warning) review.fields.set(`${section}.${spec.key}`, check);
    }
  }
  if (value.tools !== undefined && value.tools !== null && !Array.isArray(value.tools)) {
    review.file.push({ error: "'tools' must be a list of tool definitions." });
  } else if (Array.isArray(value.tools)) {
    const seen = new Set<string>();
    review.tools = value.tools.map((tool, i) => checkTool(tool, i, seen, review.unknown));
  }
  if (value.world !== undefined && value.world !== null && !isObject(value.world)) {
    review.file.push({ error: "'world' (the initial world) must be an object." });
  }
  return review;
}

/** The number of errors (not warnings) in a review. */
export function errorCount(review: Review): number {
  let n = review.file.filter((c) => c.error).length;
  for (const check of review.fields.values()) if (check.error) n++;
  for (const checks of review.tools) n += checks.filter((c) => c.error).length;
  return n;
}
