/**
 * Best-effort parsing of a JSON document that is still being streamed, for `onPartial` snapshots:
 * open strings that hold values are closed, open arrays/objects are closed, and an incomplete trailing
 * member (a key without value, a cut literal) is dropped.
 * @module
 */
import type { JsonValue } from "../protocol/json.ts";
import { withoutTrailingHalf } from "../util/text.ts";

interface Frame {
  close: "}" | "]";
  /** For objects: whether the next string is a key. */
  expectKey: boolean;
}

function closers(stack: Frame[]): string {
  let out = "";
  for (let i = stack.length - 1; i >= 0; i--) out += stack[i].close;
  return out;
}

function tryParse(text: string): JsonValue | undefined {
  try {
    return JSON.parse(text) as JsonValue;
  } catch {
    return undefined;
  }
}

/**
 * The value a JSON prefix stands for so far, or `undefined` when nothing usable was received yet.
 *
 * @example
 * ```ts
 * import { parsePartialJson } from "./openai_partial_json.ts";
 * parsePartialJson('{"reasoning": "The gate is ja'); // → { reasoning: "The gate is ja" }
 * ```
 */
export function parsePartialJson(text: string): JsonValue | undefined {
  const stack: Frame[] = [];
  let safe: string | undefined; // the longest prefix known to end after a complete member, closed
  let inString = false;
  let stringIsKey = false;
  let escape = false;
  let stringStart = 0;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (inString) {
      if (escape) escape = false;
      else if (ch === "\\") escape = true;
      else if (ch === '"') {
        inString = false;
        if (!stringIsKey) safe = text.slice(0, i + 1) + closers(stack);
      }
      continue;
    }
    switch (ch) {
      case '"': {
        inString = true;
        stringStart = i;
        const top = stack[stack.length - 1];
        stringIsKey = top !== undefined && top.close === "}" && top.expectKey;
        break;
      }
      case "{":
        stack.push({ close: "}", expectKey: true });
        safe = text.slice(0, i + 1) + closers(stack);
        break;
      case "[":
        stack.push({ close: "]", expectKey: false });
        safe = text.slice(0, i + 1) + closers(stack);
        break;
      case "}":
      case "]":
        stack.pop();
        safe = text.slice(0, i + 1) + closers(stack);
        break;
      case ":": {
        const top = stack[stack.length - 1];
        if (top !== undefined) top.expectKey = false;
        break;
      }
      case ",": {
        const top = stack[stack.length - 1];
        if (top !== undefined && top.close === "}") top.expectKey = true;
        // The member before the comma is complete.
        safe = text.slice(0, i) + closers(stack);
        break;
      }
      default:
        break;
    }
  }
  const candidates: string[] = [];
  if (inString && !stringIsKey) {
    let body = text.slice(0, text.length);
    if (escape) body = body.slice(0, -1);
    // Drop an incomplete \uXXXX escape, and the first half of a surrogate pair whose second half is still to
    // come (escaped or not): a partial value never holds half an emoji.
    body = body.replace(/\\u[0-9a-fA-F]{0,3}$/, "");
    const half = /\\u[dD][89abAB][0-9a-fA-F]{2}$/.exec(body);
    if (half !== null && /(^|[^\\])(\\\\)*$/.test(body.slice(0, half.index))) {
      body = body.slice(0, half.index);
    }
    body = withoutTrailingHalf(body);
    if (body.length > stringStart) candidates.push(`${body}"${closers(stack)}`);
  }
  if (!inString) candidates.push(text + closers(stack));
  if (safe !== undefined) candidates.push(safe);
  for (const candidate of candidates) {
    const value = tryParse(candidate);
    if (value !== undefined) return value;
  }
  return undefined;
}
