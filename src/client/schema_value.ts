/**
 * The TypeScript type of the values a JSON Schema describes, computed from a schema written inline (used
 * to type a client tool's arguments). Covers the subset of PROTOCOL.md §9: objects with `required`, strings
 * (with `enum`/`const`), numbers, booleans, `null`, arrays and `anyOf`/`oneOf`; anything else is `JsonValue`.
 * @module
 */
import type { JsonObject, JsonValue } from "../protocol/json.ts";

/**
 * The value type of schema `S`.
 *
 * @example
 * ```ts
 * import type { SchemaValue } from "@open-apple-models/bridge";
 * type Args = SchemaValue<{
 *   type: "object";
 *   properties: { item: { type: "string" }; count: { type: "integer" } };
 *   required: ["item"];
 * }>;
 * const args: Args = { item: "iron sword" }; // { item: string; count?: number }
 * ```
 */
export type SchemaValue<S> = S extends { enum: readonly (infer E)[] } ? E
  : S extends { const: infer C } ? C
  : S extends { anyOf: readonly (infer A)[] } ? SchemaValue<A>
  : S extends { oneOf: readonly (infer A)[] } ? SchemaValue<A>
  : S extends { type: infer T } ? SchemaTypeValue<S, T extends readonly (infer U)[] ? U : T>
  : JsonValue;

/**
 * The value type of schema `S` for one of its `type` names `T` (a helper of {@link SchemaValue}).
 *
 * @example
 * ```ts
 * import { type SchemaTypeValue } from "@open-apple-models/bridge";
 * type Gold = SchemaTypeValue<{ type: "integer" }, "integer">; // number
 * const gold: Gold = 45;
 * ```
 */
export type SchemaTypeValue<S, T> = T extends "string" ? string
  : T extends "integer" | "number" ? number
  : T extends "boolean" ? boolean
  : T extends "null" ? null
  : T extends "array" ? (S extends { items: infer I } ? SchemaValue<I>[] : JsonValue[])
  : T extends "object" ? (
      S extends { properties: infer P } ? (
          & { -readonly [K in keyof P as K extends SchemaRequired<S> ? K : never]: SchemaValue<P[K]> }
          & { -readonly [K in keyof P as K extends SchemaRequired<S> ? never : K]?: SchemaValue<P[K]> }
        ) extends infer O ? { [K in keyof O]: O[K] } : never
        : JsonObject
    )
  : JsonValue;

/**
 * The names in object schema `S`'s `required` (a helper of {@link SchemaValue}).
 *
 * @example
 * ```ts
 * import { type SchemaRequired } from "@open-apple-models/bridge";
 * type Names = SchemaRequired<{ type: "object"; required: ["item", "count"] }>; // "item" | "count"
 * const name: Names = "item";
 * ```
 */
export type SchemaRequired<S> = S extends { required: readonly (infer R)[] } ? R : never;
