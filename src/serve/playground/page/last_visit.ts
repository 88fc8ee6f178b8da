/**
 * The NPC's last state the page saw, as the "last visit" labels name it ("Mira, 9:49:51 AM"): the persona's
 * name, and when it was seen, the time alone on the same day, the date and time on another (a time alone read
 * as today's).
 * @module
 */
import { isJsonObject, type JsonValue } from "../../../protocol/json.ts";

/** When the state was seen, as kept in the page's storage (`savedAt`): an ISO date and time. */
export function seenNow(now: Date = new Date()): string {
  return now.toISOString();
}

/**
 * The label of a state seen at `savedAt` ({@link seenNow}), read at `now`: `9:49:51 AM` the same day,
 * `Mar 1, 2026, 9:49:51 AM` another day (in the browser's language and time zone). A `savedAt` that is not
 * a date (an older page kept the time alone) is shown as it is; anything else is `""`.
 *
 * @example
 * ```ts
 * visitTime("2026-03-01T09:49:51Z", new Date("2026-03-02T10:00:00Z")); // "Mar 1, 2026, 9:49:51 AM" (en-US, UTC)
 * ```
 */
export function visitTime(savedAt: unknown, now: Date = new Date()): string {
  if (typeof savedAt !== "string") return "";
  const at = new Date(savedAt);
  if (Number.isNaN(at.getTime())) return savedAt;
  const sameDay = at.getFullYear() === now.getFullYear() && at.getMonth() === now.getMonth() &&
    at.getDate() === now.getDate();
  return sameDay
    ? at.toLocaleTimeString()
    : at.toLocaleString(undefined, { dateStyle: "medium", timeStyle: "medium" });
}

/**
 * The label of the last state seen (`{npc, state, world, savedAt}`, as the page keeps it): "Mira, 9:49:51 AM"
 * (the persona's name, "NPC" without one, and {@link visitTime}); `""` when there is none.
 *
 * @example
 * ```ts
 * lastVisitLabel({ state: { persona: { name: "Mira" } }, savedAt: "9:49:51 AM" }); // "Mira, 9:49:51 AM"
 * ```
 */
export function lastVisitLabel(last: JsonValue | null, now: Date = new Date()): string {
  if (!isJsonObject(last) || !isJsonObject(last.state)) return "";
  const persona = isJsonObject(last.state.persona) ? last.state.persona : {};
  return `${typeof persona.name === "string" ? persona.name : "NPC"}, ${visitTime(last.savedAt, now)}`
    .replace(/, $/, "");
}
