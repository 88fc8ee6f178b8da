/**
 * JSON text with the freedom a fuzzer needs: objects as ordered key/value pairs (so duplicate keys and
 * literal `__proto__` keys can be written), and raw text fragments (`1e400`, deep nesting, bad escapes).
 */
import type { JsonValue } from "../../src/protocol/json.ts";

/** A raw JSON text fragment written as is. */
export class Raw {
  constructor(readonly text: string) {}
}

/** An object written as ordered pairs (keys may repeat). */
export class Pairs {
  constructor(readonly pairs: Array<[string, Node]>) {}
}

/** A value the writer understands. */
export type Node = JsonValue | Raw | Pairs | readonly Node[] | { [key: string]: Node | undefined };

/** Writes `node` as compact JSON text. */
export function jsonText(node: Node): string {
  if (node instanceof Raw) return node.text;
  if (node instanceof Pairs) {
    return "{" + node.pairs.map(([k, v]) => JSON.stringify(k) + ":" + jsonText(v)).join(",") + "}";
  }
  if (Array.isArray(node)) return "[" + (node as readonly Node[]).map(jsonText).join(",") + "]";
  if (node !== null && typeof node === "object") {
    const object = node as { [key: string]: Node | undefined };
    const keys = Object.keys(object).filter((k) => object[k] !== undefined);
    return "{" + keys.map((k) => JSON.stringify(k) + ":" + jsonText(object[k]!)).join(",") + "}";
  }
  return JSON.stringify(node);
}

/** Turns a plain object node into pairs (other nodes are returned unchanged). */
export function toPairs(node: Node): Node {
  if (node === null || typeof node !== "object" || node instanceof Raw || node instanceof Pairs) return node;
  if (Array.isArray(node)) return node;
  const object = node as { [key: string]: Node | undefined };
  return new Pairs(Object.keys(object).filter((k) => object[k] !== undefined).map((k) => [k, object[k]!]));
}
