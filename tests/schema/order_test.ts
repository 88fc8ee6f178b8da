import assert from "node:assert/strict";
import type { JsonObject, JsonValue } from "../../src/protocol/json.ts";
import { convertSchema } from "../../src/schema/convert.ts";
import { orderBySchema } from "../../src/schema/order.ts";

/** Key order of every object in a value, as text (deepEqual ignores key order). */
function keyOrder(value: JsonValue): string {
  return JSON.stringify(value);
}

Deno.test("order: property order, then unknown keys in their original order", () => {
  const schema = { type: "object", properties: { a: { type: "string" }, b: { type: "string" } } };
  const out = orderBySchema({ z: 1, b: "b", y: 2, a: "a" }, schema);
  assert.equal(keyOrder(out), '{"a":"a","b":"b","z":1,"y":2}');
});

Deno.test("order: x-order wins over property order; missing keys are skipped", () => {
  const schema = {
    type: "object",
    "x-order": ["c", "a", "nope"],
    properties: { a: {}, b: {}, c: {} },
  };
  assert.equal(keyOrder(orderBySchema({ a: 1, b: 2, c: 3 }, schema)), '{"c":3,"a":1,"b":2}');
  assert.equal(keyOrder(orderBySchema({ b: 2 }, schema)), '{"b":2}');
});

Deno.test("order: recursive through objects, arrays, tuples, $ref, allOf", () => {
  const schema: JsonObject = {
    type: "object",
    properties: {
      pet: { $ref: "#/$defs/Pet" },
      list: { type: "array", items: { properties: { x: {}, y: {} } } },
      pair: { prefixItems: [{ properties: { m: {}, n: {} } }, { properties: { q: {}, p: {} } }] },
      both: { allOf: [{ properties: { first: {} } }, { $ref: "#/$defs/Second" }] },
    },
    $defs: {
      Pet: { properties: { name: {}, age: {} } },
      Second: { properties: { second: {}, third: {} } },
    },
  };
  const value: JsonObject = {
    both: { third: 3, second: 2, first: 1 },
    pair: [{ n: 1, m: 2 }, { p: 1, q: 2 }, { z: 1, a: 2 }],
    list: [{ y: 1, x: 2 }, "not an object", { y: 3 }],
    pet: { age: 3, name: "Rex", extra: true },
  };
  assert.equal(
    keyOrder(orderBySchema(value, schema)),
    '{"pet":{"name":"Rex","age":3,"extra":true},"list":[{"x":2,"y":1},"not an object",{"y":3}],' +
      '"pair":[{"m":2,"n":1},{"q":2,"p":1},{"z":1,"a":2}],"both":{"first":1,"second":2,"third":3}}',
  );
});

Deno.test("order: unions pick the branch with the best key overlap", () => {
  const schema: JsonObject = {
    anyOf: [
      { type: "object", properties: { kind: {}, radius: {} } },
      { type: "object", properties: { kind: {}, width: {}, height: {} } },
      { type: "string" },
    ],
  };
  assert.equal(
    keyOrder(orderBySchema({ height: 2, width: 1, kind: "rect" }, schema)),
    '{"kind":"rect","width":1,"height":2}',
  );
  assert.equal(
    keyOrder(orderBySchema({ radius: 2, kind: "circle" }, schema)),
    '{"kind":"circle","radius":2}',
  );
  assert.equal(orderBySchema("plain", schema), "plain");
  const arrays: JsonObject = {
    oneOf: [{ type: "string" }, { type: "array", items: { properties: { a: {}, b: {} } } }],
  };
  assert.equal(keyOrder(orderBySchema([{ b: 1, a: 2 }], arrays)), '[{"a":2,"b":1}]');
});

Deno.test("order: recursive schemas ($ref '#') follow the value", () => {
  const schema: JsonObject = {
    type: "object",
    properties: { name: {}, children: { type: "array", items: { $ref: "#" } } },
  };
  const value = { children: [{ children: [{ children: [], name: "c" }], name: "b" }], name: "a" };
  assert.equal(
    keyOrder(orderBySchema(value, schema)),
    '{"name":"a","children":[{"name":"b","children":[{"name":"c","children":[]}]}]}',
  );
});

Deno.test("order: works with the converted generation schema too", () => {
  const { generationSchema } = convertSchema({
    type: "object",
    "x-order": ["b", "a"],
    properties: {
      a: { type: "object", properties: { y: { type: "string" }, x: { type: "string" } } },
      b: {},
    },
  }, "R");
  assert.equal(
    keyOrder(orderBySchema({ a: { x: "1", y: "2" }, b: "3" }, generationSchema)),
    '{"b":"3","a":{"y":"2","x":"1"}}',
  );
});

Deno.test("order: __proto__ keys stay own data; prototypes are never consulted", () => {
  const schema = JSON.parse('{"properties": {"__proto__": {"properties": {"b": {}, "a": {}}}, "x": {}}}');
  const value = JSON.parse('{"x": 1, "__proto__": {"a": 1, "b": 2}, "constructor": 5}');
  const out = orderBySchema(value, schema) as JsonObject;
  assert.equal(keyOrder(out), '{"__proto__":{"b":2,"a":1},"x":1,"constructor":5}');
  assert.ok(Object.hasOwn(out, "__proto__"));
  assert.equal(Object.getPrototypeOf(out), Object.prototype);
  // Keys named like Object.prototype members are unknown keys, not schema properties.
  const plain = orderBySchema(JSON.parse('{"toString": 1, "a": 2}'), { properties: { a: {} } });
  assert.equal(keyOrder(plain), '{"a":2,"toString":1}');
});

Deno.test("order: input is not modified; non-objects and schema-less values pass through", () => {
  const value = { b: 1, a: 2 };
  const out = orderBySchema(value, { properties: { a: {}, b: {} } });
  assert.equal(keyOrder(value), '{"b":1,"a":2}');
  assert.notEqual(out, value);
  assert.equal(orderBySchema(5, { type: "integer" }), 5);
  assert.equal(orderBySchema(null, {}), null);
  assert.equal(keyOrder(orderBySchema({ b: 1, a: 2 }, {})), '{"b":1,"a":2}');
  assert.equal(keyOrder(orderBySchema({ b: 1, a: 2 }, { $ref: "#/nowhere" })), '{"b":1,"a":2}');
});

Deno.test("order: adversarial depth and cycles terminate", () => {
  // 10,000-deep value against a recursive schema.
  let value: JsonValue = { leaf: true };
  for (let i = 0; i < 10_000; i++) value = { next: value, id: i };
  const schema: JsonObject = { properties: { id: {}, next: { $ref: "#" } } };
  const out = orderBySchema(value, schema) as JsonObject;
  assert.equal(Object.keys(out).join(","), "id,next");
  // Self-referencing $ref and allOf cycles.
  const cyclic = { $ref: "#", allOf: [{ $ref: "#" }], anyOf: [{ $ref: "#" }] };
  assert.equal(keyOrder(orderBySchema({ b: 1, a: 2 }, cyclic)), '{"b":1,"a":2}');
  assert.equal(keyOrder(orderBySchema([[[1]]], { items: { $ref: "#" } })), "[[[1]]]");
});
