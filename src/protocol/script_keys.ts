/**
 * The members of a scripted step the bridge reads (PROTOCOL.md §10), in a leaf module: the scripted model
 * warns about the others, and the typed client's persona-file reader leaves them out of a steps file with a
 * warning that names the file (the scripted model is not loaded for that).
 * @module
 */
import { isJsonObject, type JsonObject } from "./json.ts";
import { nearestName } from "./edit_distance.ts";

/** The members of a step. */
export const STEP_KEYS: readonly string[] = [
  "text",
  "chunks",
  "toolCalls",
  "json",
  "template",
  "error",
  "message",
  "delayMs",
];
/** The members of a step's tool call. */
export const CALL_KEYS: readonly string[] = ["name", "arguments", "id"];

/** A member of a step that nothing reads. */
export interface UnknownStepMember {
  /** Its path in the step: `delay`, `toolCalls[0].args`. */
  member: string;
  /** The member it most likely misspells, if one. */
  meant?: string;
}

/**
 * Step `step` without the members nothing reads (its own and its tool calls'), and those members in the order
 * of the keys. A tool call is only read when no `text` takes precedence over it, so a `text` step's
 * `toolCalls` are not looked into.
 *
 * @example
 * ```ts
 * import { knownStepMembers } from "./script_keys.ts";
 * knownStepMembers({ text: "Hi", delay: 500 });
 * // { step: { text: "Hi" }, unknown: [{ member: "delay", meant: "delayMs" }] }
 * ```
 */
export function knownStepMembers(step: JsonObject): { step: JsonObject; unknown: UnknownStepMember[] } {
  const known: JsonObject = {};
  const unknown: UnknownStepMember[] = [];
  const playsCalls = !(Object.hasOwn(step, "text") && step.text !== null);
  const note = (member: string, key: string, keys: readonly string[]) => {
    const meant = nearestName(key, keys);
    unknown.push(meant === undefined ? { member } : { member, meant });
  };
  for (const [key, value] of Object.entries(step)) {
    if (!STEP_KEYS.includes(key)) {
      note(key, key, STEP_KEYS);
      continue;
    }
    if (key === "toolCalls" && playsCalls && Array.isArray(value)) {
      known.toolCalls = value.map((call, i) => {
        if (!isJsonObject(call)) return call;
        const kept: JsonObject = {};
        for (const [k, v] of Object.entries(call)) {
          if (CALL_KEYS.includes(k)) kept[k] = v;
          else note(`toolCalls[${i}].${k}`, k, CALL_KEYS);
        }
        return kept;
      });
    } else known[key] = value;
  }
  return { step: known, unknown };
}

/** A member of a step that the bridge reads in another kind of step only. */
export interface IdleStepMember {
  /** Its name in the step: `chunks`. */
  member: string;
  /** Why it has no effect: "only a 'text' step streams in pieces; a 'json' step's answer comes whole". */
  why: string;
}

/** What each kind of step but `text` streams instead of `chunks` pieces. */
const UNCHUNKED: Readonly<Record<string, string>> = {
  toolCalls: "a 'toolCalls' step streams no text",
  json: "a 'json' step's answer comes whole",
  template: "a 'template' step's answer streams in about 3",
  error: "an 'error' step streams no text",
};

/**
 * The members of step `step` that are read in another kind of step only: `chunks` anywhere but in a `text`
 * step (PROTOCOL.md §10 streams only a text answer in pieces), with why it has no effect. The kind is the one
 * the scripted model plays: the first of `text`, `toolCalls`, `json`, `template`, `error` the step has.
 *
 * @example
 * ```ts
 * import { idleStepMembers } from "./script_keys.ts";
 * idleStepMembers({ json: { line: "Hi." }, chunks: 3 });
 * // [{ member: "chunks", why: "only a 'text' step streams in pieces; a 'json' step's answer comes whole" }]
 * ```
 */
export function idleStepMembers(step: JsonObject): IdleStepMember[] {
  if (!Object.hasOwn(step, "chunks") || step.chunks === null) return [];
  const has = (k: string) => Object.hasOwn(step, k) && (k === "json" || step[k] !== null);
  const kind = ["text", "toolCalls", "json", "template", "error"].find(has);
  if (kind === undefined || kind === "text") return [];
  return [{ member: "chunks", why: `only a 'text' step streams in pieces; ${UNCHUNKED[kind]}` }];
}
