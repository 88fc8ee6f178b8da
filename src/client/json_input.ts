/**
 * The compile-time check of a value the client sends as JSON (a world value, patch or state): what JSON
 * would refuse or change without a word does not compile, and an interface or class instance does.
 * @module
 */
import type { JsonValue } from "../protocol/json.ts";

/**
 * `T` where JSON sends it as it is; `never` (so the call does not compile) at what JSON would refuse or
 * silently change: `undefined`, a function or a symbol as the value itself (JSON sends nothing), a `bigint`
 * (JSON throws), a `Map` or a `Set` (JSON sends `{}`). Members that are `undefined` or functions (methods of a
 * class instance) are left out by JSON, as an optional member is, and are allowed. Unlike {@link JsonValue},
 * an interface or a class instance is accepted, and so is a value typed `unknown` (nothing to check). A `NaN`
 * or `Infinity` is a number to TypeScript, and the client refuses it when the call runs, as it does all of
 * these.
 *
 * @example
 * ```ts
 * import { Bridge } from "@open-apple-models/bridge";
 * interface Player {
 *   gold: number;
 *   bag: string[];
 * }
 * await using bridge = await Bridge.open();
 * const world = await bridge.createWorld();
 * const player: Player = { gold: 20, bag: ["rope"] };
 * await world.set("player", player); // an interface is fine
 * // @ts-expect-error: a Set would arrive as {}; send [...set]
 * const wrong = () => world.set("player.bag", new Set(["rope"]));
 * ```
 */
export type JsonInput<T> = unknown extends T ? T // `unknown` (an index signature of any value): nothing to check
  : T extends JsonValue ? T
  : T extends undefined | bigint | symbol | ((...args: never) => unknown) ? never
  : T extends
    ReadonlyMap<unknown, unknown> | ReadonlySet<unknown> | WeakMap<object, unknown> | WeakSet<object> ? never
  : T extends { toJSON(): unknown } ? T
  : { [K in keyof T]: JsonMemberInput<T[K]> };

/**
 * A member of a {@link JsonInput}: as it, but `undefined` and functions are allowed (JSON leaves such a member
 * out, as it does an optional one).
 *
 * @example
 * ```ts
 * import { type JsonMemberInput } from "@open-apple-models/bridge";
 * const hp: JsonMemberInput<number | undefined> = undefined;
 * ```
 */
export type JsonMemberInput<T> = T extends undefined | ((...args: never) => unknown) ? T : JsonInput<T>;

/**
 * A {@link JsonInput} that is an object, not an array (a world's root state).
 *
 * @example
 * ```ts
 * import { Bridge } from "@open-apple-models/bridge";
 * await using bridge = await Bridge.open();
 * await bridge.createWorld({ player: { gold: 20 } });
 * // @ts-expect-error: a world's state is an object
 * const wrong = () => bridge.createWorld(["gold"]);
 * ```
 */
export type JsonObjectInput<T> = T extends readonly unknown[] ? never : JsonInput<T>;
