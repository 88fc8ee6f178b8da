/**
 * The `world/*` methods (PROTOCOL.md §6 "World state", reference-behavior §2.13): thin JSON-RPC adapters over
 * {@link WorldState}. Every method is synchronous and atomic, so it answers in arrival order. Subscriptions
 * observe a world synchronously; their `world/changed` notifications are sent during the mutation and so
 * precede the response of the request (or the `npc/talk` response of the NPC turn) that caused them.
 *
 * Unknown parameter keys are ignored (world methods are not in the §1 warning list), but named where they
 * likely hid a parameter: in the error of a missing required one, and when a request with no `path` used the
 * whole world (a warning on the log; in `world/subscribe`'s `warnings`, which it also adds when its path does
 * not exist yet).
 * @module
 */
import { copyJson } from "../protocol/codec.ts";
import { BridgeError } from "../protocol/errors.ts";
import { isJsonObject, type JsonObject, type JsonValue } from "../protocol/json.ts";
import type { Params } from "../protocol/params.ts";
import { IdGenerator } from "../util/ids.ts";
import { checkObjectId, existsError, limitReachedError, notFoundError } from "../util/object_ids.ts";
import { WORLD_KIND } from "./game_kinds.ts";
import type { MethodRegistry } from "../engine/extension.ts";
import type { HandlerContext } from "../engine/context.ts";
import type { GameContext, WorldEntry } from "./game_context.ts";
import { formatWorldPath, parseWorldPath, type WorldChange, WorldError, WorldState } from "./world/mod.ts";
import { missingPathWarning } from "./world/missing_path.ts";
import { jsonTextHint } from "./world/json_text.ts";

/** Most worlds a bridge holds. */
export const MAX_WORLDS = 64;
/** Most `world/subscribe` subscriptions a bridge holds (over all worlds). */
export const MAX_WORLD_SUBSCRIPTIONS = 256;

/** One `world/subscribe` subscription. */
interface Subscription {
  readonly id: string;
  readonly world: string;
  /** Canonical path. */
  readonly path: string;
  readonly end: () => void;
}

/** Maps a {@link WorldError} to `-32054 world_error` with `data.world` and `data.path`. */
export function worldError(error: WorldError, world: string): BridgeError {
  return BridgeError.of("world_error", error.message, { world, path: error.path }).withCause(error);
}

/** Runs `body`, turning a thrown {@link WorldError} into `-32054 world_error` for `world`. */
function withWorld<T>(world: string, body: () => T): T {
  try {
    return body();
  } catch (error) {
    if (error instanceof WorldError) throw worldError(error, world);
    throw error;
  }
}

/**
 * Runs `write`, a write of a request whose params are `keys`; when no `path` was given (a write at the root)
 * and the world refuses it, the error also names the unknown keys given: the path sent under another name
 * (`key`) is the likely cause, and the request has no warnings to say so.
 */
function writeAt<T>(p: Params, keys: readonly string[], write: () => T): T {
  try {
    return write();
  } catch (error) {
    if (!(error instanceof WorldError) || p.has("path")) throw error;
    const ignored = p.unknownKeys(keys);
    if (ignored.length === 0) throw error;
    throw new WorldError(`${error.message} ${ignored.join(" ")}`, error.path);
  }
}

/**
 * What a request with no `path` did to the whole world (`"replaced"`), when it was given unknown keys: the
 * path sent under another name (`key`, `pth`) is the likely cause, and nothing failed to say so. Null when
 * it had a path or no unknown key.
 */
function rootlessKeys(r: HandlerContext, use: { keys: readonly string[]; did: string }): string | null {
  const p = r.params;
  if (p.has("path")) return null;
  const unknown = p.unknownKeys(use.keys);
  if (unknown.length === 0) return null;
  return `${r.method} on world '${p.raw.world}' had no 'path', so it ${use.did} the whole world. ${
    unknown.join(" ")
  }`;
}

/** Logs {@link rootlessKeys}'s note, for a method whose result has no `warnings` to carry it. */
function logRootless(r: HandlerContext, use: { keys: readonly string[]; did: string }): void {
  const note = rootlessKeys(r, use);
  if (note !== null) r.logger.warning(note);
}

/**
 * The world store's JSON-RPC methods: `world/create|get|set|merge|remove|snapshot|delete|list|subscribe|
 * unsubscribe`. Worlds live in {@link GameContext.worlds} (shared with the NPC methods); subscriptions live
 * here.
 *
 * @example
 * ```ts
 * import { BridgeEngine } from "../composition.ts";
 * const engine = new BridgeEngine();
 * await engine.call("world/create", { world: "village", state: { gold: 10 } });
 * await engine.call("world/set", { world: "village", path: "gold", value: 12 }); // {world, path, version: 1}
 * ```
 */
export class WorldMethods {
  readonly #subscriptions = new Map<string, Subscription>();
  readonly #worldIds = new IdGenerator("w");
  readonly #subscriptionIds = new IdGenerator("sub");
  #game!: GameContext;

  /** Registers the `world/*` methods. */
  register(registry: MethodRegistry, game: GameContext): void {
    this.#game = game;
    registry.register("world/create", (r) => this.#create(r));
    registry.register("world/get", (r) => this.#get(r));
    registry.register("world/set", (r) => this.#set(r));
    registry.register("world/merge", (r) => this.#merge(r));
    registry.register("world/remove", (r) => this.#remove(r));
    registry.register("world/snapshot", (r) => this.#snapshot(r));
    registry.register("world/delete", (r) => this.#delete(r));
    registry.register("world/list", () => this.#list());
    registry.register("world/subscribe", (r) => this.#subscribe(r));
    registry.register("world/unsubscribe", (r) => this.#unsubscribe(r));
  }

  /** Ends every subscription (the extension then clears the worlds). */
  shutdown(): void {
    const subscriptions = [...this.#subscriptions.values()];
    this.#subscriptions.clear();
    for (const s of subscriptions) s.end();
  }

  /** Number of active subscriptions. */
  get subscriptionCount(): number {
    return this.#subscriptions.size;
  }

  /** The world named by `p`, a method whose params are `keys` (named in the error of a missing one). */
  #lookup(p: Params, keys: readonly string[]): WorldEntry {
    p.expectKeys(keys);
    const id = p.string("world");
    const entry = this.#game.worlds.get(id);
    if (!entry) throw notFoundError(WORLD_KIND, id);
    return entry;
  }

  /** The canonical segments of the optional `path` param (default: the root). */
  #path(p: Params, world: string, required = false): string[] {
    const text = required ? p.string("path") : p.optionalString("path") ?? "";
    return withWorld(world, () => parseWorldPath(text));
  }

  #create(r: HandlerContext): JsonValue {
    const p = r.params;
    const requested = p.optionalString("world");
    if (requested !== undefined) checkObjectId(requested, "world");
    const state = p.get("state");
    if (state !== undefined && !isJsonObject(state)) {
      throw BridgeError.invalidParams(
        `'state' must be a JSON object (the world root).${jsonTextHint(state)}`,
      );
    }
    const worlds = this.#game.worlds;
    if (requested !== undefined && worlds.has(requested)) {
      throw existsError({ kind: WORLD_KIND, id: requested });
    }
    if (worlds.size >= MAX_WORLDS) throw limitReachedError(MAX_WORLDS, "worlds");
    const id = requested ?? this.#worldIds.next((x) => worlds.has(x));
    const logger = r.logger;
    const world = withWorld(id, () =>
      new WorldState(state ?? {}, {
        onObserverError: (error, change) =>
          logger.error(`A world/changed observer failed for '${change.path}': ${String(error)}`),
      }));
    worlds.set(id, { id, world, createdAt: new Date().toISOString(), npcCount: 0 });
    return { world: id, version: world.version };
  }

  #get(r: HandlerContext): JsonValue {
    const keys = ["world", "path"];
    const entry = this.#lookup(r.params, keys);
    const segments = this.#path(r.params, entry.id);
    const read = withWorld(entry.id, () => entry.world.get(segments));
    logRootless(r, { keys, did: "read" });
    return {
      world: entry.id,
      path: formatWorldPath(segments),
      value: read.value,
      exists: read.exists,
      version: entry.world.version,
    };
  }

  #set(r: HandlerContext): JsonValue {
    const p = r.params;
    const keys = ["world", "path", "value"];
    const entry = this.#lookup(p, keys);
    const segments = this.#path(p, entry.id);
    if (!p.has("value")) throw p.missingParameter("value", { note: "use world/remove to delete" });
    // The raw value: a JSON null is a value here.
    withWorld(entry.id, () => writeAt(p, keys, () => entry.world.set(segments, p.raw.value)));
    logRootless(r, { keys, did: "replaced" });
    return { world: entry.id, path: formatWorldPath(segments), version: entry.world.version };
  }

  #merge(r: HandlerContext): JsonValue {
    const p = r.params;
    const keys = ["world", "path", "patch"];
    const entry = this.#lookup(p, keys);
    const segments = this.#path(p, entry.id);
    if (!p.has("patch")) throw p.missingParameter("patch");
    withWorld(entry.id, () => writeAt(p, keys, () => entry.world.merge(segments, p.raw.patch)));
    logRootless(r, { keys, did: "merged into" });
    return { world: entry.id, path: formatWorldPath(segments), version: entry.world.version };
  }

  #remove(r: HandlerContext): JsonValue {
    const p = r.params;
    const entry = this.#lookup(p, ["world", "path"]);
    const segments = this.#path(p, entry.id, true);
    const result = withWorld(entry.id, () => entry.world.remove(segments));
    return {
      world: entry.id,
      path: formatWorldPath(segments),
      removed: result.removed,
      oldValue: result.oldValue,
      version: entry.world.version,
    };
  }

  #snapshot(r: HandlerContext): JsonValue {
    const entry = this.#lookup(r.params, ["world"]);
    return { world: entry.id, state: entry.world.snapshot(), version: entry.world.version };
  }

  #delete(r: HandlerContext): JsonValue {
    const entry = this.#lookup(r.params, ["world"]);
    this.#game.worlds.delete(entry.id);
    let ended = 0;
    for (const s of [...this.#subscriptions.values()]) {
      if (s.world !== entry.id) continue;
      this.#subscriptions.delete(s.id);
      s.end();
      ended++;
    }
    return { world: entry.id, deleted: true, endedSubscriptions: ended };
  }

  #list(): JsonValue {
    const worlds: JsonValue[] = [];
    for (const entry of this.#game.worlds.values()) {
      const subscriptions: JsonValue[] = [];
      for (const s of this.#subscriptions.values()) {
        if (s.world === entry.id) subscriptions.push(subscriptionJson(s));
      }
      worlds.push({
        world: entry.id,
        version: entry.world.version,
        npcs: entry.npcCount,
        subscriptions,
        createdAt: entry.createdAt,
      });
    }
    return { worlds };
  }

  #subscribe(r: HandlerContext): JsonValue {
    const keys = ["world", "path"];
    const entry = this.#lookup(r.params, keys);
    const segments = this.#path(r.params, entry.id);
    if (this.#subscriptions.size >= MAX_WORLD_SUBSCRIPTIONS) {
      throw limitReachedError(MAX_WORLD_SUBSCRIPTIONS, "world subscriptions");
    }
    const id = this.#subscriptionIds.next((x) => this.#subscriptions.has(x));
    const worldId = entry.id;
    const end = entry.world.observe(
      segments,
      // Made for each notification; the values are the change's, shared by every observer: copied when the
      // params are handed over.
      (change) => {
        if (!r.handsOver) r.notify("world/changed", changedParams(worldId, id, change));
        else r.notify("world/changed", r.handOver(changedParams(worldId, id, change, copyJson)));
      },
    );
    const subscription: Subscription = { id, world: worldId, path: formatWorldPath(segments), end };
    this.#subscriptions.set(id, subscription);
    // A path that does not exist yet is allowed (its creation is reported), but often a typo: warned.
    const warning = missingPathWarning(entry.world, {
      path: segments,
      id: worldId,
      name: "path",
      effect: "world/changed is sent once it is created",
    });
    const warnings = [warning, rootlessKeys(r, { keys, did: "watches" })]
      .filter((w) => w !== null);
    return warnings.length === 0
      ? subscriptionJson(subscription)
      : { ...subscriptionJson(subscription), warnings };
  }

  #unsubscribe(r: HandlerContext): JsonValue {
    r.params.expectKeys(["subscription"]);
    const id = r.params.string("subscription");
    const subscription = this.#subscriptions.get(id);
    if (!subscription) {
      const message =
        `No world subscription with id '${id}'. It was unsubscribed, its world was deleted, or ` +
        "it never existed; world/list shows the active subscriptions.";
      throw BridgeError.of("subscription_not_found", message, {
        subscription: id,
      });
    }
    this.#subscriptions.delete(id);
    subscription.end();
    return { ...subscriptionJson(subscription), unsubscribed: true };
  }
}

function subscriptionJson(s: Subscription): JsonObject {
  return { subscription: s.id, world: s.world, path: s.path };
}

/** `world/changed` params: `world, subscription, path, oldValue?, newValue?` (a JSON null is sent as null). */
function changedParams(
  world: string,
  subscription: string,
  change: WorldChange,
  value: (v: JsonValue) => JsonValue = (v) => v,
): JsonObject {
  const params: JsonObject = { world, subscription, path: change.path };
  if (Object.hasOwn(change, "oldValue") && change.oldValue !== undefined) {
    params.oldValue = value(change.oldValue);
  }
  if (Object.hasOwn(change, "newValue") && change.newValue !== undefined) {
    params.newValue = value(change.newValue);
  }
  return params;
}
