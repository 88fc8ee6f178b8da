/**
 * Streaming a JSON answer (`json_schema`, or `json_object` generated under a schema) as it is generated.
 *
 * The backends report a schema answer while it is written as partial values (the JSON so far, parsed best
 * effort and put in schema order), and the finished answer is the compact JSON of the value in schema order.
 * From each partial value this sends the part of that compact text which can no longer change: every member
 * before the one being written, and the start of that one (an open string without its closing quote; a
 * number only once something follows it, since more digits may come). So the deltas always make a prefix of
 * the final answer, and together the same text as the answer not streamed.
 *
 * The model writes members in the order it chooses; the final text has them in the schema's order. While the
 * members present are the first ones of the schema's order, they are the ones written, in that order. When a
 * member is present and one before it in the schema's order is not (an optional member skipped, or a model
 * writing in its own order), the member could still come and go in front: nothing more is sent until the end.
 * Members of a value that matches one of several `anyOf`/`oneOf` branches are sent once the value is complete.
 * @module
 */
import { compactJson, type JsonObject, type JsonValue } from "../protocol/json.ts";
import { parsePartialJson } from "../models/openai_partial_json.ts";
import { schemaOrder } from "../schema/order.ts";

/** Deeper values are sent whole at the end. */
const MAX_DEPTH = 64;

/** Why the text stops where it does. */
interface Open {
  text: string;
  /** A member came before one the schema orders in front of it: the order may still change. */
  unordered: boolean;
}

/**
 * Sends a JSON answer's stable prefix as it grows.
 *
 * @example
 * ```ts
 * import { JsonAnswerStream } from "./json_stream.ts";
 * const schema = { type: "object", properties: { city: { type: "string" }, pop: { type: "integer" } } };
 * const stream = new JsonAnswerStream(schema);
 * stream.update({ city: "Pa" }); // '{"city":"Pa'
 * stream.update({ city: "Paris", pop: 21 }); // 'ris","pop":' — the number may still grow
 * stream.finish('{"city":"Paris","pop":2100000}'); // '2100000}'
 * ```
 */
export class JsonAnswerStream {
  readonly #schema: JsonObject;
  #sent = "";
  #held = false;

  /** A stream of answers to the client's JSON Schema `schema`. */
  constructor(schema: JsonObject) {
    this.#schema = schema;
  }

  /** The text sent so far. */
  get sent(): string {
    return this.#sent;
  }

  /** The new text `value` (a partial answer in schema order) makes certain, or "". */
  update(value: JsonValue): string {
    if (this.#held) return "";
    const open = openText(value, this.#schema, this.#schema, 0);
    if (open.unordered) {
      this.#held = true;
      return "";
    }
    // A partial value of a retried attempt may not extend what was sent; the end decides then.
    if (open.text.length <= this.#sent.length || !open.text.startsWith(this.#sent)) return "";
    const delta = open.text.slice(this.#sent.length);
    this.#sent = open.text;
    return delta;
  }

  /**
   * The rest of the finished answer `text` (compact JSON in schema order), or null when what was sent is
   * not its start (the answer changed after it was sent: a retried attempt that wrote something else).
   */
  finish(text: string): string | null {
    if (!text.startsWith(this.#sent)) return null;
    const rest = text.slice(this.#sent.length);
    this.#sent = text;
    return rest;
  }

  /**
   * The rest of an answer the token limit cut off, `written` as the model wrote it: that text when it
   * continues what was sent, else the stable prefix of what it holds (with a last number as written), so
   * the streamed text ends as the model's did, in compact form.
   */
  cut(written: string): string {
    if (written.startsWith(this.#sent)) {
      const rest = written.slice(this.#sent.length);
      this.#sent = written;
      return rest;
    }
    const value = parsePartialJson(written);
    if (value === undefined) return "";
    const open = openText(value, this.#schema, this.#schema, 0, true);
    if (open.unordered || !open.text.startsWith(this.#sent)) return "";
    const rest = open.text.slice(this.#sent.length);
    this.#sent = open.text;
    return rest;
  }
}

/** A complete member's compact JSON. */
function whole(value: JsonValue): string {
  return compactJson(value);
}

/**
 * The compact JSON of `value` that any completion of it starts with: everything but the last member, which
 * stays open. `cut`: the text ends here, so a last number is written out.
 */
function openText(
  value: JsonValue,
  schema: JsonValue | undefined,
  root: JsonObject,
  depth: number,
  cut = false,
): Open {
  if (typeof value === "string") {
    const quoted = JSON.stringify(value.replace(/[\uD800-\uDBFF]$/, ""));
    return { text: quoted.slice(0, -1), unordered: false };
  }
  if (typeof value === "number") return { text: cut ? whole(value) : "", unordered: false };
  if (value === null || typeof value === "boolean") return { text: whole(value), unordered: false };
  if (depth >= MAX_DEPTH) return { text: "", unordered: false };
  const view = schema === undefined ? undefined : schemaOrder(schema, root);
  if (Array.isArray(value)) {
    let text = "[";
    if (view !== undefined && view.items === undefined && view.prefixItems === undefined && view.branches) {
      return { text, unordered: false };
    }
    for (let i = 0; i < value.length - 1; i++) text += `${whole(value[i])},`;
    if (value.length === 0) return { text, unordered: false };
    const last = value.length - 1;
    const open = openText(value[last], view?.prefixItems?.[last] ?? view?.items, root, depth + 1, cut);
    return { text: text + open.text, unordered: open.unordered };
  }
  let text = "{";
  if (view !== undefined && view.properties.size === 0 && view.branches !== undefined) {
    return { text, unordered: false };
  }
  const keys = Object.keys(value);
  // The members present must be the first of the schema's order (members it does not name come after).
  const order = view?.order ?? [];
  let present = 0;
  while (present < order.length && Object.hasOwn(value, order[present])) present++;
  const named = keys.filter((k) => view?.properties.has(k) === true).length;
  if (named > present || (named < order.length && keys.length > named)) return { text, unordered: true };
  for (let i = 0; i < keys.length - 1; i++) text += `${JSON.stringify(keys[i])}:${whole(value[keys[i]])},`;
  if (keys.length === 0) return { text, unordered: false };
  const key = keys[keys.length - 1];
  const open = openText(value[key], view?.properties.get(key), root, depth + 1, cut);
  return { text: `${text}${JSON.stringify(key)}:${open.text}`, unordered: open.unordered };
}
