/**
 * Client-named objects (sessions, NPCs, worlds, …): the id rule and the errors for an unknown id, a taken
 * id, a full store and a full queue, worded the same way for every kind (each method set defines its kind).
 * @module
 */
import { BridgeError, type ErrorName } from "../protocol/errors.ts";
import { isPrintableId } from "./ids.ts";

/** The `<key>` of the error table's `<key>_not_found` / `<key>_exists` pairs. */
type KeyOf<Suffix extends string> = ErrorName extends infer N ? N extends `${infer K}${Suffix}` ? K : never
  : never;

/** A key that has both errors: `<key>_not_found` and `<key>_exists` (PROTOCOL.md §8). */
export type ObjectKey = KeyOf<"_not_found"> & KeyOf<"_exists">;

/** One kind of client-named object, as its errors name it. */
export interface ObjectKind {
  /** The param and `data` key; the error codes are `<key>_not_found` and `<key>_exists`. */
  readonly key: ObjectKey;
  /** How a message names one ("session", "NPC", "world"). */
  readonly noun: string;
  /** The article before {@link ObjectKind.noun} ("A", "An"). */
  readonly article: "A" | "An";
}

/**
 * Checks a client-chosen object id (1–128 printable characters) and returns it; otherwise -32602
 * "'<param>' must be 1-128 printable characters; got '<id>'.".
 *
 * @example
 * ```ts
 * import { checkObjectId } from "./object_ids.ts";
 * checkObjectId("guard", "session"); // "guard"
 * ```
 */
export function checkObjectId(id: string, param: string): string {
  if (!isPrintableId(id)) {
    throw BridgeError.invalidParams(`'${param}' must be 1-128 printable characters; got '${id}'.`);
  }
  return id;
}

/** `<key>_not_found`: "No <noun> with id '<id>'." with `data.<key>`. */
export function notFoundError(kind: ObjectKind, id: string): BridgeError {
  return BridgeError.of(`${kind.key}_not_found`, `No ${kind.noun} with id '${id}'.`, { [kind.key]: id });
}

/**
 * `<key>_exists`: "<Article> <noun> with id '<id>' already exists." with `data.<key>`; a `hint` (what to do
 * instead) follows a colon: "… already exists: delete it first …".
 */
export function existsError(
  { kind, id, hint }: { kind: ObjectKind; id: string; hint?: string },
): BridgeError {
  return BridgeError.of(
    `${kind.key}_exists`,
    `${kind.article} ${kind.noun} with id '${id}' already exists${hint === undefined ? "" : `: ${hint}`}.`,
    {
      [kind.key]: id,
    },
  );
}

/** `limit_reached`: "The limit of <limit> <what> is reached; delete some first." with `data.limit`. */
export function limitReachedError(limit: number, what: string): BridgeError {
  return BridgeError.of("limit_reached", `The limit of ${limit} ${what} is reached; delete some first.`, {
    limit,
  });
}

/**
 * `busy`: "<Noun> '<id>' has too many queued operations (limit <limit>): wait for their answers, or cancel them
 * with <key>/cancel." with `data.<key>` and `data.limit`.
 */
export function queueFullError(kind: ObjectKind, queue: { id: string; limit: number }): BridgeError {
  const { id, limit } = queue;
  const noun = kind.noun.charAt(0).toUpperCase() + kind.noun.slice(1);
  const what = `${noun} '${id}' has too many queued operations (limit ${limit})`;
  return BridgeError.of("busy", `${what}: wait for their answers, or cancel them with ${kind.key}/cancel.`, {
    [kind.key]: id,
    limit,
  });
}
