/**
 * Warnings for world paths that a request names but the world does not hold (yet): an NPC's world options
 * and a `world/subscribe` path. A path that something creates later is allowed (never an error), so the
 * warning only says what is there now, to catch a typo such as `quests.dragn`.
 * @module
 */
import { formatWorldPath, toSegments, type WorldPathInput } from "./path.ts";
import type { WorldState } from "./world_state.ts";

/** Keys listed at most in a warning. */
const LISTED_KEYS = 20;

/**
 * What the world holds where `segments` stops existing: the keys of its deepest existing ancestor (or that it
 * is a list, or a plain value), as a sentence starting with a space; `""` when there is nothing to say.
 */
export function existingNear(world: WorldState, segments: readonly string[]): string {
  let depth = segments.length - 1;
  while (depth > 0 && !world.has(segments.slice(0, depth))) depth -= 1;
  const ancestor = segments.slice(0, Math.max(0, depth));
  const node = world.peek(ancestor);
  const where = ancestor.length === 0 ? "The world" : `'${formatWorldPath(ancestor)}'`;
  if (Array.isArray(node)) {
    return ` ${where} is a list of ${node.length} item${node.length === 1 ? "" : "s"}.`;
  }
  const keys = world.keys(ancestor);
  if (keys === null) return ` ${where} holds a plain value, not an object.`;
  if (keys.length === 0) return ` ${where} is an empty object.`;
  const listing = keys.slice(0, LISTED_KEYS).join(", ") + (keys.length > LISTED_KEYS ? ", ..." : "");
  return ` ${where} has keys: ${listing}.`;
}

/**
 * The warning for world path `at.path`, named `at.name` in the request, when world `at.id` holds no value
 * there; null when it does. `at.effect` says what happens once the path exists ("the NPC sees it once it is
 * created").
 *
 * @example
 * ```ts
 * import { WorldState } from "./world_state.ts";
 * const world = new WorldState({ quests: { dragon: { status: "open" } } });
 * missingPathWarning(world, {
 *   path: "quests.dragn",
 *   id: "village",
 *   name: "path",
 *   effect: "it applies once it is created",
 * });
 * // "'path' names 'quests.dragn', which does not exist in world 'village' (yet): it applies once it is created. 'quests' has keys: dragon."
 * ```
 */
export function missingPathWarning(
  world: WorldState,
  at: { path: WorldPathInput; id: string; name: string; effect: string },
): string | null {
  const segments = toSegments(at.path);
  if (world.has(segments)) return null;
  return `'${at.name}' names '${formatWorldPath(segments)}', which does not exist in world '${at.id}' ` +
    `(yet): ${at.effect}.${existingNear(world, segments)}`;
}
