/**
 * The size bound of a world (issue #7): a world holds at most {@link MAX_WORLD_SIZE} bytes of JSON, counted
 * approximately and kept up to date on every write (O(size of the written and replaced values)). A write
 * that would pass the bound is rejected with a {@link WorldError} (`-32054 world_error`) and changes nothing.
 * @module
 */
import type { JsonValue } from "../../protocol/json.ts";
import { arrayIndex } from "./path.ts";
import {
  isObjectValue,
  ownChild,
  type ReadonlyJsonObject,
  type ReadonlyJsonValue,
  stripNulls,
} from "./world_values.ts";

/**
 * Default maximum size of one world, in bytes of compact JSON (approximate: a string counts its UTF-16 length
 * and every number 8, so the UTF-8 JSON of a full world can be larger, about 3× for CJK text).
 */
export const MAX_WORLD_SIZE = 8 * 1024 * 1024;
/**
 * Default maximum bytes of change notifications one write may cause: observers × (old + new value size).
 * Every `world/changed` notification carries the values, so 256 subscriptions would multiply a large write.
 */
export const MAX_NOTIFICATION_BYTES = 64 * 1024 * 1024;

/** Approximate compact-JSON size of a value: strings by length, other scalars 8, containers 2 + members. */
export function jsonWeight(value: ReadonlyJsonValue): number {
  if (typeof value === "string") return value.length + 2;
  if (value === null || typeof value !== "object") return 8;
  let n = 2;
  if (Array.isArray(value)) {
    for (const item of value as readonly ReadonlyJsonValue[]) n += jsonWeight(item) + 1;
    return n;
  }
  const object = value as ReadonlyJsonObject;
  for (const key of Object.keys(object)) n += key.length + 4 + jsonWeight(object[key]);
  return n;
}

/** Size of one member's framing: `"key":` and a comma for objects, a comma for lists. */
function memberWeight(inObject: boolean, key: string): number {
  return inObject ? key.length + 4 : 1;
}

/**
 * Size change of writing `write.value` at validated, canonical `write.segments` (not the root) of `root`, counting the
 * objects a write creates on the way.
 */
export function writeDelta(
  root: ReadonlyJsonObject,
  write: { segments: readonly string[]; value: JsonValue },
): number {
  const { segments, value } = write;
  let node: ReadonlyJsonValue = root;
  for (let i = 0; i < segments.length; i++) {
    const segment = segments[i];
    const inObject = isObjectValue(node);
    let child: ReadonlyJsonValue | undefined;
    if (inObject) child = ownChild(node as ReadonlyJsonObject, segment);
    else if (Array.isArray(node)) {
      const index = arrayIndex(segment);
      child = index === undefined ? undefined : (node as readonly ReadonlyJsonValue[])[index];
    }
    if (child === undefined) {
      let created = memberWeight(inObject, segment);
      for (let j = i + 1; j < segments.length; j++) created += 2 + memberWeight(true, segments[j]);
      return created + jsonWeight(value);
    }
    if (i === segments.length - 1) return jsonWeight(value) - jsonWeight(child);
    node = child;
  }
  return 0;
}

/** Size change of an RFC 7386 merge of an object `patch` into the object `target`. */
export function mergeDelta(target: ReadonlyJsonObject, patch: ReadonlyJsonObject): number {
  let delta = 0;
  for (const key of Object.keys(patch)) {
    const patchValue = patch[key];
    const has = Object.hasOwn(target, key);
    const current = has ? target[key] : undefined;
    if (patchValue === null) {
      if (has) delta -= key.length + 4 + jsonWeight(current!);
    } else if (isObjectValue(patchValue) && isObjectValue(current)) {
      delta += mergeDelta(current, patchValue);
    } else {
      const next = isObjectValue(patchValue) ? stripNulls(patchValue) : patchValue;
      delta += has ? jsonWeight(next) - jsonWeight(current!) : key.length + 4 + jsonWeight(next);
    }
  }
  return delta;
}

/** Size change of removing the member `member.key` (holding `old`) from an object or a list. */
export function removeDelta(old: ReadonlyJsonValue, member: { inObject: boolean; key: string }): number {
  const { inObject, key } = member;
  return -(memberWeight(inObject, key) + jsonWeight(old));
}
