/**
 * World paths: parsing, formatting and relations between paths (reference-behavior §2.13).
 *
 * A path names a value inside a world's JSON object. Accepted spellings (whitespace around the whole path is
 * trimmed first):
 * - `""`, `"$"`, `"/"`, `"."` — the root;
 * - dot paths `player.gold`, `party.0.name`;
 * - a leading `$.` or `/` is stripped (`$.player.gold`, `/player/gold`);
 * - brackets and slashes are separators: `party[0].name`, `[0].name`, `player/gold`.
 *
 * Any other empty segment (`a..b`, `a.`, `.a`) is an error. Keys containing `.`, `/` or `[` cannot be
 * addressed. The canonical form of a path is its segments joined with `"."` (the root is `""`).
 * @module
 */

import { WorldError } from "./world_error.ts";

/** Message of a malformed path. */
export function invalidPathMessage(path: string): string {
  return `'${path}' is not a valid path. Use dot-separated keys such as 'player.gold'.`;
}

/**
 * Parses a world path into its segments (`[]` is the root).
 *
 * @throws {WorldError} when the path has an empty segment (message names the path as given).
 * @example
 * ```ts
 * parseWorldPath("$.party[0].name"); // ["party", "0", "name"]
 * ```
 */
export function parseWorldPath(path: string): string[] {
  let text = path.trim();
  if (text === "" || text === "$" || text === "/" || text === ".") return [];
  if (text.startsWith("$.")) text = text.slice(2);
  else if (text.startsWith("/")) text = text.slice(1);
  if (text === "") return [];
  const leadingBracket = text.startsWith("[");
  text = text.replaceAll("[", ".").replaceAll("]", "").replaceAll("/", ".");
  const segments = text.split(".");
  if (leadingBracket && segments[0] === "") segments.shift();
  if (segments.length === 0 || segments.some((segment) => segment === "")) {
    throw new WorldError(invalidPathMessage(path), path);
  }
  return segments;
}

/** Canonical text of a path: segments joined with `"."` (`""` for the root). */
export function formatWorldPath(segments: readonly string[]): string {
  return segments.join(".");
}

/** Parses and re-formats a path (`" $.a[0] "` → `"a.0"`). @throws {WorldError} on a malformed path. */
export function canonicalWorldPath(path: string): string {
  return formatWorldPath(parseWorldPath(path));
}

/**
 * A path given either as text (parsed with {@link parseWorldPath}) or as already-parsed segments.
 *
 * @example
 * ```ts
 * import { type WorldPathInput, WorldState } from "@open-apple-models/bridge/engine";
 * const world = new WorldState({ "inn.keeper": { name: "Mira" } });
 * const path: WorldPathInput = ["inn.keeper", "name"]; // segments: a key with a dot in it
 * world.get(path).value; // "Mira"
 * ```
 */
export type WorldPathInput = string | readonly string[];

/** Segments of a path input (text is parsed; a segment array is copied as is). @throws {WorldError} */
export function toSegments(path: WorldPathInput): string[] {
  return typeof path === "string" ? parseWorldPath(path) : [...path];
}

/** True when `a` is `b` or an ancestor of `b` (segment-wise; the root is a prefix of everything). */
export function isPrefix(a: readonly string[], b: readonly string[]): boolean {
  if (a.length > b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** True when `path` lies strictly inside `ancestor`. */
export function isInside(path: readonly string[], ancestor: readonly string[]): boolean {
  return path.length > ancestor.length && isPrefix(ancestor, path);
}

/** True when `a` and `b` name the same value. */
export function isSamePath(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && isPrefix(a, b);
}

/** How path `a` relates to path `b`. */
export type PathRelation = "same" | "inside" | "above" | "unrelated";

/** The relation of `a` to `b`: the same path, inside `b`, above (an ancestor of) `b`, or unrelated. */
export function pathRelation(a: readonly string[], b: readonly string[]): PathRelation {
  if (isPrefix(a, b)) return a.length === b.length ? "same" : "above";
  if (isPrefix(b, a)) return "inside";
  return "unrelated";
}

/** True when a change at one path affects a value at the other (same path, inside or above). */
export function pathsOverlap(a: readonly string[], b: readonly string[]): boolean {
  return isPrefix(a, b) || isPrefix(b, a);
}

/** The array index a segment denotes (decimal digits only), or `undefined`. */
export function arrayIndex(segment: string): number | undefined {
  if (!/^[0-9]+$/.test(segment)) return undefined;
  const index = Number(segment);
  return Number.isSafeInteger(index) ? index : undefined;
}
