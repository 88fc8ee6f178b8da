/**
 * The NPC world tools `read_world_state` and `update_world_state` as pure definitions plus handlers
 * (reference-behavior §2.13). No JSON-RPC here: the NPC layer offers these tools to the model and feeds the
 * model's arguments to `run`.
 *
 * Key resolution (both tools): each segment first matches a stored key exactly, then case-insensitively (the
 * first such key in stored order); a segment that matches nothing in the state takes the spelling of a
 * configured (readable/writable) path at the same position when that matches case-insensitively. Access is
 * then decided on the resolved path, segment-wise and case-sensitively, against the configured prefixes.
 * @module
 */

import type { JsonObject, JsonValue } from "../../protocol/json.ts";
import { compactJson, ownValue, setOwn } from "../../protocol/json.ts";
import { arrayIndex, formatWorldPath, isInside, isPrefix, parseWorldPath } from "./path.ts";
import { WorldError } from "./world_error.ts";
import type { WorldState } from "./world_state.ts";
import {
  counted,
  exportValue,
  isObjectValue,
  ownChild,
  type ReadonlyJsonValue,
  scalarTypePhrase,
} from "./world_values.ts";
import { truncateText } from "../../util/text.ts";

/** Name of the read tool. */
export const READ_WORLD_STATE_TOOL = "read_world_state";
/** Name of the write tool. */
export const UPDATE_WORLD_STATE_TOOL = "update_world_state";
/** Longest compact JSON `read_world_state` returns before shortening. */
export const READ_OUTPUT_LIMIT = 1500;
/** Note added to a shortened object. */
export const SHORTENED_NOTE = "Shortened. Read a narrower path for details.";

/** What a world tool hands back for one call. */
export interface WorldToolResult {
  /** The output value: the JSON read (success of `read_world_state`) or a message string. */
  output: JsonValue;
  /** The text for the model: compact JSON of a read value, the message otherwise. */
  text: string;
  /** True when the call failed (the model should see it as an error output). */
  isError: boolean;
}

/** A local tool: definition (name, description, JSON Schema parameters) and handler. */
export interface WorldTool {
  /** Tool name as the model sees it. */
  readonly name: string;
  /** Description as the model sees it (computed when read; the read tool lists the current top-level keys). */
  readonly description: string;
  /** JSON Schema of the arguments. */
  readonly parameters: JsonObject;
  /** Runs one call with the model's arguments. Never throws for bad arguments: they become error results. */
  run(args: JsonObject): WorldToolResult;
}

/**
 * The `read_world_state(path)` tool for an NPC that may read `readable` paths (`""` = everything).
 * @throws {WorldError} when a readable path is malformed.
 */
export function readWorldStateTool(readable: readonly string[], world: WorldState): WorldTool {
  const prefixes = parsePrefixes(readable);
  const everything = prefixes.some((p) => p.length === 0);
  const parameters: JsonObject = {
    type: "object",
    properties: {
      path: {
        type: "string",
        description: "Dot path such as 'player.gold'. Empty string for everything you may read.",
      },
    },
    required: ["path"],
  };
  return {
    name: READ_WORLD_STATE_TOOL,
    get description(): string {
      const base = "Read the current game state (JSON). Use it to check facts before you answer.";
      const topKeys = everything ? (world.keys("") ?? []) : [];
      if (everything && topKeys.length > 0) {
        return `${base} Top-level keys: ${topKeys.slice(0, 12).join(", ")}.`;
      }
      return `${base} Readable paths: ${formatPathList(prefixes)}.`;
    },
    parameters,
    run(args: JsonObject): WorldToolResult {
      const resolved = resolvedPathArgument(args, world, prefixes);
      if (resolved instanceof WorldError) return failure(resolved.message);
      const shown = formatWorldPath(resolved);
      if (prefixes.some((p) => isPrefix(p, resolved))) {
        const value = world.peek(resolved);
        if (value === undefined) return failure(missingValueMessage(world, resolved, prefixes));
        return success(shortenForModel(value));
      }
      const below = prefixes.filter((p) => isInside(p, resolved));
      if (below.length > 0) return success(shortenForModel(readableSubtrees(world, resolved, below)));
      return failure(`You cannot read '${shown}'. Readable paths: ${formatPathList(prefixes)}.`);
    },
  };
}

/**
 * The `update_world_state(path, value)` tool for an NPC that may change `writable` paths. The value arrives
 * as text and is coerced to the type already stored (see {@link coerceWorldValue}). Only offer it when
 * `writable` is non-empty (see {@link worldTools}).
 * @throws {WorldError} when a writable path is malformed.
 */
export function updateWorldStateTool(writable: readonly string[], world: WorldState): WorldTool {
  const prefixes = parsePrefixes(writable);
  const description = `Change a value in the game state. Writable paths: ${formatPathList(prefixes)}.`;
  const parameters: JsonObject = {
    type: "object",
    properties: {
      path: { type: "string", description: "Dot path to change, such as 'quests.lost_ring.status'." },
      value: { type: "string", description: 'The new value, e.g. 42, true, done, or {"a": 1}.' },
    },
    required: ["path", "value"],
  };
  return {
    name: UPDATE_WORLD_STATE_TOOL,
    description,
    parameters,
    run(args: JsonObject): WorldToolResult {
      const resolved = resolvedPathArgument(args, world, prefixes);
      if (resolved instanceof WorldError) return failure(resolved.message);
      const shown = formatWorldPath(resolved);
      if (!prefixes.some((p) => isPrefix(p, resolved))) {
        return failure(`'${shown}' is read-only. You may change: ${formatPathList(prefixes)}.`);
      }
      const raw = isObjectValue(args) ? ownValue(args, "value") : undefined;
      if (raw === undefined) return failure(`Cannot set '${shown}': no value was given.`);
      const text = typeof raw === "string" ? raw : compactJson(raw);
      const current = world.peek(resolved);
      const coerced = coerceWorldValue(text, { path: shown, current });
      if ("error" in coerced) return failure(coerced.error);
      const was = current === undefined ? "." : ` (was ${truncateText(compactJson(current), 200)}).`;
      try {
        world.set(resolved, coerced.value);
      } catch (error) {
        if (error instanceof WorldError) return failure(error.message);
        throw error;
      }
      return successText(`Set ${shown} to ${truncateText(compactJson(coerced.value), 200)}${was}`);
    },
  };
}

/**
 * The world tools an NPC gets, in order: `read_world_state` when `paths.readable` is non-empty, then
 * `update_world_state` when `paths.writable` is non-empty.
 * @throws {WorldError} when a configured path is malformed.
 */
export function worldTools(
  world: WorldState,
  paths: { readable: readonly string[]; writable: readonly string[] },
): WorldTool[] {
  const { readable, writable } = paths;
  const tools: WorldTool[] = [];
  if (readable.length > 0) tools.push(readWorldStateTool(readable, world));
  if (writable.length > 0) tools.push(updateWorldStateTool(writable, world));
  return tools;
}

/**
 * Coerces the model's text to the type of the `current` stored value:
 * - string: the text as is (a quoted JSON string literal is unwrapped);
 * - number: commas removed, then a decimal number;
 * - boolean: `true`/`yes`/`1` or `false`/`no`/`0` (case-insensitive);
 * - list / object: the text must be JSON of the same kind (the error shows an example of that kind);
 * - absent or `null`: the JSON value if the text parses as JSON, else the text.
 *
 * For numbers and booleans a quoted literal (`"42"`) is unwrapped first.
 * @returns `{value}` or `{error}` with the message for the model.
 */
export function coerceWorldValue(
  text: string,
  target: { path: string; current: ReadonlyJsonValue | undefined },
): { value: JsonValue } | { error: string } {
  const { path, current } = target;
  if (current === undefined || current === null) {
    const parsed = tryParseJson(text);
    return { value: parsed === undefined ? text : parsed };
  }
  if (typeof current === "string") return { value: unquote(text) };
  if (typeof current === "number") {
    const cleaned = unquote(text).trim().replaceAll(",", "");
    const number = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/.test(cleaned) ? Number(cleaned) : NaN;
    if (!Number.isFinite(number)) {
      return { error: `Cannot set '${path}': it holds a number; '${text}' is not a number.` };
    }
    return { value: number };
  }
  if (typeof current === "boolean") {
    const word = unquote(text).trim().toLowerCase();
    if (word === "true" || word === "yes" || word === "1") return { value: true };
    if (word === "false" || word === "no" || word === "0") return { value: false };
    return { error: `Cannot set '${path}': it holds true or false; got '${text}'.` };
  }
  const parsed = tryParseJson(text);
  if (Array.isArray(current)) {
    if (Array.isArray(parsed)) return { value: parsed };
    return { error: `Cannot set '${path}': it holds a list; send a JSON list such as ["a", "b"].` };
  }
  if (isObjectValue(parsed)) return { value: parsed };
  return { error: `Cannot set '${path}': it holds an object; send a JSON object such as {"key": "value"}.` };
}

/**
 * The "Game state" summary lines of `paths` for an NPC prompt. Each path's value is flattened: objects are
 * followed into their members up to 4 levels below the path, giving one `"path: value"` line per leaf
 * (strings unquoted, other values compact JSON, empty objects `{}`); a value text over 200 characters is cut
 * to 197 + `"..."`. The root is labelled `state` when it is itself a leaf; its members keep their own paths.
 * Malformed and missing paths are skipped, repeated paths are summarized once. At most 30 lines are kept,
 * then a line `"(<n> more not shown)"`. Lines are joined with `"\n"` (`""` when there is nothing).
 */
export function summarizeWorld(world: WorldState, paths: readonly string[]): string {
  const lines: string[] = [];
  const seen = new Set<string>();
  for (const path of paths) {
    let segments: string[];
    try {
      segments = parseWorldPath(path);
    } catch {
      continue;
    }
    const key = formatWorldPath(segments);
    if (seen.has(key)) continue;
    seen.add(key);
    const value = world.peek(segments);
    if (value === undefined) continue;
    flattenInto(lines, key, value, 0);
  }
  if (lines.length <= 30) return lines.join("\n");
  return [...lines.slice(0, 30), `(${lines.length - 30} more not shown)`].join("\n");
}

/**
 * Shortens a value for the model so its compact JSON has at most {@link READ_OUTPUT_LIMIT} characters:
 * - an object keeps its keys, each nested object becoming `"{object with N keys}"`, each list
 *   `"[list of N items]"` (`"1 key"`, `"1 item"` for one), each string over 80 characters 77 + `"..."`, plus
 *   `_note` (when even that is too long, trailing keys are dropped and the note says how many are shown);
 * - a list becomes `{"items": [...as many whole items as fit...], "_note": "Showing K of N items."}` (when not
 *   even one whole item fits, items are abbreviated like object members);
 * - a long string is cut and ends with `"..."`.
 * Values that fit are returned as plain copies.
 */
export function shortenForModel(value: ReadonlyJsonValue, limit = READ_OUTPUT_LIMIT): JsonValue {
  if (compactJson(value).length <= limit) return exportValue(value);
  if (typeof value === "string") return cutString(value, limit);
  if (Array.isArray(value)) return shortenList(value, limit);
  if (isObjectValue(value)) return shortenObject(value, limit);
  return exportValue(value);
}

// ---- helpers ----

function parsePrefixes(paths: readonly string[]): string[][] {
  const out: string[][] = [];
  const seen = new Set<string>();
  for (const path of paths) {
    const segments = parseWorldPath(path);
    const key = formatWorldPath(segments);
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(segments);
  }
  return out;
}

function formatPathList(prefixes: readonly (readonly string[])[]): string {
  return prefixes.map((p) => (p.length === 0 ? "(everything)" : formatWorldPath(p))).join(", ");
}

/** The parsed `path` argument (missing or null = root; numbers accepted) or the error to report. */
function pathArgument(args: JsonObject): string[] | WorldError {
  const raw = isObjectValue(args) ? ownValue(args, "path") : undefined;
  let text: string;
  if (raw === undefined || raw === null) text = "";
  else if (typeof raw === "string") text = raw;
  else if (typeof raw === "number") text = String(raw);
  else return new WorldError("The path must be a string such as 'player.gold'.", compactJson(raw));
  try {
    return parseWorldPath(text);
  } catch (error) {
    if (error instanceof WorldError) return error;
    throw error;
  }
}

/** The `path` argument resolved with {@link resolvePath}, or the error to report. */
function resolvedPathArgument(
  args: JsonObject,
  world: WorldState,
  prefixes: readonly string[][],
): string[] | WorldError {
  const requested = pathArgument(args);
  return requested instanceof WorldError ? requested : resolvePath(world, requested, prefixes);
}

/** Resolves requested segments against the stored keys (exact, then case-insensitive) and the prefixes. */
function resolvePath(
  world: WorldState,
  segments: readonly string[],
  prefixes: readonly string[][],
): string[] {
  const out: string[] = [];
  let node: ReadonlyJsonValue | undefined = world.peek([]);
  for (const segment of segments) {
    let chosen: string | undefined;
    if (isObjectValue(node)) {
      if (Object.hasOwn(node, segment)) chosen = segment;
      else {
        const lower = segment.toLowerCase();
        chosen = Object.keys(node).find((k) => k.toLowerCase() === lower);
      }
      node = chosen === undefined ? undefined : ownChild(node, chosen);
    } else if (Array.isArray(node)) {
      const index = arrayIndex(segment);
      if (index !== undefined && index < node.length) {
        chosen = String(index);
        node = node[index];
      } else {
        node = undefined;
      }
    } else {
      node = undefined;
    }
    if (chosen === undefined) chosen = prefixSpelling(prefixes, out, segment) ?? segment;
    out.push(chosen);
  }
  return out;
}

function prefixSpelling(prefixes: readonly string[][], resolved: readonly string[], segment: string) {
  const lower = segment.toLowerCase();
  const i = resolved.length;
  const match = prefixes.find((p) =>
    p.length > i && p[i].toLowerCase() === lower && isPrefix(resolved, p.slice(0, i))
  );
  return match?.[i];
}

function missingValueMessage(
  world: WorldState,
  resolved: readonly string[],
  prefixes: readonly string[][],
): string {
  const shown = formatWorldPath(resolved);
  const base = `No value at '${shown}'.`;
  let depth = resolved.length - 1;
  while (depth > 0 && world.peek(resolved.slice(0, depth)) === undefined) depth -= 1;
  const ancestor = resolved.slice(0, Math.max(0, depth));
  if (!prefixes.some((p) => isPrefix(p, ancestor))) return base;
  const node = world.peek(ancestor);
  const name = formatWorldPath(ancestor);
  if (isObjectValue(node)) {
    const keys = Object.keys(node);
    if (keys.length === 0) return base;
    const listing = keys.slice(0, 20).join(", ") + (keys.length > 20 ? ", ..." : "");
    return ancestor.length === 0
      ? `${base} The state has keys: ${listing}.`
      : `${base} '${name}' has keys: ${listing}.`;
  }
  if (Array.isArray(node)) {
    if (node.length === 0) return `${base} '${name}' is an empty list.`;
    const indices = node.length === 1 ? "index 0" : `indices 0...${node.length - 1}`;
    return `${base} '${name}' is a list of ${counted(node.length, "item")} (${indices}).`;
  }
  if (node === null) return `${base} '${name}' is null.`;
  if (node === undefined) return base;
  return `${base} '${name}' is ${scalarTypePhrase(node)}: ${truncateText(compactJson(node), 200)}.`;
}

/** The readable subtrees below `at`, placed at their relative paths (missing ones skipped). */
function readableSubtrees(world: WorldState, at: readonly string[], below: readonly string[][]): JsonObject {
  const out: JsonObject = {};
  const included = below.filter((p) => !below.some((q) => q !== p && isInside(p, q)));
  for (const prefix of included) {
    const value = world.peek(prefix);
    if (value === undefined) continue;
    const relative = prefix.slice(at.length);
    let node = out;
    for (const segment of relative.slice(0, -1)) {
      const child = Object.hasOwn(node, segment) ? node[segment] : undefined;
      if (isObjectValue(child)) node = child;
      else {
        const created: JsonObject = {};
        setOwn(node, segment, created);
        node = created;
      }
    }
    setOwn(node, relative[relative.length - 1], exportValue(value));
  }
  return out;
}

function abbreviate(value: ReadonlyJsonValue): JsonValue {
  if (Array.isArray(value)) return `[list of ${counted(value.length, "item")}]`;
  if (isObjectValue(value)) return `{object with ${counted(Object.keys(value).length, "key")}}`;
  if (typeof value === "string") return truncateText(value, 80);
  return value as JsonValue;
}

function shortenObject(value: ReadonlyJsonValue & object, limit: number): JsonObject {
  const keys = Object.keys(value);
  const source = value as Readonly<Record<string, ReadonlyJsonValue>>;
  const build = (count: number): JsonObject => {
    const out: JsonObject = {};
    for (const key of keys.slice(0, count)) setOwn(out, key, abbreviate(source[key]));
    const note = count === keys.length
      ? SHORTENED_NOTE
      : `Shortened. Showing ${count} of ${keys.length} keys. Read a narrower path for details.`;
    setOwn(out, "_note", note);
    return out;
  };
  let out = build(keys.length);
  if (compactJson(out).length <= limit) return out;
  let low = 0;
  let high = keys.length - 1;
  while (low < high) {
    const mid = Math.ceil((low + high) / 2);
    if (compactJson(build(mid)).length <= limit) low = mid;
    else high = mid - 1;
  }
  out = build(low);
  return out;
}

function shortenList(value: readonly ReadonlyJsonValue[], limit: number): JsonObject {
  const total = value.length;
  const pick = (map: (item: ReadonlyJsonValue) => JsonValue): JsonObject => {
    const items: JsonValue[] = [];
    // Budget with the longest possible note, so the final object always fits.
    let length = compactJson({ items: [], _note: `Showing ${total} of ${total} items.` }).length;
    for (const item of value) {
      const mapped = map(item);
      const extra = compactJson(mapped).length + (items.length > 0 ? 1 : 0);
      if (length + extra > limit) break;
      items.push(mapped);
      length += extra;
    }
    return { items, _note: `Showing ${items.length} of ${total} items.` };
  };
  const whole = pick((item) => exportValue(item));
  if ((whole.items as JsonValue[]).length > 0 || total === 0) return whole;
  return pick(abbreviate);
}

function cutString(text: string, limit: number): string {
  // Largest cut whose JSON (quotes and escapes included) fits.
  const fits = (keep: number) => compactJson(truncateText(text, keep + 3)).length <= limit;
  let low = 0;
  let high = Math.min(text.length, limit);
  while (low < high) {
    const mid = Math.ceil((low + high) / 2);
    if (fits(mid)) low = mid;
    else high = mid - 1;
  }
  return truncateText(text, low + 3);
}

function flattenInto(lines: string[], path: string, value: ReadonlyJsonValue, depth: number): void {
  if (isObjectValue(value) && depth < 4) {
    const keys = Object.keys(value);
    if (keys.length > 0) {
      for (const key of keys) {
        flattenInto(lines, path === "" ? key : `${path}.${key}`, value[key], depth + 1);
      }
      return;
    }
  }
  const text = typeof value === "string" ? value : compactJson(value);
  lines.push(`${path === "" ? "state" : path}: ${truncateText(text, 200)}`);
}

function tryParseJson(text: string): JsonValue | undefined {
  try {
    return JSON.parse(text) as JsonValue;
  } catch {
    return undefined;
  }
}

function unquote(text: string): string {
  const trimmed = text.trim();
  if (trimmed.length >= 2 && trimmed.startsWith('"') && trimmed.endsWith('"')) {
    const parsed = tryParseJson(trimmed);
    if (typeof parsed === "string") return parsed;
  }
  return text;
}

function success(output: JsonValue): WorldToolResult {
  return { output, text: compactJson(output), isError: false };
}

function successText(message: string): WorldToolResult {
  return { output: message, text: message, isError: false };
}

function failure(message: string): WorldToolResult {
  return { output: message, text: message, isError: true };
}
