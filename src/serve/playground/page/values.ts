/**
 * How the page reads what is typed: numbers and lists for the form, answers to tool calls, values for the
 * world, and a world change applied to a snapshot; and what a tool call the bridge stopped waiting for got
 * instead of an answer, and the text of an error caught. Pure: no DOM.
 * @module
 */
import { BridgeError, MESSAGES } from "../../../protocol/errors.ts";
import { isJsonObject, type JsonValue } from "../../../protocol/json.ts";
import { parseJsonc } from "./document.ts";

const NUMBER = /^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/;

/** A number from typed text, or the text itself when it is not one (kept for the check); "" is absent. */
export function numberFrom(text: string): JsonValue | undefined {
  const t = text.trim();
  if (t === "") return undefined;
  return NUMBER.test(t) ? Number(t) : text;
}

/** List items from a textarea: one per line, blank lines dropped; none is absent. */
export function listFrom(text: string): string[] | undefined {
  const items = text.split("\n").map((line) => line.trimEnd()).filter((line) => line.trim() !== "");
  return items.length === 0 ? undefined : items;
}

/** A parsed answer: the value to send. */
export function answerValue(
  text: string,
  as: "auto" | "json" | "text",
): { value: JsonValue } | { problem: string } {
  if (as === "text") return { value: text };
  const parsed = parseJsonc(text, "The answer");
  if (parsed.problem) {
    if (as === "json") return { problem: `${parsed.problem.message} Nothing was sent.` };
    return { value: text };
  }
  return { value: parsed.value };
}

/** A typed value: JSON when it parses (numbers, true, null, objects, lists), else text. */
export function typedValue(text: string): JsonValue {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/**
 * Applies a `world/changed` to a copy of `state`: `change.path` (a dot path, `""` the whole state) is set
 * to `change.newValue`, or removed when there is none.
 */
export function applyChange(state: JsonValue, change: { path: string; newValue?: JsonValue }): JsonValue {
  const { path } = change;
  const segments = path === "" ? [] : path.split(".");
  const removed = !("newValue" in change) || change.newValue === undefined;
  if (segments.length === 0) return removed ? {} : structuredClone(change.newValue as JsonValue);
  const root = structuredClone(state) as JsonValue;
  let node: JsonValue = root;
  for (const segment of segments.slice(0, -1)) {
    let next: JsonValue | undefined = Array.isArray(node)
      ? node[Number(segment)]
      : isJsonObject(node)
      ? node[segment]
      : undefined;
    if (next === undefined || next === null || typeof next !== "object") {
      if (removed) return root;
      next = {};
      if (Array.isArray(node)) node[Number(segment)] = next;
      else if (isJsonObject(node)) node[segment] = next;
    }
    node = next;
  }
  const last = segments[segments.length - 1];
  if (Array.isArray(node)) {
    const i = Number(last);
    if (removed) node.splice(i, 1);
    else node[i] = structuredClone(change.newValue as JsonValue);
  } else if (isJsonObject(node)) {
    if (removed) delete node[last];
    else node[last] = structuredClone(change.newValue as JsonValue);
  }
  return root;
}

/** How the bridge marks an error output in the text the model sees ("Error: Tool 'x' timed out after 2s."). */
const MODEL_ERROR_PREFIX = "Error: ";

/**
 * The text of something caught: an Error's message, else the value as text.
 *
 * @example
 * ```ts
 * errorText(new Error("The socket closed.")); // "The socket closed."
 * errorText("timeout"); // "timeout"
 * ```
 */
export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The status of a call whose turn the bridge cancelled by itself (it is stopping, or the NPC was closed). */
export const BRIDGE_CANCELLED = "not answered: the bridge cancelled the turn";

/** What that status becomes once the connection closed because the server is stopping. */
export const SERVER_STOPPED = "not answered: the server stopped";

/** What a call the bridge stopped waiting for shows: its status, and the error output the model got, if any. */
export interface NotAnswered {
  /** The row's status ("not answered: …"). */
  status: string;
  /** The error output the model got instead of an answer (without the "Error: " it reads), or null. */
  output: string | null;
}

/**
 * What a call the bridge stopped waiting for shows, from the abort `reason`. A `tool/cancel`'s reason is the
 * tool output the model got instead of an answer, as the model reads it ("Error: Tool 'check_stock' timed out
 * after 2s."): shown as that error output, without the prefix (a cancelled turn says just that, and who
 * cancelled it: the designer, or, when `byDesigner` is false, the bridge). A closed connection (`shut_down`)
 * took the NPC and its call with it; any other reason is shown as it is.
 */
export function notAnswered(reason: unknown, byDesigner = true): NotAnswered {
  const text = errorText(reason);
  const cancel = reason instanceof BridgeError && reason.dataCode === "cancelled";
  if (cancel && text.startsWith(MODEL_ERROR_PREFIX)) {
    const output = text.slice(MODEL_ERROR_PREFIX.length);
    if (output === MESSAGES.turnCancelled) {
      return {
        status: byDesigner ? "not answered: the turn was cancelled" : BRIDGE_CANCELLED,
        output: null,
      };
    }
    return { status: "not answered: the model got an error output instead", output };
  }
  if (reason instanceof BridgeError && reason.dataCode === "shut_down") {
    // The connection closed: the NPC lived in it, so no call of its turn can be answered any more.
    return { status: "not answered: the bridge went away, and the call with it", output: null };
  }
  return { status: `not answered: the bridge no longer needs it (${text})`, output: null };
}
