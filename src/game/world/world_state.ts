/**
 * `WorldState`: a JSON object shared by the game and its NPCs (a blackboard), addressed by world paths,
 * with change lists, a version counter and synchronous observers (reference-behavior §2.13).
 *
 * Safety: keys such as `__proto__`, `constructor` and `prototype` are ordinary data keys here. Stored objects
 * have no prototype, every key is written with `Object.defineProperty` and read with `Object.hasOwn`, and
 * values handed out (`get`, `snapshot`, changes) are plain objects whose keys are all own data properties.
 * So `set("__proto__.polluted", 1)` creates a key named `__proto__` in the world and never touches
 * `Object.prototype`.
 * @module
 */

import type { JsonObject, JsonValue } from "../../protocol/json.ts";
import { jsonEqual, setOwn } from "../../protocol/json.ts";
import { arrayIndex, formatWorldPath, pathsOverlap, toSegments, type WorldPathInput } from "./path.ts";
import { WorldError } from "./world_error.ts";
import { jsonTextHint } from "./json_text.ts";
import {
  jsonWeight,
  MAX_NOTIFICATION_BYTES,
  MAX_WORLD_SIZE,
  mergeDelta,
  removeDelta,
  writeDelta,
} from "./world_size.ts";
import {
  counted,
  emptyStore,
  exportValue,
  importValue,
  isObjectValue,
  MAX_WORLD_DEPTH,
  ownChild,
  type ReadonlyJsonValue,
  scalarTypePhrase,
  stripNulls,
} from "./world_values.ts";

export { WorldError } from "./world_error.ts";

/** Message when a write would leave a non-object root. */
export const ROOT_NOT_OBJECT_MESSAGE = "The world state root must be a JSON object.";

/** Message when `set` or `merge` at the root is given something other than an object. */
export const ROOT_WRITE_MESSAGE =
  "The world state root must be a JSON object: write a value at a path such " +
  "as 'player.gold', or an object to replace the whole state.";

/**
 * One changed value. `oldValue` is omitted when the value was created and `newValue` when it was removed;
 * a JSON `null` is a value (present as `null`). Both are deep copies. Treat a change as read-only: the same
 * object is returned to the caller and passed to every observer.
 *
 * @example
 * ```ts
 * import { type WorldChange, WorldState } from "@open-apple-models/bridge/engine";
 * const world = new WorldState({ player: { gold: 60 } });
 * const changes: WorldChange[] = world.set("player.gold", 45);
 * changes; // [{ path: "player.gold", oldValue: 60, newValue: 45 }]
 * world.set("player.hp", 10); // [{ path: "player.hp", newValue: 10 }]: created, no oldValue
 * ```
 */
export interface WorldChange {
  /** Canonical path of the changed value (`""` = the root). */
  path: string;
  /** The value before the change (absent when created). */
  oldValue?: JsonValue;
  /** The value after the change (absent when removed). */
  newValue?: JsonValue;
}

/**
 * Result of {@link WorldState.get}.
 *
 * @example
 * ```ts
 * import { WorldState, type WorldReadResult } from "@open-apple-models/bridge/engine";
 * const world = new WorldState({ door: { open: null } });
 * const open: WorldReadResult = world.get("door.open"); // { value: null, exists: true }
 * world.get("door.locked"); // { value: null, exists: false }
 * ```
 */
export interface WorldReadResult {
  /** A deep copy of the value, `null` when absent. */
  value: JsonValue | null;
  /** Whether a value (possibly JSON `null`) exists at the path. */
  exists: boolean;
}

/**
 * Result of {@link WorldState.remove}.
 *
 * @example
 * ```ts
 * import { WorldState, type WorldRemoveResult } from "@open-apple-models/bridge/engine";
 * const world = new WorldState({ quest: { step: 2 } });
 * const removed: WorldRemoveResult = world.remove("quest");
 * removed.removed; // true
 * removed.changes; // [{ path: "quest", oldValue: { step: 2 } }]
 * ```
 */
export interface WorldRemoveResult {
  /** Whether something was removed (root removal: whether the root had keys). */
  removed: boolean;
  /** The removed value, `null` when nothing was removed. */
  oldValue: JsonValue | null;
  /** The change list (empty when nothing was removed). */
  changes: WorldChange[];
}

/**
 * Receives one change; called synchronously during the mutation that caused it.
 *
 * @example
 * ```ts
 * import { type WorldListener, WorldState } from "@open-apple-models/bridge/engine";
 * const seen: string[] = [];
 * const log: WorldListener = (change) => seen.push(`${change.path} → ${change.newValue}`);
 * const world = new WorldState({ player: { gold: 60 } });
 * const stop = world.observe("player", log);
 * world.set("player.gold", 45); // seen: ["player.gold → 45"]
 * stop();
 * ```
 */
export type WorldListener = (change: WorldChange) => void;

/**
 * Options of a {@link WorldState}.
 *
 * @example
 * ```ts
 * import { WorldState, type WorldStateOptions } from "@open-apple-models/bridge/engine";
 * const options: WorldStateOptions = {
 *   maxSize: 64 * 1024,
 *   onObserverError: (error, change) => console.error(`observer of ${change.path} failed:`, error),
 * };
 * const world = new WorldState({ player: { gold: 60 } }, options);
 * ```
 */
export interface WorldStateOptions {
  /**
   * Called when an observer throws (the mutation has already happened and the remaining observers still run).
   * Default: the error is written to stderr.
   */
  onObserverError?: (error: unknown, change: WorldChange) => void;
  /** Most bytes of JSON the world may hold (approximate; default {@link MAX_WORLD_SIZE}). */
  maxSize?: number;
  /**
   * Most bytes of change notifications one write may cause, counted as observers of the changed path ×
   * (old + new value size) (default {@link MAX_NOTIFICATION_BYTES}).
   */
  maxNotificationBytes?: number;
}

interface Observer {
  readonly segments: readonly string[];
  readonly listener: WorldListener;
  active: boolean;
}

interface PendingChange {
  readonly segments: readonly string[];
  readonly change: WorldChange;
}

type Container = JsonObject | JsonValue[];

/**
 * A world: a JSON object blackboard with dot paths, change lists, a version and observers.
 *
 * All operations are synchronous and atomic: a rejected write throws {@link WorldError} and changes nothing.
 *
 * @example
 * ```ts
 * import { WorldState } from "@open-apple-models/bridge/engine";
 *
 * const world = new WorldState({ player: { gold: 60 } });
 * world.observe("player", (c) => console.error(c.path, c.oldValue, c.newValue));
 * world.set("player.gold", 45); // [{ path: "player.gold", oldValue: 60, newValue: 45 }]
 * world.version; // 1
 * ```
 */
export class WorldState {
  #root: JsonObject;
  #version = 0;
  #observers: Observer[] = [];
  readonly #onObserverError: (error: unknown, change: WorldChange) => void;
  readonly #maxSize: number;
  readonly #maxNotificationBytes: number;
  #size: number;

  /**
   * Creates a world from an initial state (deep-copied; default `{}`).
   * @throws {WorldError} when `state` is not a JSON object, is not JSON, or nests deeper than 64 levels.
   */
  constructor(state: JsonObject = {}, options: WorldStateOptions = {}) {
    if (!isObjectValue(state)) throw new WorldError(ROOT_NOT_OBJECT_MESSAGE, "");
    this.#root = importValue(state, { levels: MAX_WORLD_DEPTH, path: "" }) as JsonObject;
    this.#onObserverError = options.onObserverError ?? defaultObserverError;
    this.#maxSize = options.maxSize ?? MAX_WORLD_SIZE;
    this.#maxNotificationBytes = options.maxNotificationBytes ?? MAX_NOTIFICATION_BYTES;
    this.#size = jsonWeight(this.#root);
    this.#reserve(0, []);
  }

  /** Approximate size of the state in bytes of compact JSON (what the size limit counts). */
  get size(): number {
    return this.#size;
  }

  /** The size limit in bytes. */
  get maxSize(): number {
    return this.#maxSize;
  }

  /**
   * Throws when a write at `segments` whose changes weigh about `bytes` (old + new values) would send more
   * than the notification limit to the observers of that path.
   */
  #checkFanOut(segments: readonly string[], bytes: () => number, verb = "Writing"): void {
    if (this.#observers.length === 0) return;
    let count = 0;
    for (const o of this.#observers) if (o.active && pathsOverlap(o.segments, segments)) count++;
    if (count === 0) return;
    const total = count * bytes();
    if (total <= this.#maxNotificationBytes) return;
    const path = formatWorldPath(segments);
    throw new WorldError(
      `${verb} ${path === "" ? "the root" : `'${path}'`} would send about ${total} bytes of change ` +
        `notifications to ${count} subscriptions, over the limit of ${this.#maxNotificationBytes} bytes; ` +
        `subscribe to narrower paths or write smaller values.`,
      path,
    );
  }

  /** Throws when growing by `delta` would pass the size limit. */
  #reserve(delta: number, segments: readonly string[]): void {
    if (delta < 0 || this.#size + delta <= this.#maxSize) return;
    const path = formatWorldPath(segments);
    throw new WorldError(
      `Writing ${path === "" ? "the root" : `'${path}'`} would make the world larger than its limit of ` +
        `${this.#maxSize} bytes of JSON.`,
      path,
    );
  }

  /** Number of operations that changed something (each `set`, `merge`, `remove` call counts at most once). */
  get version(): number {
    return this.#version;
  }

  /** Number of active observers. */
  get observerCount(): number {
    return this.#observers.length;
  }

  /**
   * Reads the value at `path` (exact, case-sensitive keys; digit segments index lists).
   * @throws {WorldError} on a malformed path.
   */
  get(path: WorldPathInput = ""): WorldReadResult {
    const found = this.#lookup(toSegments(path));
    return found === undefined ? { value: null, exists: false } : { value: exportValue(found), exists: true };
  }

  /** True when a value (possibly `null`) exists at `path`. @throws {WorldError} on a malformed path. */
  has(path: WorldPathInput): boolean {
    return this.#lookup(toSegments(path)) !== undefined;
  }

  /**
   * The live stored value at `path` without copying, or `undefined` when absent. Cheap, for read-only
   * inspection (tools, summaries); never modify or keep it. Objects in it have no prototype.
   * @throws {WorldError} on a malformed path.
   */
  peek(path: WorldPathInput = ""): ReadonlyJsonValue | undefined {
    return this.#lookup(toSegments(path));
  }

  /**
   * Own keys of the object at `path` in stored order, or `null` when there is no object there.
   * @throws {WorldError} on a malformed path.
   */
  keys(path: WorldPathInput = ""): string[] | null {
    const found = this.#lookup(toSegments(path));
    return isObjectValue(found) ? Object.keys(found) : null;
  }

  /** A deep copy of the whole state. */
  snapshot(): JsonObject {
    return exportValue(this.#root) as JsonObject;
  }

  /**
   * Writes `value` (deep-copied; `null` is a value) at `path`. Missing objects on the way are created; on a
   * list, index `n` of an `n`-item list appends. Writing an equal value changes nothing (no version bump, no
   * change). The change list holds one change at `path`.
   *
   * @throws {WorldError} on a malformed path, an invalid list index ("'<list>' is a list of <n> items; '<k>'
   *   is not a valid index (use 0...<n>, where <n> appends)."), writing through a scalar ("Cannot write
   *   '<path>': '<prefix>' is a number, not an object or list."), a non-object root, a non-JSON value or a
   *   value nested too deeply.
   */
  set(path: WorldPathInput, value: JsonValue): WorldChange[] {
    const segments = toSegments(path);
    if (segments.length === 0) {
      if (!isObjectValue(value)) throw new WorldError(ROOT_WRITE_MESSAGE + jsonTextHint(value), "");
      return this.#replaceRoot(importValue(value, { levels: MAX_WORLD_DEPTH, path: "" }) as JsonObject);
    }
    this.#walkForWrite(segments, false);
    const display = formatWorldPath(segments);
    const imported = importValue(value, { levels: MAX_WORLD_DEPTH - segments.length, path: display });
    const delta = writeDelta(this.#root, { segments, value: imported });
    this.#reserve(delta, segments);
    this.#checkFanOut(segments, () => jsonWeight(imported) + weightOf(this.#lookup(segments)));
    const change = this.#writeAt(segments, imported);
    if (change === undefined) return [];
    this.#size += delta;
    this.#version += 1;
    return this.#notify([{ segments, change }]);
  }

  /**
   * Applies an RFC 7386 merge patch at `path` (default: the root). An object patch merges into an object
   * (`null` members delete keys); any other patch replaces the value (at a non-root path: like {@link set},
   * so a `null` patch stores `null`). Changes: one per modified leaf — removed keys, added or changed
   * non-object values — in patch order; an object replacing a non-object (or a missing value) is one change
   * for the whole new subtree. `version` grows by one per call that changed something.
   *
   * @throws {WorldError} like {@link set} (the root must stay an object).
   */
  merge(path: WorldPathInput, patch: JsonValue): WorldChange[] {
    const segments = toSegments(path);
    if (segments.length === 0 && !isObjectValue(patch)) {
      throw new WorldError(ROOT_WRITE_MESSAGE + jsonTextHint(patch), "");
    }
    if (segments.length > 0) this.#walkForWrite(segments, false);
    const display = formatWorldPath(segments);
    const imported = importValue(patch, { levels: MAX_WORLD_DEPTH - segments.length, path: display });
    const pending: PendingChange[] = [];
    const current = segments.length === 0 ? this.#root : this.#lookup(segments);
    // An object patch on an object merges; anything else replaces the value (like set).
    const merging = isObjectValue(imported) && isObjectValue(current);
    const replacement = merging ? null : isObjectValue(imported) ? stripNulls(imported) : imported;
    const delta = merging
      ? mergeDelta(current as JsonObject, imported as JsonObject)
      : writeDelta(this.#root, { segments, value: replacement });
    this.#reserve(delta, segments);
    this.#checkFanOut(segments, () => jsonWeight(imported) + weightOf(current));
    if (merging) mergeInto(current as JsonObject, imported as JsonObject, segments, pending);
    else {
      const change = this.#writeAt(segments, replacement);
      if (change !== undefined) pending.push({ segments, change });
    }
    if (pending.length === 0) return [];
    this.#size += delta;
    this.#version += 1;
    return this.#notify(pending);
  }

  /**
   * Removes the value at `path`. Removing a list item shifts the later items. Removing the root empties it
   * (`{}`; the change then carries `newValue: {}`). Nothing to remove → `{removed: false, oldValue: null}`,
   * no version bump.
   * @throws {WorldError} on a malformed path.
   */
  remove(path: WorldPathInput): WorldRemoveResult {
    const segments = toSegments(path);
    if (segments.length === 0) {
      if (Object.keys(this.#root).length === 0) return { removed: false, oldValue: null, changes: [] };
      const changes = this.#replaceRoot(emptyStore());
      return { removed: true, oldValue: changes[0].oldValue ?? null, changes };
    }
    const parent = this.#lookup(segments.slice(0, -1));
    const last = segments[segments.length - 1];
    let old: JsonValue;
    let normalized = segments;
    if (isObjectValue(parent)) {
      if (!Object.hasOwn(parent, last)) return { removed: false, oldValue: null, changes: [] };
      old = parent[last];
      this.#checkFanOut(segments, () => jsonWeight(old), "Removing");
      delete parent[last];
      this.#size += removeDelta(old, { inObject: true, key: last });
    } else if (Array.isArray(parent)) {
      const index = arrayIndex(last);
      if (index === undefined || index >= parent.length) {
        return { removed: false, oldValue: null, changes: [] };
      }
      this.#checkFanOut(segments, () => jsonWeight(parent[index]), "Removing");
      old = parent.splice(index, 1)[0];
      this.#size += removeDelta(old, { inObject: false, key: last });
      normalized = [...segments.slice(0, -1), String(index)];
    } else {
      return { removed: false, oldValue: null, changes: [] };
    }
    const oldValue = exportValue(old);
    this.#version += 1;
    const changes = this.#notify([{
      segments: normalized,
      change: { path: formatWorldPath(normalized), oldValue },
    }]);
    return { removed: true, oldValue: exportValue(old), changes };
  }

  /**
   * Calls `listener` synchronously for every change at, inside or above `path`, after the mutation is
   * applied and before the mutating call returns. Observers run in registration order (for each change in
   * the change list order). Returns an unsubscribe function (idempotent).
   * @throws {WorldError} on a malformed path.
   */
  observe(path: WorldPathInput, listener: WorldListener): () => void {
    const observer: Observer = { segments: toSegments(path), listener, active: true };
    this.#observers.push(observer);
    return () => {
      if (!observer.active) return;
      observer.active = false;
      this.#observers = this.#observers.filter((o) => o !== observer);
    };
  }

  // ---- internals ----

  /** The stored value at normalized-or-raw segments, or undefined. Digit segments index lists. */
  #lookup(segments: readonly string[]): JsonValue | undefined {
    let node: JsonValue | undefined = this.#root;
    for (const segment of segments) {
      if (isObjectValue(node)) {
        node = ownChild(node, segment) as JsonValue | undefined;
      } else if (Array.isArray(node)) {
        const index = arrayIndex(segment);
        node = index === undefined ? undefined : node[index];
      } else {
        return undefined;
      }
      if (node === undefined) return undefined;
    }
    return node;
  }

  /**
   * Walks to the container of the last segment. With `create` false it only validates (throws on invalid
   * list indices and scalars on the way) and rewrites list-index segments to canonical decimal form in place;
   * with `create` true it also creates missing objects (and appends at index `n`) and returns the container.
   */
  #walkForWrite(segments: string[], create: boolean): Container | undefined {
    let node: JsonValue = this.#root;
    for (let i = 0; i < segments.length; i++) {
      const segment = segments[i];
      const isLast = i === segments.length - 1;
      let next: JsonValue | undefined;
      if (isObjectValue(node)) {
        if (isLast) return node;
        next = ownChild(node, segment) as JsonValue | undefined;
        if (next === undefined) {
          if (!create) return undefined;
          next = emptyStore();
          setOwn(node, segment, next);
        }
      } else if (Array.isArray(node)) {
        const index = arrayIndex(segment);
        if (index === undefined || index > node.length) {
          const prefix = formatWorldPath(segments.slice(0, i));
          throw new WorldError(
            `'${prefix}' is a list of ${counted(node.length, "item")}; '${segment}' is not a valid index ` +
              `(use 0...${node.length}, where ${node.length} appends).`,
            formatWorldPath(segments),
          );
        }
        segments[i] = String(index);
        if (isLast) return node;
        next = node[index];
        if (next === undefined) {
          if (!create) return undefined;
          next = emptyStore();
          node.push(next);
        }
      } else {
        const full = formatWorldPath(segments);
        const prefix = formatWorldPath(segments.slice(0, i));
        throw new WorldError(
          `Cannot write '${full}': '${prefix}' is ${scalarTypePhrase(node)}, not an object or list.`,
          full,
        );
      }
      node = next;
    }
    return undefined;
  }

  /** Writes an imported value at validated non-root segments; returns the change or undefined if equal. */
  #writeAt(segments: string[], value: JsonValue): WorldChange | undefined {
    if (segments.length === 0) {
      return this.#replaceRootChange(value as JsonObject);
    }
    const current = this.#lookup(segments);
    if (current !== undefined && jsonEqual(current, value)) return undefined;
    const container = this.#walkForWrite(segments, true) as Container;
    const last = segments[segments.length - 1];
    if (Array.isArray(container)) {
      const index = Number(last);
      if (index === container.length) container.push(value);
      else container[index] = value;
    } else {
      setOwn(container, last, value);
    }
    const change: WorldChange = { path: formatWorldPath(segments) };
    if (current !== undefined) change.oldValue = exportValue(current);
    change.newValue = exportValue(value);
    return change;
  }

  #replaceRootChange(root: JsonObject): WorldChange | undefined {
    if (jsonEqual(this.#root, root)) return undefined;
    const change: WorldChange = { path: "", oldValue: exportValue(this.#root), newValue: exportValue(root) };
    this.#root = root;
    return change;
  }

  #replaceRoot(root: JsonObject): WorldChange[] {
    const size = jsonWeight(root);
    this.#reserve(size - this.#size, []);
    this.#checkFanOut([], () => size + this.#size);
    const change = this.#replaceRootChange(root);
    if (change === undefined) return [];
    this.#size = size;
    this.#version += 1;
    return this.#notify([{ segments: [], change }]);
  }

  #notify(pending: PendingChange[]): WorldChange[] {
    const observers = [...this.#observers];
    for (const { segments, change } of pending) {
      for (const observer of observers) {
        if (!observer.active || !pathsOverlap(observer.segments, segments)) continue;
        try {
          observer.listener(change);
        } catch (error) {
          this.#onObserverError(error, change);
        }
      }
    }
    return pending.map((p) => p.change);
  }
}

/** RFC 7386 merge of an imported patch object into a stored object, recording one change per leaf. */
function mergeInto(
  target: JsonObject,
  patch: JsonObject,
  base: readonly string[],
  pending: PendingChange[],
): void {
  for (const key of Object.keys(patch)) {
    const patchValue = patch[key];
    const segments = [...base, key];
    const path = formatWorldPath(segments);
    const has = Object.hasOwn(target, key);
    const current = has ? target[key] : undefined;
    if (patchValue === null) {
      if (!has) continue;
      delete target[key];
      pending.push({ segments, change: { path, oldValue: exportValue(current as JsonValue) } });
      continue;
    }
    if (isObjectValue(patchValue) && isObjectValue(current)) {
      mergeInto(current, patchValue, segments, pending);
      continue;
    }
    const next = isObjectValue(patchValue) ? stripNulls(patchValue) : patchValue;
    if (has && jsonEqual(current, next)) continue;
    setOwn(target, key, next);
    const change: WorldChange = { path };
    if (has) change.oldValue = exportValue(current as JsonValue);
    change.newValue = exportValue(next);
    pending.push({ segments, change });
  }
}

function weightOf(value: ReadonlyJsonValue | undefined): number {
  return value === undefined ? 0 : jsonWeight(value);
}

function defaultObserverError(error: unknown, change: WorldChange): void {
  // deno-lint-ignore no-console
  console.error(`world observer failed for '${change.path}':`, error);
}
