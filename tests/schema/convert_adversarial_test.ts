import assert from "node:assert/strict";
import type { JsonObject, JsonValue } from "../../src/protocol/json.ts";
import { convertSchema, SchemaError } from "../../src/schema/convert.ts";
import { diamonds } from "./diamonds.ts";

const DEPTH_MESSAGE = "the schema nests or references more than 32 levels deep";

function assertSchemaError(fn: () => unknown, message: string, pathCheck?: (path: string) => void): void {
  assert.throws(fn, (error: unknown) => {
    assert.ok(error instanceof SchemaError, `expected SchemaError, got ${error}`);
    assert.equal(error.message, message);
    pathCheck?.(error.schemaPath);
    return true;
  });
}

function nestedArrays(levels: number): JsonObject {
  let schema: JsonObject = { type: "string" };
  for (let i = 0; i < levels; i++) schema = { type: "array", items: schema };
  return schema;
}

Deno.test("adversarial: 10,000-deep nesting fails with the depth error, not a crash", () => {
  assertSchemaError(() => convertSchema(nestedArrays(10_000), "Response"), DEPTH_MESSAGE, (path) => {
    assert.equal(path, "#" + "/items".repeat(33));
  });

  let objects: JsonObject = { type: "string" };
  for (let i = 0; i < 10_000; i++) objects = { type: "object", properties: { a: objects } };
  assertSchemaError(() => convertSchema(objects, "Response"), DEPTH_MESSAGE, (path) => {
    assert.equal(path, "#" + "/properties/a".repeat(33));
  });

  let unions: JsonValue = { type: "string" };
  for (let i = 0; i < 10_000; i++) unions = { anyOf: [unions, { type: "null" }] };
  assertSchemaError(() => convertSchema(unions, "Response"), DEPTH_MESSAGE);

  let allOf: JsonValue = { type: "object", properties: {} };
  for (let i = 0; i < 10_000; i++) allOf = { allOf: [allOf] };
  assertSchemaError(() => convertSchema(allOf, "Response"), DEPTH_MESSAGE);

  // The same input parsed from JSON text (what the bridge actually receives).
  const text = '{"type":"array","items":'.repeat(10_000) + '{"type":"string"}' + "}".repeat(10_000);
  assertSchemaError(() => convertSchema(JSON.parse(text), "Response"), DEPTH_MESSAGE);
});

Deno.test("adversarial: the depth limit is 32 levels", () => {
  const ok = convertSchema(nestedArrays(32), "Response");
  assert.equal(ok.generationSchema.type, "array");
  assertSchemaError(() => convertSchema(nestedArrays(33), "Response"), DEPTH_MESSAGE);
});

Deno.test("adversarial: long $ref chains hit the depth limit", () => {
  const defs: JsonObject = {};
  for (let i = 0; i < 40; i++) defs[`d${i}`] = { $ref: `#/$defs/d${i + 1}` };
  defs.d40 = { type: "string" };
  assertSchemaError(() => convertSchema({ $defs: defs, $ref: "#/$defs/d0" }, "Response"), DEPTH_MESSAGE);
  const short: JsonObject = {};
  for (let i = 0; i < 10; i++) short[`d${i}`] = { $ref: `#/$defs/d${i + 1}` };
  short.d10 = { type: "boolean" };
  assert.deepEqual(convertSchema({ $defs: short, $ref: "#/$defs/d0" }, "R").generationSchema, {
    type: "boolean",
  });
});

Deno.test("adversarial: diamond-shaped $ref/allOf graphs stay small; deeper ones are rejected", () => {
  // (That converting them stays fast is measured in tests/slow/intake_slow.ts.)
  const ok = diamonds(14);
  for (const root of ["all0", "any0", "arr0"]) {
    const { generationSchema } = convertSchema(
      { $defs: ok, type: "object", properties: { p: { $ref: `#/$defs/${root}` } } },
      "R",
    );
    assert.ok(JSON.stringify(generationSchema).length < 20_000);
  }
  const deep = diamonds(30);
  for (const root of ["all0", "any0", "arr0"]) {
    assert.throws(
      () =>
        convertSchema({ $defs: deep, type: "object", properties: { p: { $ref: `#/$defs/${root}` } } }, "R"),
      SchemaError,
    );
  }
});

Deno.test("adversarial: cycles never hang (inline cycles fail, named cycles become references)", () => {
  assertSchemaError(
    () =>
      convertSchema(
        { $defs: { A: { anyOf: [{ $ref: "#/$defs/A" }, { type: "null" }] } }, $ref: "#/$defs/A" },
        "R",
      ),
    "recursive $ref '#/$defs/A' must point to an object or union schema",
  );
  assertSchemaError(
    () =>
      convertSchema({
        $defs: { A: { $ref: "#/$defs/A" } },
        type: "object",
        properties: { a: { $ref: "#/$defs/A" } },
      }, "R"),
    "recursive $ref '#/$defs/A' must point to an object or union schema",
  );
  // A cyclic JavaScript object (not JSON, but a programmatic caller could pass one).
  const cyclic: JsonObject = { type: "object", properties: {} };
  (cyclic.properties as JsonObject).self = cyclic;
  assert.deepEqual(convertSchema(cyclic, "Loop").generationSchema.properties, { self: { $ref: "#" } });
});

Deno.test("adversarial: __proto__ and other prototype names are plain data", () => {
  const schema = JSON.parse(`{
    "type": "object",
    "properties": {
      "__proto__": {"type": "object", "properties": {"polluted": {"type": "string"}}},
      "constructor": {"type": "string"},
      "prototype": {"$ref": "#/$defs/__proto__"},
      "toString": {"type": "integer"}
    },
    "required": ["__proto__", "constructor", "toString"],
    "x-order": ["toString", "__proto__"],
    "$defs": {"__proto__": {"type": "object", "properties": {"hasOwnProperty": {"type": "boolean"}}}}
  }`);
  const { generationSchema: gs, warnings } = convertSchema(schema, "Response");
  assert.deepEqual(warnings, []);
  const props = gs.properties as JsonObject;
  assert.deepEqual(Object.keys(props), ["toString", "__proto__", "constructor", "prototype"]);
  assert.ok(Object.hasOwn(props, "__proto__"));
  assert.equal(Object.getPrototypeOf(props), Object.prototype);
  assert.deepEqual(props.__proto__, { $ref: "#/$defs/Response___proto__" });
  assert.deepEqual(props.prototype, { $ref: "#/$defs/__proto__" });
  assert.deepEqual(gs.required, ["toString", "__proto__", "constructor"]);
  assert.deepEqual(gs["x-order"], ["toString", "__proto__", "constructor", "prototype"]);
  const defs = gs.$defs as JsonObject;
  assert.ok(Object.hasOwn(defs, "__proto__"));
  assert.equal(Object.getPrototypeOf(defs), Object.prototype);
  assert.equal((defs.__proto__ as JsonObject).title, "__proto__");
  // Nothing leaked onto the global prototype.
  assert.equal(({} as Record<string, unknown>).polluted, undefined);
  assert.equal(({} as Record<string, unknown>).hasOwnProperty, Object.prototype.hasOwnProperty);
  // The output survives a JSON round trip unchanged.
  assert.deepEqual(JSON.parse(JSON.stringify(gs)), gs);
});

Deno.test("adversarial: $ref cannot reach prototypes", () => {
  for (const ref of ["#/constructor", "#/__proto__", "#/$defs/toString", "#/properties/hasOwnProperty"]) {
    assertSchemaError(
      () => convertSchema({ type: "object", properties: {}, $defs: {}, $ref: ref }, "R"),
      `unresolvable $ref '${ref}'`,
    );
  }
});

Deno.test("adversarial: huge numbers everywhere", () => {
  const { generationSchema: gs } = convertSchema({
    type: "object",
    properties: {
      i: { type: "integer", minimum: 1e300, maximum: 1e308 },
      n: { type: "number", minimum: -1e300, exclusiveMaximum: 1e300 },
      a: { type: "array", items: { type: "string" }, minItems: 1e300 },
      e: { enum: [1e300, 2] },
      c: { const: 1e300 },
    },
  }, "R");
  const props = gs.properties as JsonObject;
  assert.deepEqual(props.i, {
    type: "integer",
    minimum: Number.MAX_SAFE_INTEGER,
    maximum: Number.MAX_SAFE_INTEGER,
  });
  assert.deepEqual(props.n, { type: "number", minimum: -1e300, maximum: 1e300 });
  assert.equal((props.a as JsonObject).minItems, Number.MAX_SAFE_INTEGER);
  assert.deepEqual((props.e as JsonObject).maximum, Number.MAX_SAFE_INTEGER);
  assert.equal((props.c as JsonObject).description, "Must be exactly 1e+300.");
  // Every number is finite: the schema survives a JSON round trip unchanged (Infinity would become null).
  assert.deepEqual(JSON.parse(JSON.stringify(gs)), gs);
});

Deno.test("adversarial: very large enums and wide objects", () => {
  const values = Array.from({ length: 200_000 }, (_, i) => i);
  const { generationSchema: gs, warnings } = convertSchema({ enum: values }, "R");
  assert.equal(gs.minimum, 0);
  assert.equal(gs.maximum, 199_999);
  assert.deepEqual(warnings, [
    "#: integer enum is enforced as a range 0...199999; exact values are described",
  ]);
  const properties: JsonObject = {};
  for (let i = 0; i < 25_000; i++) properties[`p${i}`] = { type: "string" };
  assert.throws(() => convertSchema({ type: "object", properties }, "R"), (error: unknown) => {
    assert.ok(error instanceof SchemaError);
    assert.equal(error.message, "the schema has more than 20000 nodes");
    return true;
  });
  delete properties.p0;
  for (let i = 1; i < 5_001; i++) delete properties[`p${i}`];
  assert.equal(
    Object.keys(convertSchema({ type: "object", properties }, "R").generationSchema.properties as JsonObject)
      .length,
    19_999,
  );
});
