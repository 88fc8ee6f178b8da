/**
 * Tools files of the commands (`--tools <file>`): JSON or JSONC, an array of tool definitions or
 * `{"tools": [...]}`. A definition may carry an `"x-oam"` block that makes it a *command tool* the CLI runs
 * itself: `command` (argv array, or a string run by the shell), `timeout` (seconds, default 30), `cwd`, `env`,
 * `maxOutputChars` (default 8000). Everything else is a client tool (PROTOCOL.md §9) answered by the user (or, in
 * `oam respond`, by `--tool-output` on resume).
 * @module
 */
import { isJsonObject, type JsonObject, type JsonValue } from "../protocol/json.ts";
import { BridgeError } from "../protocol/errors.ts";
import { CliError } from "./cli_error.ts";
import { parseJsonc, readInputText } from "./input.ts";
import { didYouMean, nearestName } from "../protocol/edit_distance.ts";
import { placeInFile, placeOfPointer } from "./json_place.ts";
import { schemaRefusal } from "./schema_file.ts";

/** A command tool's execution settings. */
export interface CommandSpec {
  /** Program and arguments (argv form), or null for a shell command. */
  argv: string[] | null;
  /** Shell command (string form), or null. */
  shell: string | null;
  /** Seconds before SIGTERM (then SIGKILL). */
  timeoutSeconds: number;
  /** Working directory (already resolved), or null for the current one. */
  cwd: string | null;
  /** Extra environment variables. */
  env: Record<string, string>;
  /** Longest output passed to the model. */
  maxOutputChars: number;
  /** Directory relative program paths resolve against. */
  baseDir: string;
}

/** Default `x-oam.timeout` (seconds). */
export const DEFAULT_COMMAND_TIMEOUT = 30;
/** Default `x-oam.maxOutputChars`. */
export const DEFAULT_MAX_OUTPUT_CHARS = 8000;

/** Where a definition was written, for messages that name its file and its place there. */
export interface ToolOrigin {
  /** The file as messages name it: its path, `<stdin>`, `--tool-json #1`. */
  label: string;
  /** The file's text (for the line and column), or null when it is not at hand. */
  text: string | null;
  /** JSON pointer of the definition in the file: `#/1`, `#/tools/0`. */
  pointer: string;
  /** Its index among the definitions of its file. */
  index: number;
}

/** The file a tools list was read from (see {@link toolsFromValue}). */
export interface ToolsFileText {
  /** The file as messages name it. */
  label: string;
  /** Its text, or null when it is not at hand. */
  text: string | null;
  /** JSON pointer of the tools value in it: `#` for a tools file, `#/tools` for a persona file's. */
  pointer: string;
}

/** The tools of a file. */
export interface LoadedTools {
  /** Definitions for the bridge (`x-oam` removed; command tools get `timeoutSeconds: 0`). */
  definitions: JsonObject[];
  /** Where each definition was written (same order as {@link LoadedTools.definitions}). */
  origins: ToolOrigin[];
  /** Definitions as written (saved in conversation files so `--resume` restores command tools). */
  raw: JsonObject[];
  /** Command tools by name. */
  commands: Map<string, CommandSpec>;
  /** Directory of the tools file (relative paths resolve against it). */
  baseDir: string;
  /** Keys of the definitions the bridge does not read (a misspelt `"paramters"`), by definition index. */
  unknownKeys: UnknownToolKey[];
}

/** A key of a tool definition that nothing reads: the bridge ignores it, so the tool lacks what it meant. */
export interface UnknownToolKey {
  /** Index of the definition in {@link LoadedTools.definitions}. */
  index: number;
  /** The key as written, with `function.` before it in the OpenAI form (`paramters`, `function.descripton`). */
  key: string;
  /** The key it most likely meant, if one is close. */
  meant?: string;
}

/** The name of a definition (bare or OpenAI `{"type": "function", "function": {…}}` form). */
export function toolName(def: JsonObject): string {
  const fn = isJsonObject(def.function) ? def.function : def;
  return typeof fn.name === "string" ? fn.name : "";
}

/** The description of a definition. */
export function toolDescription(def: JsonObject): string {
  const fn = isJsonObject(def.function) ? def.function : def;
  return typeof fn.description === "string" ? fn.description : "";
}

function xoamBlock(def: JsonObject): JsonValue | undefined {
  if (Object.hasOwn(def, "x-oam")) return def["x-oam"];
  if (isJsonObject(def.function) && Object.hasOwn(def.function, "x-oam")) return def.function["x-oam"];
  return undefined;
}

function withoutXoam(def: JsonObject): JsonObject {
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(def)) {
    if (k === "x-oam") continue;
    if (k === "function" && isJsonObject(v)) {
      const fn: JsonObject = {};
      for (const [fk, fv] of Object.entries(v)) {
        if (fk !== "x-oam") Object.defineProperty(fn, fk, enumerable(fv));
      }
      Object.defineProperty(out, k, enumerable(fn));
    } else Object.defineProperty(out, k, enumerable(v));
  }
  return out;
}

function enumerable(value: JsonValue): PropertyDescriptor {
  return { value, enumerable: true, writable: true, configurable: true };
}

function resolvePath(path: string, baseDir: string): string {
  if (path.startsWith("/") || /^[A-Za-z]:[\\/]/.test(path)) return path;
  return `${baseDir.replace(/\/$/, "")}/${path}`;
}

/** Keys of a bare tool definition (PROTOCOL.md §9; OpenAI's `strict`; oam's `x-oam`). */
const DEFINITION_KEYS = [
  "name",
  "description",
  "parameters",
  "execution",
  "timeoutSeconds",
  "strict",
  "type",
  "x-oam",
];
/** Keys beside `function` in the OpenAI form (the bridge reads `execution` and `timeoutSeconds` there too). */
const WRAPPER_KEYS = ["type", "function", "execution", "timeoutSeconds", "x-oam"];
/** Keys inside the OpenAI form's `function`. */
const FUNCTION_KEYS = ["name", "description", "parameters", "execution", "timeoutSeconds", "strict", "x-oam"];

/** The keys of definition `def` (number `index`) that nothing reads, with the one each most likely meant. */
function unknownKeysOf(def: JsonObject, index: number): UnknownToolKey[] {
  const out: UnknownToolKey[] = [];
  const check = (object: JsonObject, known: string[], prefix: string) => {
    for (const key of Object.keys(object)) {
      if (known.includes(key)) continue;
      const meant = nearestName(key, known);
      out.push({ index, key: `${prefix}${key}`, ...(meant === undefined ? {} : { meant }) });
    }
  };
  if (isJsonObject(def.function)) {
    check(def, WRAPPER_KEYS, "");
    check(def.function, FUNCTION_KEYS, "function.");
  } else check(def, DEFINITION_KEYS, "");
  return out;
}

/**
 * The warning of an unknown key of a definition: under the tool's name (`oam tools validate`) the key alone,
 * else with its file and the definition's place (`tools.json: unknown key 'tools[0].paramters' was ignored
 * (did you mean 'parameters'?).`).
 */
export function unknownToolKeyWarning(unknown: UnknownToolKey, tools?: LoadedTools): string {
  const hint = didYouMean(unknown.meant);
  const origin = tools?.origins[unknown.index];
  if (origin === undefined) return `unknown key '${unknown.key}' was ignored${hint}.`;
  // A --tool-json flag's value is the definition itself.
  const key = origin.pointer === "#" ? unknown.key : `${definitionPath(origin)}.${unknown.key}`;
  return `${origin.label}: unknown key '${key}' was ignored${hint}.`;
}

/** The warnings of every unknown key of `tools`, each naming its file and place. */
export function unknownToolKeyWarnings(tools: LoadedTools | null): string[] {
  return tools === null ? [] : tools.unknownKeys.map((u) => unknownToolKeyWarning(u, tools));
}

/**
 * A definition's place as a key path: `tools[1]` (a tools file, an array or `{"tools": […]}`, or a persona
 * file's `tools`), `oam.tools[0]` (a saved conversation's).
 */
function definitionPath(origin: ToolOrigin): string {
  const parts = origin.pointer.replace(/^#\/?/, "").split("/").filter((p) => p !== "");
  parts.pop(); // the definition's own index
  const list = parts.length === 0 ? "tools" : parts.join(".");
  return `${list}[${origin.index}]`;
}

/** The keys of an `x-oam` block. */
const XOAM_KEYS = ["command", "timeout", "cwd", "env", "maxOutputChars"];

function parseCommand(block: JsonValue, at: string, baseDir: string): CommandSpec {
  const bad = (what: string) => CliError.invalidInput(`'${at}.${what}`);
  if (!isJsonObject(block)) throw CliError.invalidInput(`'${at}' must be an object with a 'command'.`);
  // oam's own block: a misspelt key (`timout`) would leave its setting at the default without a word.
  const unknown = Object.keys(block).find((key) => !XOAM_KEYS.includes(key));
  if (unknown !== undefined) {
    const meant = nearestName(unknown, XOAM_KEYS);
    throw bad(
      `${unknown}' is not a key oam reads${didYouMean(meant)}; an x-oam block has ` +
        `${XOAM_KEYS.join(", ")}.`,
    );
  }
  const command = block.command;
  let argv: string[] | null = null;
  let shell: string | null = null;
  if (typeof command === "string" && command.trim() !== "") shell = command;
  else if (
    Array.isArray(command) && command.length > 0 && command.every((c) => typeof c === "string") &&
    (command[0] as string) !== ""
  ) {
    argv = command as string[];
  } else {
    throw bad("command' must be a non-empty argv array of strings or a shell command string.");
  }
  let timeoutSeconds = DEFAULT_COMMAND_TIMEOUT;
  if (block.timeout !== undefined && block.timeout !== null) {
    const t = block.timeout;
    if (typeof t !== "number" || !Number.isFinite(t) || t <= 0 || t > 86400) {
      throw bad("timeout' must be a number of seconds from above 0 to 86400.");
    }
    timeoutSeconds = t;
  }
  let cwd: string | null = null;
  if (block.cwd !== undefined && block.cwd !== null) {
    if (typeof block.cwd !== "string" || block.cwd === "") throw bad("cwd' must be a non-empty string.");
    cwd = resolvePath(block.cwd, baseDir);
  }
  const env: Record<string, string> = Object.create(null);
  if (block.env !== undefined && block.env !== null) {
    if (!isJsonObject(block.env)) throw bad("env' must be an object of strings.");
    for (const [k, v] of Object.entries(block.env)) {
      if (typeof v !== "string") throw bad(`env.${k}' must be a string.`);
      env[k] = v;
    }
  }
  let maxOutputChars = DEFAULT_MAX_OUTPUT_CHARS;
  if (block.maxOutputChars !== undefined && block.maxOutputChars !== null) {
    const m = block.maxOutputChars;
    if (typeof m !== "number" || !Number.isInteger(m) || m < 1 || m > 10_000_000) {
      throw bad("maxOutputChars' must be an integer from 1 to 10000000.");
    }
    maxOutputChars = m;
  }
  return { argv, shell, timeoutSeconds, cwd, env, maxOutputChars, baseDir };
}

/**
 * Reads tools from a parsed value: an array of definitions or `{"tools": [...]}`. `label` names the source in
 * errors; `baseDir` is where relative command paths resolve; `file` is the file the value was read from
 * (default: `label`, the value at its root, no text), for {@link toolsProblemInFile}.
 */
export function toolsFromValue(
  value: JsonValue,
  source: { label: string; baseDir: string; file?: ToolsFileText },
): LoadedTools {
  const { label, baseDir } = source;
  const file = source.file ?? { label, text: null, pointer: "#" };
  let list: JsonValue = value;
  let listPointer = file.pointer;
  if (isJsonObject(value)) {
    if (!Object.hasOwn(value, "tools")) {
      throw CliError.invalidInput(`${label}: expected an array of tool definitions or {"tools": [...]}.`);
    }
    list = value.tools;
    listPointer = `${file.pointer}/tools`;
  }
  if (!Array.isArray(list)) {
    throw CliError.invalidInput(`${label}: expected an array of tool definitions or {"tools": [...]}.`);
  }
  const loaded: LoadedTools = {
    definitions: [],
    origins: [],
    raw: [],
    commands: new Map(),
    baseDir,
    unknownKeys: [],
  };
  list.forEach((def, i) => {
    if (!isJsonObject(def)) throw CliError.invalidInput(`${label}: tools[${i}] must be an object.`);
    loaded.raw.push(def);
    loaded.origins.push({ label: file.label, text: file.text, pointer: `${listPointer}/${i}`, index: i });
    loaded.unknownKeys.push(...unknownKeysOf(def, i));
    const block = xoamBlock(def);
    if (block === undefined) {
      loaded.definitions.push(def);
      return;
    }
    const spec = parseCommand(block, `${label}: tools[${i}].x-oam`, baseDir);
    const clean = withoutXoam(def);
    const hasTimeout = Object.hasOwn(clean, "timeoutSeconds") ||
      (isJsonObject(clean.function) && Object.hasOwn(clean.function, "timeoutSeconds"));
    if (!hasTimeout) clean.timeoutSeconds = 0; // the CLI enforces the command's own timeout
    loaded.definitions.push(clean);
    const name = toolName(def);
    if (name !== "") loaded.commands.set(name, spec);
  });
  return loaded;
}

/** Directory part of a path ("." when none). */
export function dirname(path: string): string {
  const i = Math.max(path.lastIndexOf("/"), path.lastIndexOf("\\"));
  if (i < 0) return Deno.cwd();
  if (i === 0) return "/";
  const dir = path.slice(0, i);
  return dir.startsWith("/") || /^[A-Za-z]:/.test(dir) ? dir : `${Deno.cwd()}/${dir}`;
}

/**
 * Loads a tools file (or stdin for `-`). A file that cannot be read is named with the `--tools` flag that gave
 * it (`--tools: No such file: 'tools.json'.`), or alone when it was a command's argument (`from.argument`:
 * `oam tools validate <file>`).
 */
export async function loadToolsFile(path: string, from: { argument?: boolean } = {}): Promise<LoadedTools> {
  const text = await readInputText(path, from.argument ? undefined : "--tools");
  const label = path === "-" ? "<stdin>" : path;
  return toolsFromValue(parseJsonc(text, label), {
    label: label,
    baseDir: path === "-" ? Deno.cwd() : dirname(path),
    file: { label, text, pointer: "#" },
  });
}

/** Adds inline definitions (`--tool-json`) to loaded tools. */
export function addInlineTools(into: LoadedTools, jsonTexts: string[]): void {
  jsonTexts.forEach((text, i) => {
    const label = `--tool-json #${i + 1}`;
    const value = parseJsonc(text, label);
    const more = toolsFromValue(Array.isArray(value) ? value : [value], {
      label,
      baseDir: Deno.cwd(),
      file: { label, text, pointer: "#" },
    });
    // A single definition is the flag's whole value.
    if (!Array.isArray(value)) more.origins[0].pointer = "#";
    into.definitions.push(...more.definitions);
    into.origins.push(...more.origins);
    const offset = into.definitions.length - more.definitions.length;
    into.unknownKeys.push(...more.unknownKeys.map((u) => ({ ...u, index: u.index + offset })));
    into.raw.push(...more.raw);
    for (const [k, v] of more.commands) into.commands.set(k, v);
  });
}

/** An empty tool set. */
export function noTools(): LoadedTools {
  return { definitions: [], origins: [], raw: [], commands: new Map(), baseDir: Deno.cwd(), unknownKeys: [] };
}

/** JSON pointer of definition `index`'s parameters in its file (`#/1/parameters`, `#/tools/0/function/parameters`). */
function parametersPointer(tools: LoadedTools, index: number): string | null {
  const origin = tools.origins[index];
  if (origin === undefined) return null;
  const def = tools.definitions[index];
  return `${origin.pointer}${isJsonObject(def?.function) ? "/function" : ""}/parameters`;
}

/**
 * A warning of the bridge about the parameters of definition `index` of `tools` ("#/properties/a: …"), worded
 * for the file it was read from, with the place's line and column ("tools.json: #/1/parameters/properties/a
 * (line 5, column 42): …"), as a refusal is ({@link toolsProblemInFile}). A warning that names no part of the
 * schema, or a part the file does not have (made when the schema was converted), is returned as it is.
 *
 * @example
 * ```ts
 * import { toolsFromValue, toolWarningInFile } from "./tools_file.ts";
 * const text = '[{"name": "a", "parameters": {"type": "string", "pattern": "^a"}}]';
 * const file = { label: "t.json", text, pointer: "#" };
 * const tools = toolsFromValue(JSON.parse(text), { label: "t.json", baseDir: ".", file });
 * toolWarningInFile("#: pattern '^a' is described to the model but not enforced", { tools, index: 0 });
 * // "t.json: #/0/parameters (line 1, column 30): pattern '^a' is described to the model but not enforced"
 * ```
 */
export function toolWarningInFile(warning: string, at: { tools: LoadedTools; index: number }): string {
  const pointer = /^(#[^:\s]*): /.exec(warning)?.[1];
  const origin = at.tools.origins[at.index];
  const parameters = parametersPointer(at.tools, at.index);
  if (pointer === undefined || origin === undefined || parameters === null || origin.text === null) {
    return warning;
  }
  const inFile = parameters + pointer.slice(1);
  if (placeOfPointer(origin.text, inFile) === null) return warning;
  return `${placeInFile(origin, inFile)}: ${warning.slice(pointer.length + 2)}`;
}

/**
 * `error` worded for the files `tools` were read from, when it is the bridge's refusal of one of them: a
 * tool's parameters ("tools[1].parameters: unsupported type 'strin' (at #/properties/dir)" becomes
 * "tools.json: #/1/parameters/properties/dir (line 5, column 42): unsupported type 'strin'") or a definition
 * ("'tools[1].name' must be unique: …" gets "tools.json: #/1 (line 3, column 3): " before it, with the
 * indexes of the definitions in their own file). Anything else is returned as it is.
 *
 * @example
 * ```ts
 * import { BridgeError } from "../protocol/errors.ts";
 * import { toolsFromValue, toolsProblemInFile } from "./tools_file.ts";
 * const tools = toolsFromValue([{ name: "a", parameters: { type: "strin" } }], { label: "t.json", baseDir: "." });
 * const refused = new BridgeError(-32007, "invalid_schema", "tools[0].parameters: unsupported type 'strin' (at #)", {
 *   path: "tools[0].parameters",
 *   schemaPath: "#",
 * });
 * (toolsProblemInFile(refused, tools) as Error).message; // "t.json: #/0/parameters: unsupported type 'strin'"
 * ```
 */
export function toolsProblemInFile(error: unknown, tools: LoadedTools | null): unknown {
  if (tools === null || !(error instanceof BridgeError)) return error;
  const first = /\btools\[(\d+)\]/.exec(error.message);
  const origin = first === null ? undefined : tools.origins[Number(first[1])];
  if (first === null || origin === undefined) return error;
  const data = { ...error.data };
  if (error.dataCode === "invalid_schema") {
    const refused = schemaRefusal(error);
    if (refused === null || refused.path !== `tools[${first[1]}].parameters`) return error;
    const parameters = parametersPointer(tools, Number(first[1]))!;
    return new CliError(
      "invalid_schema",
      `${placeInFile(origin, parameters + refused.pointer.slice(1))}: ${refused.reason}`,
      data,
    );
  }
  if (error.dataCode !== "invalid_params") return error;
  // The indexes of the bridge's list are those of the definitions in their own file.
  const own = error.message.replace(/\btools\[(\d+)\]/g, (all, i) => {
    const other = tools.origins[Number(i)];
    return other !== undefined && other.label === origin.label ? `tools[${other.index}]` : all;
  });
  return new CliError("invalid_params", `${placeInFile(origin, origin.pointer)}: ${own}`, data);
}
