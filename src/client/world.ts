/**
 * `World`: a shared world-state blackboard (`world/*`), a thin handle over the connection.
 * @module
 */
import { BridgeError } from "../protocol/errors.ts";
import type { JsonObject, JsonValue } from "../protocol/json.ts";
import { lossyJsonProblem, requireFunction, shown } from "./checks.ts";
import type { Connection, WorldListener } from "./connection.ts";
import type { WorldRemoval } from "./game_types.ts";
import type { JsonInput } from "./json_input.ts";

/**
 * A `world/subscribe` subscription.
 *
 * @example
 * ```ts
 * import { Bridge } from "@open-apple-models/bridge";
 * await using bridge = await Bridge.open();
 * const world = await bridge.createWorld({ weather: "rain" });
 * const seen: unknown[] = [];
 * {
 *   await using watch = await world.subscribe("weather", (change) => seen.push(change.newValue));
 *   await world.set("weather", "sun"); // seen: ["sun"]
 * } // unsubscribed here
 * await world.set("weather", "fog"); // seen stays ["sun"]
 * ```
 */
export class Subscription implements AsyncDisposable {
  /** The subscription's id. */
  readonly id: string;
  /** The watched path. */
  readonly path: string;
  readonly #c: Connection;
  #ended = false;

  /**
   * A handle for subscription `id`. Made by the client: `world.subscribe` returns one (`Connection` is the
   * client's own link to the bridge, not part of the package's API).
   */
  constructor(connection: Connection, id: string, path: string) {
    this.#c = connection;
    this.id = id;
    this.path = path;
  }

  /**
   * Ends the subscription: the callback is not called again. Calling it again, or after `world.delete()` ended
   * the subscription on the bridge, does nothing.
   */
  async unsubscribe(): Promise<void> {
    if (this.#ended) return;
    this.#ended = true;
    try {
      await this.#c.unsubscribe(this.id);
    } catch (error) {
      // Already ended on the bridge (its world was deleted): what unsubscribing wants.
      if (!(error instanceof BridgeError && error.dataCode === "subscription_not_found")) throw error;
    }
  }

  /** Same as {@link Subscription.unsubscribe} (for `await using`). */
  [Symbol.asyncDispose](): Promise<void> {
    return this.unsubscribe();
  }
}

/**
 * A JSON blackboard the game and its NPCs share. Paths are dot paths (`"player.gold"`, `"party.0.name"` or
 * `"party[0].name"`; `""` is the root). A key with `.`, `/`, `[` or `]` in it cannot be addressed on its own:
 * read or write its parent. Create one with `bridge.createWorld` and pass it as an NPC's `world`.
 *
 * @example
 * ```ts
 * import { Bridge } from "@open-apple-models/bridge";
 * await using bridge = await Bridge.open();
 * const world = await bridge.createWorld({ player: { gold: 60 } });
 * const changes: string[] = [];
 * const subscription = await world.subscribe("player", (change) => changes.push(`${change.path} ${change.newValue}`));
 * await world.set("player.gold", 15); // changes: ["player.gold 15"]
 * await world.get<number>("player.gold"); // 15
 * await subscription.unsubscribe();
 * ```
 */
export class World {
  /** The world's id. */
  readonly id: string;
  readonly #c: Connection;

  /**
   * A handle for world `id` (it is not created here). Made by the client: get one from `bridge.createWorld`,
   * or `bridge.world(id)` for an existing world (`Connection` is the client's own link to the bridge, not
   * part of the package's API).
   */
  constructor(connection: Connection, id: string) {
    this.#c = connection;
    this.id = id;
  }

  /**
   * The value at `path` (`undefined` when absent). `T` is the type you expect there: it is not checked (NPC
   * tools and other clients write to the world too), so a value the game cannot trust is better read as the
   * default {@link JsonValue} and narrowed.
   */
  async get<T = JsonValue>(path = ""): Promise<T | undefined> {
    const result = await this.#c.request<{ value: T; exists: boolean }>("world/get", {
      world: this.id,
      path,
    });
    return result.exists ? result.value : undefined;
  }

  /**
   * Writes `value` at `path` (missing objects are created; `null` is a value, use {@link World.remove} to
   * delete); returns the new version. `value` is any JSON value, an interface or class instance included
   * ({@link JsonInput}): `undefined`, a function, a `bigint`, a `Map` or a `Set` in it does not compile. A
   * `NaN` or `Infinity` in `value` is a TypeError when it runs (JSON would send `null`), and so is a `Map` or
   * a `Set` (JSON would send `{}`): pass `Object.fromEntries(map)` or `[...set]`. A value that is `undefined`
   * or a function (a missing `await` or a typo, when the script is not type-checked) is a TypeError too.
   */
  async set<T>(path: string, value: T & JsonInput<T>): Promise<number> {
    if (value === undefined || typeof value === "function" || typeof value === "symbol") {
      const what = value === undefined
        ? "undefined"
        : typeof value === "function"
        ? "a function"
        : "a symbol";
      throw new TypeError(
        `world.set(${JSON.stringify(path)}): the value is ${what}, which JSON leaves out; pass null, or ` +
          `world.remove(${JSON.stringify(path)}) to delete it.`,
      );
    }
    const problem = lossyJsonProblem(value, { where: `world.set(${JSON.stringify(path)})`, what: "value" });
    if (problem !== null) throw problem;
    return (await this.#c.request<{ version: number }>("world/set", { world: this.id, path, value })).version;
  }

  /**
   * Applies an RFC 7386 merge patch at `path` (default the root; `null` members delete): `merge({ gold: 5 },
   * "player")`. Returns the new version. The patch comes first: a string there is a TypeError, and so is a
   * `NaN` or `Infinity` in the patch (JSON would send `null`), or a `Map` or a `Set` (JSON would send `{}`;
   * with a `bigint`, it does not compile either, see {@link JsonInput}). A path given first does not compile
   * either: `deno check` says `… not assignable to parameter of type '{ readonly "world.merge takes the patch
   * first: merge(patch, path)": never; }'`.
   */
  async merge<T extends object | string>(
    // A string is given a type no value has (its one key's type is `never`), named by the mistake: `deno check`
    // shows the name as the error, and nothing, not even a string of those words, compiles in its place.
    patch: T extends string ? { readonly "world.merge takes the patch first: merge(patch, path)": never }
      : T & JsonInput<T>,
    path = "",
  ): Promise<number> {
    if (typeof patch === "string") {
      const example = typeof path === "object" && path !== null ? shown(path) : "patch";
      throw new TypeError(`world.merge takes the patch first: merge(${example}, ${JSON.stringify(patch)}).`);
    }
    const problem = lossyJsonProblem(patch, {
      where: `world.merge(${path === "" ? "" : JSON.stringify(path)})`,
      what: "patch",
    });
    if (problem !== null) throw problem;
    return (await this.#c.request<{ version: number }>("world/merge", { world: this.id, path, patch }))
      .version;
  }

  /** Removes `path`: `{removed, oldValue, version}`, without `oldValue` when there was nothing to remove. */
  async remove(path: string): Promise<WorldRemoval> {
    const { removed, oldValue, version } = await this.#c.request("world/remove", { world: this.id, path });
    return removed ? { removed, oldValue, version } : { removed, version };
  }

  /** The whole state. `T` is the type you expect (not checked, as for {@link World.get}). */
  async snapshot<T = JsonObject>(): Promise<T> {
    return (await this.#c.request<{ state: T }>("world/snapshot", { world: this.id })).state;
  }

  /** The number of changes so far. */
  async version(): Promise<number> {
    return (await this.#c.request("world/get", { world: this.id, path: "" })).version;
  }

  /**
   * Calls `callback` for every change at, inside or above `path` (`""` = everything). Changes made by a
   * request arrive before its response. Returns the subscription; `unsubscribe()` ends it. A path that does
   * not exist yet is allowed (its creation is a change), with a warning to `onWarning` naming what is there.
   *
   * `change.path` is the path that changed, and its values are the ones there: `path` itself, or a path above
   * it (a write of `player`, a save loaded with `set("", save)`: the values are that parent's, yours inside
   * them, sent even when yours stayed the same), or one inside it (only the part that changed). `T` is the
   * type you expect at `path`, as for {@link World.get}: `subscribe<number>("player.gold", (change) => …)`
   * types `change.newValue` as a number (or `undefined`, when the value was removed), which it is when
   * `change.path` is `path`. Not checked: when `change.path` is another path, read yours with
   * `world.get(path)`, as the example does. The callback runs while the bridge goes on: a write it makes in
   * reaction to an NPC's change is not part of that NPC's turn, whose next step may read the world before it
   * (over `Bridge.spawn()` it mostly does).
   *
   * @example A guard who reacts when the player runs low on gold
   * ```ts
   * import { Bridge } from "@open-apple-models/bridge";
   * await using bridge = await Bridge.open();
   * const world = await bridge.createWorld({ player: { gold: 20 } });
   * const said: string[] = [];
   * await world.subscribe<number>("player.gold", async (change) => {
   *   // A write of "player" (or of the root, loading a save) comes at that path, with the player's values.
   *   const gold = change.path === "player.gold" ? change.newValue : await world.get<number>("player.gold");
   *   if ((gold ?? 0) < 10) said.push("Bram: No coin, no entry.");
   * });
   * await world.set("player.gold", 5); // said: ["Bram: No coin, no entry."]
   * await world.set("player", { gold: 3, name: "Aria" }); // change.path "player": said twice
   * ```
   */
  async subscribe<T = JsonValue>(path: string, callback: WorldListener<T>): Promise<Subscription> {
    if (typeof path === "function") {
      throw new TypeError(
        `world.subscribe takes the path first: subscribe("player.gold", callback) ("" for every change).`,
      );
    }
    requireFunction(callback, `The callback of world.subscribe("${path}")`);
    const result = await this.#c.subscribe(this.id, path, callback as WorldListener);
    return new Subscription(this.#c, result.subscription, result.path);
  }

  /**
   * Deletes the world and ends its subscriptions (their `unsubscribe()` then does nothing). NPCs created with
   * it keep using it.
   */
  async delete(): Promise<void> {
    await this.#c.request("world/delete", { world: this.id });
  }
}
