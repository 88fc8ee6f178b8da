/**
 * Local JSON Schema `$ref` resolution (`#` and `#/json/pointer`), shared by the converter and the output
 * reorderer. Never walks prototypes: only own properties and in-range array indexes are followed.
 * @module
 */
import { isJsonObject, type JsonValue } from "../protocol/json.ts";

/** Outcome of resolving a `$ref`. */
export type RefResolution =
  | { readonly ok: true; readonly target: JsonValue }
  | { readonly ok: false; readonly reason: "nonlocal" | "unresolvable" };

/** Decodes one JSON pointer segment: URI percent-decoding (when well formed), then `~1` → `/`, `~0` → `~`. */
export function unescapePointerSegment(segment: string): string {
  let text = segment;
  if (text.includes("%")) {
    try {
      text = decodeURIComponent(text);
    } catch {
      // Not percent-encoded after all: use the raw text.
    }
  }
  return text.replaceAll("~1", "/").replaceAll("~0", "~");
}

/** Escapes a key for use as a JSON pointer segment (`~` → `~0`, `/` → `~1`). */
export function escapePointerSegment(key: string): string {
  return key.replaceAll("~", "~0").replaceAll("/", "~1");
}

/** True when `ref` is a local reference this module can resolve (`#` or `#/…`). */
export function isLocalRef(ref: string): boolean {
  return ref === "#" || ref.startsWith("#/");
}

/**
 * Resolves a local `$ref` against the document `root`.
 *
 * @example
 * ```ts
 * resolveLocalRef({ $defs: { a: { type: "string" } } }, "#/$defs/a"); // { ok: true, target: { type: "string" } }
 * ```
 */
export function resolveLocalRef(root: JsonValue, ref: string): RefResolution {
  if (!isLocalRef(ref)) return { ok: false, reason: "nonlocal" };
  if (ref === "#") return { ok: true, target: root };
  let node: JsonValue = root;
  for (const raw of ref.slice(2).split("/")) {
    const segment = unescapePointerSegment(raw);
    if (Array.isArray(node)) {
      if (!/^(0|[1-9][0-9]*)$/.test(segment)) return { ok: false, reason: "unresolvable" };
      const index = Number(segment);
      if (index >= node.length) return { ok: false, reason: "unresolvable" };
      node = node[index];
    } else if (isJsonObject(node)) {
      if (!Object.hasOwn(node, segment)) return { ok: false, reason: "unresolvable" };
      node = node[segment];
    } else {
      return { ok: false, reason: "unresolvable" };
    }
  }
  return { ok: true, target: node };
}
