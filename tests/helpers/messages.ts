/**
 * Small builders and readers of wire messages shared by the tests: a client tool definition, the `-32602`
 * error object, the events of one request, and pieces of output in order.
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import type { JsonObject, JsonValue } from "../../src/protocol/json.ts";

/**
 * How the model layer's messages name `oam` in a process that did not set it (tests, `deno run` scripts):
 * the command that runs this checkout's `cli.ts` from any folder.
 */
export const CHECKOUT_OAM = `deno run -A --no-lock ${
  fileURLToPath(new URL("../../cli.ts", import.meta.url))
}`;

/** A client tool definition `{name, description: "<name> tool.", …extra}`. */
export function tool(name: string, extra: JsonObject = {}): JsonObject {
  return { name, description: `${name} tool.`, ...extra };
}

/** The error object of a `-32602 invalid_params` response with `message`. */
export function invalidParams(message: string): JsonObject {
  return { code: -32602, message, data: { code: "invalid_params" } };
}

/** Anything that keeps the messages related to a request (the in-process and the process harness). */
export interface RelatedMessages {
  related(id: JsonValue): JsonObject[];
}

/** The `event` objects of the `session/event` notifications caused by request `id`, in wire order. */
export function eventsOf(c: RelatedMessages, id: JsonValue, method = "session/event"): JsonObject[] {
  return c.related(id).filter((m) => m.method === method).map((m) =>
    (m.params as JsonObject).event as JsonObject
  );
}

/** Asserts that each of `pieces` occurs in `text`, each after the one before it. */
export function assertInOrder(text: string, pieces: string[]): void {
  let at = 0;
  for (const piece of pieces) {
    const i = text.indexOf(piece, at);
    assert.ok(i >= 0, `missing or out of order: ${piece}\n${text}`);
    at = i + piece.length;
  }
}
