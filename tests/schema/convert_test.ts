import assert from "node:assert/strict";
import type { JsonObject, JsonValue } from "../../src/protocol/json.ts";
import { convertSchema, SchemaError } from "../../src/schema/convert.ts";

function convert(schema: JsonValue, rootName = "Response") {
  const { generationSchema, warnings } = convertSchema(schema, rootName);
  return { gs: generationSchema, warnings };
}

/** Converts `{type: object, properties: {p: schema}}` and returns the property node plus warnings. */
function property(schema: JsonValue, required = false) {
  const { gs, warnings } = convert({
    type: "object",
    properties: { p: schema },
    ...(required ? { required: ["p"] } : {}),
  });
  const props = gs.properties as JsonObject;
  return { node: props.p as JsonObject, gs, warnings };
}

function throwsSchemaError(schema: JsonValue, message: string, schemaPath: string): void {
  assert.throws(() => convertSchema(schema, "Response"), (error: unknown) => {
    assert.ok(error instanceof SchemaError, `expected SchemaError, got ${error}`);
    assert.equal(error.message, message);
    assert.equal(error.schemaPath, schemaPath);
    return true;
  });
}

// ---- objects ---------------------------------------------------------------------------------------

Deno.test("convert: tool parameters become the FoundationModels object form", () => {
  const { gs, warnings } = convert(
    { type: "object", properties: { gate: { type: "string" } }, required: ["gate"] },
    "OpenGateArguments",
  );
  assert.deepEqual(gs, {
    title: "OpenGateArguments",
    type: "object",
    properties: { gate: { type: "string" } },
    required: ["gate"],
    "x-order": ["gate"],
    additionalProperties: false,
  });
  assert.deepEqual(warnings, []);
});

Deno.test("convert: root title wins over the root name; description kept", () => {
  const { gs } = convert({ title: "Verdict", description: "A ruling", type: "object", properties: {} });
  assert.equal(gs.title, "Verdict");
  assert.equal(gs.description, "A ruling");
  assert.deepEqual(gs.properties, {});
  assert.deepEqual(gs.required, []);
  assert.deepEqual(gs["x-order"], []);
});

Deno.test("convert: x-order (existing keys only, once) then document order", () => {
  const { gs } = convert({
    type: "object",
    "x-order": ["c", "missing", "a", "c", 5],
    properties: {
      a: { type: "string" },
      b: { type: "string" },
      c: { type: "string" },
      d: { type: "string" },
    },
    required: ["a", "b", "c", "d"],
  });
  assert.deepEqual(gs["x-order"], ["c", "a", "b", "d"]);
  assert.deepEqual(gs.required, ["c", "a", "b", "d"]);
});

Deno.test("convert: optional when not required or nullable", () => {
  const { gs } = convert({
    type: "object",
    properties: {
      a: { type: "string" },
      b: { type: ["string", "null"] },
      c: { type: "integer" },
      d: { anyOf: [{ type: "string" }, { type: "null" }] },
      e: { enum: ["x", null] },
    },
    required: ["a", "b", "d", "e", "zzz"],
  });
  assert.deepEqual(gs.required, ["a"]);
  const props = gs.properties as JsonObject;
  assert.deepEqual(props.b, { type: "string" });
  assert.deepEqual(props.d, { type: "string" });
  assert.deepEqual(props.e, { type: "string", enum: ["x"] });
});

Deno.test("convert: nested objects become named $defs `<parent>_<key>`", () => {
  const { gs } = convert({
    type: "object",
    properties: {
      address: {
        type: "object",
        description: "Where",
        properties: { geo: { type: "object", properties: { lat: { type: "number" } } } },
      },
    },
  });
  assert.deepEqual((gs.properties as JsonObject).address, {
    $ref: "#/$defs/Response_address",
    description: "Where",
  });
  const defs = gs.$defs as JsonObject;
  assert.deepEqual(Object.keys(defs), ["Response_address", "Response_address_geo"]);
  assert.deepEqual(defs.Response_address, {
    title: "Response_address",
    description: "Where",
    type: "object",
    properties: { geo: { $ref: "#/$defs/Response_address_geo" } },
    required: [],
    "x-order": ["geo"],
    additionalProperties: false,
  });
});

Deno.test("convert: free-form objects warn, truthfully for any model, and produce an empty object", () => {
  for (const additional of [true, {}, { type: "string" }] as JsonValue[]) {
    const { node, gs, warnings } = property({ type: "object", additionalProperties: additional });
    assert.deepEqual(node, { $ref: "#/$defs/Response_p" });
    assert.deepEqual((gs.$defs as JsonObject).Response_p, {
      title: "Response_p",
      type: "object",
      properties: {},
      required: [],
      "x-order": [],
      additionalProperties: false,
    });
    assert.deepEqual(warnings, [
      "#/properties/p: free-form object (additionalProperties without properties): the on-device and scripted " +
      "models generate it as {}; list the properties it should have",
    ]);
  }
  assert.deepEqual(convert({ type: "object" }).warnings, []);
  assert.deepEqual(convert({ type: "object", additionalProperties: false }).warnings, []);
  assert.deepEqual(convert({ type: "object", properties: { a: {} }, additionalProperties: true }).warnings, [
    "#/properties/a: schema without a type is generated as a string",
  ]);
});

Deno.test("convert: described object keys", () => {
  const { gs, warnings } = convert({
    type: "object",
    description: "Bag",
    properties: { a: { type: "string" } },
    minProperties: 1,
    maxProperties: 3,
    patternProperties: { "^x": { type: "string" } },
    dependentRequired: { a: ["b"] },
  });
  assert.equal(
    gs.description,
    'Bag (minProperties: 1; maxProperties: 3; patternProperties: {"^x":{"type":"string"}}; dependentRequired: {"a":["b"]})',
  );
  assert.deepEqual(warnings, [
    "#: 'minProperties' is described to the model but not enforced",
    "#: 'maxProperties' is described to the model but not enforced",
    "#: 'patternProperties' is described to the model but not enforced",
    "#: 'dependentRequired' is described to the model but not enforced",
  ]);
});

// ---- type resolution -------------------------------------------------------------------------------

Deno.test("convert: `true` schema is a string with a warning; non-objects are errors", () => {
  const { node, warnings } = property(true);
  assert.deepEqual(node, { type: "string" });
  assert.deepEqual(warnings, ["#/properties/p: unconstrained schema `true` is generated as a string"]);
  const root = convert(true);
  assert.deepEqual(root.gs, { type: "string" });
  assert.deepEqual(root.warnings, ["#: unconstrained schema `true` is generated as a string"]);
  throwsSchemaError(false, "expected a schema object, got false", "#");
  throwsSchemaError(null, "expected a schema object, got null", "#");
  throwsSchemaError([], "expected a schema object, got []", "#");
  throwsSchemaError(
    { type: "object", properties: { a: 5 } },
    "expected a schema object, got 5",
    "#/properties/a",
  );
  throwsSchemaError({ type: "array", items: "x" }, 'expected a schema object, got "x"', "#/items");
});

Deno.test("convert: multiple types use the first concrete type", () => {
  const { node, warnings } = property({ type: ["string", "integer", "null"] }, true);
  assert.deepEqual(node, { type: "string" });
  assert.deepEqual(warnings, [
    "#/properties/p: multiple types [string, integer] are not supported; using 'string'",
  ]);
});

Deno.test("convert: type inference without `type`", () => {
  assert.deepEqual(convert({ properties: { a: { type: "boolean" } } }).gs.type, "object");
  assert.deepEqual(convert({ items: { type: "boolean" } }).gs, { type: "array", items: { type: "boolean" } });
  assert.deepEqual(convert({ pattern: "^a$" }).gs.type, "string");
  assert.deepEqual(convert({ format: "date" }).gs.type, "string");
  assert.deepEqual(convert({ minimum: 1 }).gs, { type: "number", minimum: 1 });
  assert.deepEqual(convert({ maximum: 1 }).gs, { type: "number", maximum: 1 });
  const bare = convert({ description: "anything" });
  assert.deepEqual(bare.gs, { type: "string", description: "anything" });
  assert.deepEqual(bare.warnings, ["#: schema without a type is generated as a string"]);
});

Deno.test("convert: unsupported and invalid types are errors", () => {
  throwsSchemaError(
    { type: "foo" },
    "unsupported type 'foo' (a type is one of object, array, string, integer, number, boolean, null)",
    "#",
  );
  throwsSchemaError(
    { type: ["string", "any"] },
    "unsupported type 'any' (a type is one of object, array, string, integer, number, boolean, null)",
    "#",
  );
  throwsSchemaError({ type: 5 }, "invalid 'type'", "#");
  throwsSchemaError({ type: ["string", 1] }, "invalid 'type'", "#");
  throwsSchemaError({ type: { a: 1 } }, "invalid 'type'", "#");
  throwsSchemaError(
    { type: "object", properties: { a: { type: "array", items: { type: "map" } } } },
    "unsupported type 'map' (a type is one of object, array, string, integer, number, boolean, null)",
    "#/properties/a/items",
  );
});

Deno.test("convert: a misspelt type names the one it most likely meant, as a misspelt keyword does", () => {
  throwsSchemaError({ type: "strin" }, "unsupported type 'strin' (did you mean 'string'?)", "#");
  throwsSchemaError(
    { type: "object", properties: { n: { type: ["integr", "null"] } } },
    "unsupported type 'integr' (did you mean 'integer'?)",
    "#/properties/n",
  );
  throwsSchemaError({ type: "String" }, "unsupported type 'String' (did you mean 'string'?)", "#");
  throwsSchemaError({ type: "text" }, `unsupported type 'text' ${TYPES}`, "#");
});

const TYPES = "(a type is one of object, array, string, integer, number, boolean, null)";

Deno.test("convert: a type named as a programming language names the JSON Schema type it means", () => {
  const cases: [string, string][] = [
    ["int", "integer"],
    ["int32", "integer"],
    ["int64", "integer"],
    ["long", "integer"],
    ["float", "number"],
    ["double", "number"],
    ["decimal", "number"],
    ["bool", "boolean"],
    ["str", "string"],
    ["list", "array"],
    ["dict", "object"],
  ];
  for (const [type, meant] of cases) {
    throwsSchemaError(
      { type: "object", properties: { gold: { type } } },
      `unsupported type '${type}' (did you mean '${meant}'?)`,
      "#/properties/gold",
    );
  }
});

Deno.test("convert: a property written as its type says how to write it as a schema", () => {
  throwsSchemaError(
    { type: "array", items: "string" },
    `expected a schema object, got "string" (write {"type": "string"})`,
    "#/items",
  );
  throwsSchemaError(
    { type: "object", properties: { gold: "integer" } },
    `expected a schema object, got "integer" (write {"type": "integer"})`,
    "#/properties/gold",
  );
  throwsSchemaError(
    { type: "object", properties: { a: 5 } },
    "expected a schema object, got 5",
    "#/properties/a",
  );
});

Deno.test("convert: 'required' that is not a list, and 'properties' that is not an object, are warnings that say so", () => {
  const required = convert({ type: "object", properties: { title: { type: "string" } }, required: "title" });
  assert.deepEqual(required.warnings, [
    `#: 'required' must be a list of property names (["title"]); "title" is ignored`,
  ]);
  const listed = convert({ type: "object", properties: [{ title: { type: "string" } }] });
  assert.deepEqual(listed.warnings, [
    `#: 'properties' must be an object of property schemas ({"title": {"type": "string"}}), not a list; ` +
    "it is ignored, so the object is generated as {}",
  ]);
});

Deno.test("convert: boolean", () => {
  assert.deepEqual(property({ type: "boolean", description: "Open?" }).node, {
    type: "boolean",
    description: "Open?",
  });
});

// ---- strings and described keys -------------------------------------------------------------------

Deno.test("convert: string described keys, pattern, examples and default", () => {
  const { node, warnings } = property({
    type: "string",
    description: "Contact",
    format: "email",
    minLength: 3,
    maxLength: 40,
    contentEncoding: "base64",
    contentMediaType: "text/plain",
    pattern: "^[a-z]+@x\\.org$",
    examples: ["a@x.org", "b@x.org", "c@x.org", "d@x.org"],
    default: "a@x.org",
  });
  assert.deepEqual(node, {
    type: "string",
    description: "Contact. Must match the regular expression ^[a-z]+@x\\.org$. " +
      "(format: email; minLength: 3; maxLength: 40; contentEncoding: base64; contentMediaType: text/plain; " +
      "examples: a@x.org, b@x.org, c@x.org; default: a@x.org)",
  });
  assert.deepEqual(warnings, [
    "#/properties/p: pattern '^[a-z]+@x\\.org$' is described to the model but not enforced",
    "#/properties/p: 'format' is described to the model but not enforced",
    "#/properties/p: 'minLength' is described to the model but not enforced",
    "#/properties/p: 'maxLength' is described to the model but not enforced",
    "#/properties/p: 'contentEncoding' is described to the model but not enforced",
    "#/properties/p: 'contentMediaType' is described to the model but not enforced",
  ]);
});

Deno.test("convert: examples/default without a description and without warnings", () => {
  const { node, warnings } = property({ type: "integer", examples: [1, 2], default: { a: [1] } });
  assert.deepEqual(node, { type: "integer", description: '(examples: 1, 2; default: {"a":[1]})' });
  assert.deepEqual(warnings, []);
});

Deno.test("convert: pattern alone, description ending with punctuation", () => {
  const { node } = property({ type: "string", description: "Code:", pattern: "^A" });
  assert.equal(node.description, "Code: Must match the regular expression ^A.");
  assert.equal(
    property({ type: "string", pattern: "^A" }).node.description,
    "Must match the regular expression ^A.",
  );
});

// ---- numbers ---------------------------------------------------------------------------------------

Deno.test("convert: integer bounds round inwards and exclusive bounds move by one", () => {
  assert.deepEqual(property({ type: "integer", minimum: 1.5, maximum: 9.5 }).node, {
    type: "integer",
    minimum: 2,
    maximum: 9,
  });
  assert.deepEqual(property({ type: "integer", exclusiveMinimum: 1, exclusiveMaximum: 10 }).node, {
    type: "integer",
    minimum: 2,
    maximum: 9,
  });
  assert.deepEqual(property({ type: "integer", exclusiveMinimum: 1.5, exclusiveMaximum: 9.5 }).node, {
    type: "integer",
    minimum: 2,
    maximum: 9,
  });
  // Draft 4 boolean form.
  assert.deepEqual(
    property({ type: "integer", minimum: 0, exclusiveMinimum: true, maximum: 5, exclusiveMaximum: true })
      .node,
    { type: "integer", minimum: 1, maximum: 4 },
  );
  // The tighter of inclusive and exclusive bounds.
  assert.deepEqual(property({ type: "integer", minimum: 5, exclusiveMinimum: 1 }).node, {
    type: "integer",
    minimum: 5,
  });
  assert.deepEqual(property({ type: "integer", minimum: 3, maximum: 3 }).node, {
    type: "integer",
    minimum: 3,
    maximum: 3,
  });
  const { node, warnings } = property({ type: "integer", multipleOf: 5 });
  assert.deepEqual(node, { type: "integer", description: "(multipleOf: 5)" });
  assert.deepEqual(warnings, ["#/properties/p: 'multipleOf' is described to the model but not enforced"]);
});

Deno.test("convert: integer bounds clamp huge values, with a warning that says so", () => {
  const huge = property({ type: "integer", minimum: -1e300, maximum: 1e300 });
  assert.deepEqual(huge.node, {
    type: "integer",
    minimum: -Number.MAX_SAFE_INTEGER,
    maximum: Number.MAX_SAFE_INTEGER,
  });
  // An answer's "must be <= 9007199254740991" then has its reason among the schema's warnings.
  assert.deepEqual(huge.warnings, [
    "#/properties/p: integer lower bound -1e+300 is clamped to -9007199254740991, the smallest safe integer " +
    "(-(2^53-1))",
    "#/properties/p: integer upper bound 1e+300 is clamped to 9007199254740991, the largest safe integer " +
    "(2^53-1)",
  ]);
  const below = property({ type: "integer", exclusiveMaximum: -1e300 });
  assert.deepEqual(below.node, { type: "integer", maximum: -Number.MAX_SAFE_INTEGER });
  assert.deepEqual(below.warnings, [
    "#/properties/p: integer upper bound -1e+300 is clamped to -9007199254740991, the smallest safe integer " +
    "(-(2^53-1))",
  ]);
  // Bounds within the safe range warn of nothing.
  assert.deepEqual(property({ type: "integer", minimum: -Number.MAX_SAFE_INTEGER, maximum: 5 }).warnings, []);
});

Deno.test("convert: empty integer range is ignored", () => {
  for (
    const schema of [
      { type: "integer", minimum: 5, maximum: 4 },
      { type: "integer", minimum: 1.2, maximum: 1.8 },
      { type: "integer", exclusiveMinimum: 3, exclusiveMaximum: 4 },
    ] as JsonObject[]
  ) {
    const { node, warnings } = property(schema);
    assert.deepEqual(node, { type: "integer" });
    assert.deepEqual(warnings, ["#/properties/p: empty integer range is ignored"]);
  }
});

Deno.test("convert: number bounds; exclusive ones become inclusive with a warning", () => {
  assert.deepEqual(property({ type: "number", minimum: 0.5, maximum: 1e300 }).node, {
    type: "number",
    minimum: 0.5,
    maximum: 1e300,
  });
  const exclusive = property({ type: "number", exclusiveMinimum: 0, exclusiveMaximum: 1 });
  assert.deepEqual(exclusive.node, { type: "number", minimum: 0, maximum: 1 });
  assert.deepEqual(exclusive.warnings, ["#/properties/p: exclusive number bounds are enforced as inclusive"]);
  const draft4 = property({ type: "number", minimum: 0, exclusiveMinimum: true });
  assert.deepEqual(draft4.node, { type: "number", minimum: 0 });
  assert.deepEqual(draft4.warnings, ["#/properties/p: exclusive number bounds are enforced as inclusive"]);
  const empty = property({ type: "number", minimum: 2, maximum: 1 });
  assert.deepEqual(empty.node, { type: "number" });
  assert.deepEqual(empty.warnings, ["#/properties/p: empty number range is ignored"]);
  const multiple = property({ type: "number", multipleOf: 0.5 });
  assert.deepEqual(multiple.warnings, [
    "#/properties/p: 'multipleOf' is described to the model but not enforced",
  ]);
});

// ---- arrays ----------------------------------------------------------------------------------------

Deno.test("convert: arrays with items, counts and lifted item descriptions", () => {
  const { node, warnings } = property({
    type: "array",
    description: "Hobbies",
    items: { type: "string", description: "one hobby" },
    minItems: 1,
    maxItems: 3,
  });
  assert.deepEqual(node, {
    type: "array",
    items: { type: "string" },
    minItems: 1,
    maxItems: 3,
    description: "Hobbies. Each item: one hobby",
  });
  assert.deepEqual(warnings, []);
  assert.equal(
    property({ type: "array", items: { type: "string", description: "x" } }).node.description,
    "Each item: x",
  );
});

Deno.test("convert: array described keys", () => {
  const { node, warnings } = property({
    type: "array",
    items: { type: "integer" },
    uniqueItems: true,
    contains: { const: 1 },
  });
  assert.equal(node.description, '(uniqueItems: true; contains: {"const":1})');
  assert.deepEqual(warnings, [
    "#/properties/p: 'uniqueItems' is described to the model but not enforced",
    "#/properties/p: 'contains' is described to the model but not enforced",
  ]);
  assert.deepEqual(property({ type: "array", items: { type: "integer" }, uniqueItems: false }).warnings, []);
});

Deno.test("convert: tuple arrays and arrays without items", () => {
  const tuple = property({ type: "array", prefixItems: [{ type: "integer" }, { type: "string" }] });
  assert.deepEqual(tuple.node, { type: "array", items: { type: "integer" } });
  assert.deepEqual(tuple.warnings, [
    "#/properties/p: tuple arrays (prefixItems) are generated as arrays of the first item type",
  ]);
  const tuple2020 = property({ type: "array", prefixItems: [{ type: "boolean" }], items: false });
  assert.deepEqual(tuple2020.node, { type: "array", items: { type: "boolean" } });
  const draft4 = property({ type: "array", items: [{ type: "number" }] });
  assert.deepEqual(draft4.node, { type: "array", items: { type: "number" } });
  const bare = property({ type: "array" });
  assert.deepEqual(bare.node, { type: "array", items: { type: "string" } });
  assert.deepEqual(bare.warnings, [
    "#/properties/p: array without 'items' is generated as an array of strings",
  ]);
  throwsSchemaError(
    { type: "array", prefixItems: [{ type: "bogus" }] },
    "unsupported type 'bogus' (a type is one of object, array, string, integer, number, boolean, null)",
    "#/prefixItems/0",
  );
});

Deno.test("convert: array item counts are sanitised", () => {
  assert.deepEqual(
    property({ type: "array", items: { type: "string" }, minItems: 1.5, maxItems: 1e300 }).node,
    {
      type: "array",
      items: { type: "string" },
      minItems: 2,
      maxItems: Number.MAX_SAFE_INTEGER,
    },
  );
  const empty = property({ type: "array", items: { type: "string" }, minItems: 3, maxItems: 2 });
  assert.deepEqual(empty.node, { type: "array", items: { type: "string" } });
  assert.deepEqual(empty.warnings, ["#/properties/p: empty item count range is ignored"]);
});

Deno.test("convert: objects inside arrays are named after the array", () => {
  const { node, gs } = property({
    type: "array",
    items: { type: "object", properties: { n: { type: "string" } } },
  });
  assert.deepEqual(node, { type: "array", items: { $ref: "#/$defs/Response_p" } });
  assert.ok(Object.hasOwn(gs.$defs as JsonObject, "Response_p"));
  const root = convert({ type: "array", items: { type: "object", properties: {} } });
  assert.deepEqual(root.gs, {
    type: "array",
    items: { $ref: "#/$defs/Response_item" },
    $defs: {
      Response_item: {
        title: "Response_item",
        type: "object",
        properties: {},
        required: [],
        "x-order": [],
        additionalProperties: false,
      },
    },
  });
});

// ---- enum / const ----------------------------------------------------------------------------------

Deno.test("convert: string enum becomes a string choice", () => {
  const { node, warnings } = property({
    type: "string",
    enum: ["north", "south", "north"],
    description: "Gate",
  });
  assert.deepEqual(node, { type: "string", enum: ["north", "south"], description: "Gate" });
  assert.deepEqual(warnings, []);
});

Deno.test("convert: integer enum is a range plus described values", () => {
  const { node, warnings } = property({ enum: [3, 1, 2], description: "Level" });
  assert.deepEqual(node, { type: "integer", minimum: 1, maximum: 3, description: "Level. One of: 3, 1, 2." });
  assert.deepEqual(warnings, [
    "#/properties/p: integer enum is enforced as a range 1...3; exact values are described",
  ]);
});

/** The warning of an integer enum or const value past the safe integers (`what`: "enum value", "const"). */
function unsafe(what: string, value: string, end: "largest" | "smallest"): string {
  return `#/properties/p: integer ${what} ${value} is past the ${end} safe integer (${
    end === "largest" ? "2^53-1" : "-(2^53-1)"
  }), where JSON integers lose precision (9007199254740993 reads as 9007199254740992): an answer may not ` +
    `hold the value written; a string ${what.split(" ")[0]} keeps it exact`;
}

Deno.test("convert: an integer enum value past the safe integers warns, as a bound past them does", () => {
  // Its range is clamped like a bound: the on-device model cannot answer the value; every model is told why.
  const huge = property({ enum: [1e300, -1e300] });
  assert.deepEqual(huge.node.minimum, -Number.MAX_SAFE_INTEGER);
  assert.deepEqual(huge.node.maximum, Number.MAX_SAFE_INTEGER);
  assert.deepEqual(huge.warnings, [
    unsafe("enum value", "1e+300", "largest"),
    unsafe("enum value", "-1e+300", "smallest"),
    "#/properties/p: integer enum is enforced as a range -9007199254740991...9007199254740991, clamped to the " +
    "safe integers (a value past them cannot be answered); exact values are described",
  ]);
  // 2^53 + 1 as written reads as 2^53: a value one past the safe range, said as read.
  const past = property({ enum: [1, 9007199254740992] });
  assert.deepEqual(past.warnings, [
    unsafe("enum value", "9007199254740992", "largest"),
    "#/properties/p: integer enum is enforced as a range 1...9007199254740991, clamped to the safe integers " +
    "(a value past them cannot be answered); exact values are described",
  ]);
  // The safe range's ends themselves warn of nothing more than any integer enum.
  assert.deepEqual(property({ enum: [-Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER] }).warnings, [
    "#/properties/p: integer enum is enforced as a range -9007199254740991...9007199254740991; exact values " +
    "are described",
  ]);
  // A const the same.
  assert.deepEqual(property({ const: 1e300 }).warnings, [
    unsafe("const", "1e+300", "largest"),
    "#/properties/p: non-string const 1e+300 is described instead of enforced",
  ]);
  assert.deepEqual(property({ const: Number.MAX_SAFE_INTEGER }).warnings, [
    "#/properties/p: non-string const 9007199254740991 is described instead of enforced",
  ]);
});

Deno.test("convert: mixed enum is generated as strings; null makes it nullable", () => {
  const { node, warnings, gs } = property({ enum: ["a", 1, true, 1.5, { x: 1 }, null] }, true);
  assert.deepEqual(node, { type: "string", enum: ["a", "1", "true", "1.5", '{"x":1}'] });
  assert.deepEqual(warnings, ["#/properties/p: mixed-type enum is generated as strings"]);
  assert.deepEqual(gs.required, []);
  const ints = property({ enum: [1, 2, null] }, true);
  assert.deepEqual(ints.gs.required, []);
  assert.equal(ints.node.type, "integer");
});

Deno.test("convert: const", () => {
  assert.deepEqual(property({ const: "a hedge" }).node, { type: "string", enum: ["a hedge"] });
  const five = property({ const: 5, description: "Five" });
  assert.deepEqual(five.node, { type: "integer", description: "Five. Must be exactly 5." });
  assert.deepEqual(five.warnings, ["#/properties/p: non-string const 5 is described instead of enforced"]);
  assert.deepEqual(property({ const: true }).node, { type: "boolean", description: "Must be exactly true." });
  assert.deepEqual(property({ const: 1.5 }).node, { type: "number", description: "Must be exactly 1.5." });
  const object = property({ const: { a: 1 } });
  assert.deepEqual(object.node, { type: "string", description: 'Must be exactly {"a":1}.' });
  assert.deepEqual(object.warnings, [
    '#/properties/p: non-string const {"a":1} is described instead of enforced',
  ]);
  // An explicit type is kept.
  assert.deepEqual(property({ type: "number", const: 2 }).node, {
    type: "number",
    description: "Must be exactly 2.",
  });
});

// ---- unions ----------------------------------------------------------------------------------------

Deno.test("convert: nullable unions inline their one concrete branch and inherit the description", () => {
  const { node, gs, warnings } = property(
    { description: "Maybe a count", anyOf: [{ type: "integer", minimum: 0 }, { type: "null" }] },
    true,
  );
  assert.deepEqual(node, { type: "integer", minimum: 0, description: "Maybe a count" });
  assert.deepEqual(gs.required, []);
  assert.deepEqual(warnings, []);
  const constNull = property({ oneOf: [{ const: null }, { type: "string", description: "inner" }] }, true);
  assert.deepEqual(constNull.node, { type: "string", description: "inner" });
  assert.deepEqual(constNull.gs.required, []);
  const single = property({ anyOf: [{ type: "boolean" }] }, true);
  assert.deepEqual(single.gs.required, ["p"]);
  const branchWarning = property({ anyOf: [{ type: "null" }, { type: "string", format: "uri" }] });
  assert.deepEqual(branchWarning.warnings, [
    "#/properties/p/anyOf/1: 'format' is described to the model but not enforced",
  ]);
});

Deno.test("convert: string-literal unions become one string choice", () => {
  const { node, warnings } = property({
    description: "Mood",
    oneOf: [{ const: "calm" }, { enum: ["angry", "calm"] }, { type: "string", const: "sad" }, {
      type: "null",
    }],
  });
  assert.deepEqual(node, { type: "string", enum: ["calm", "angry", "sad"], description: "Mood" });
  assert.deepEqual(warnings, []);
});

Deno.test("convert: general unions are named with named branches", () => {
  const { node, gs } = property({
    description: "Target",
    anyOf: [
      { type: "string" },
      { type: "object", properties: { x: { type: "number" } } },
      { title: "Point", type: "object", properties: { y: { type: "number" } } },
      { type: "null" },
    ],
  });
  assert.deepEqual(node, { $ref: "#/$defs/Response_p", description: "Target" });
  const defs = gs.$defs as JsonObject;
  assert.deepEqual(defs.Response_p, {
    title: "Response_p",
    description: "Target",
    anyOf: [{ type: "string" }, { $ref: "#/$defs/Response_p_option1" }, { $ref: "#/$defs/Point" }],
  });
  assert.equal((defs.Response_p_option1 as JsonObject).title, "Response_p_option1");
  assert.equal((defs.Point as JsonObject).title, "Point");
  assert.deepEqual(gs.required, []);
});

Deno.test("convert: union at the root is the root type", () => {
  const { gs } = convert({ anyOf: [{ type: "string" }, { type: "integer" }] }, "Content");
  assert.deepEqual(gs, { title: "Content", anyOf: [{ type: "string" }, { type: "integer" }] });
});

Deno.test("convert: union of only nulls", () => {
  const { node, warnings, gs } = property({ anyOf: [{ type: "null" }] }, true);
  assert.deepEqual(node, { type: "string" });
  assert.deepEqual(gs.required, []);
  assert.deepEqual(warnings, ["#/properties/p: schema without a type is generated as a string"]);
});

// ---- allOf -----------------------------------------------------------------------------------------

Deno.test("convert: allOf merges object parts (properties, required, $ref parts)", () => {
  const { gs, warnings } = convert({
    $defs: { Named: { type: "object", properties: { name: { type: "string" } }, required: ["name"] } },
    description: "An NPC",
    allOf: [
      { $ref: "#/$defs/Named" },
      { properties: { hp: { type: "integer" }, name: { type: "integer" } }, required: ["hp"] },
      { allOf: [{ properties: { mood: { enum: ["calm"] } } }] },
    ],
  });
  assert.deepEqual(gs, {
    title: "Response",
    description: "An NPC",
    type: "object",
    properties: {
      name: { type: "string" },
      hp: { type: "integer" },
      mood: { type: "string", enum: ["calm"] },
    },
    required: ["name", "hp"],
    "x-order": ["name", "hp", "mood"],
    additionalProperties: false,
  });
  assert.deepEqual(warnings, []);
});

Deno.test("convert: allOf errors carry the part's path", () => {
  throwsSchemaError({ allOf: [{ type: "object" }, 3] }, "expected a schema object, got 3", "#/allOf/1");
  throwsSchemaError({ allOf: [{ $ref: "#/nope" }] }, "unresolvable $ref '#/nope'", "#/allOf/0");
  throwsSchemaError(
    { allOf: [{ $ref: "http://x/y" }] },
    "only local $ref values are supported, got 'http://x/y'",
    "#/allOf/0",
  );
});

Deno.test("convert: allOf that references itself terminates", () => {
  const { gs } = convert({
    $defs: { A: { allOf: [{ $ref: "#/$defs/A" }, { properties: { a: { type: "string" } } }] } },
    $ref: "#/$defs/A",
  });
  assert.deepEqual(gs["x-order"], ["a"]);
});

// ---- $ref ------------------------------------------------------------------------------------------

Deno.test("convert: $ref to $defs/definitions, with JSON pointer unescaping", () => {
  const { gs } = convert({
    type: "object",
    properties: {
      a: { $ref: "#/$defs/Pet", description: "The pet" },
      b: { $ref: "#/definitions/a~1b~0c" },
      c: { $ref: "#/$defs/Pet" },
      d: { $ref: "#/$defs/with%20space" },
    },
    $defs: {
      Pet: { type: "object", description: "A pet", properties: { name: { type: "string" } } },
      "with space": { type: "boolean" },
    },
    definitions: { "a/b~c": { type: "integer", minimum: 1 } },
  });
  const props = gs.properties as JsonObject;
  assert.deepEqual(props.a, { $ref: "#/$defs/Pet", description: "The pet" });
  assert.deepEqual(props.b, { type: "integer", minimum: 1 });
  assert.deepEqual(props.c, { $ref: "#/$defs/Pet", description: "A pet" });
  assert.deepEqual(props.d, { type: "boolean" });
  assert.deepEqual(Object.keys(gs.$defs as JsonObject), ["Pet"]);
});

Deno.test("convert: recursion through named objects (root via #, defs via $defs)", () => {
  const person = convert({
    title: "Person",
    type: "object",
    properties: {
      name: { type: "string" },
      children: { type: "array", items: { $ref: "#" }, maxItems: 3 },
    },
    required: ["name", "children"],
  });
  assert.deepEqual(person.gs, {
    title: "Person",
    type: "object",
    properties: {
      name: { type: "string" },
      children: { type: "array", items: { $ref: "#" }, maxItems: 3 },
    },
    required: ["name", "children"],
    "x-order": ["name", "children"],
    additionalProperties: false,
  });

  const tree = convert({
    $ref: "#/$defs/Node",
    $defs: {
      Node: {
        type: "object",
        properties: { next: { $ref: "#/$defs/Node" }, kids: { items: { $ref: "#" } } },
      },
    },
  });
  assert.equal(tree.gs.title, "Response");
  assert.deepEqual(tree.gs.properties, {
    next: { $ref: "#" },
    kids: { type: "array", items: { $ref: "#" } },
  });
  assert.equal(tree.gs.$defs, undefined);

  const nested = convert({
    type: "object",
    properties: { root: { $ref: "#/$defs/Node" } },
    $defs: { Node: { type: "object", properties: { child: { $ref: "#/$defs/Node" } } } },
  });
  assert.deepEqual((nested.gs.$defs as JsonObject).Node, {
    title: "Node",
    type: "object",
    properties: { child: { $ref: "#/$defs/Node" } },
    required: [],
    "x-order": ["child"],
    additionalProperties: false,
  });
});

Deno.test("convert: recursion through a named union", () => {
  const { gs } = convert({
    type: "object",
    properties: { expr: { $ref: "#/$defs/Expr" } },
    $defs: {
      Expr: {
        anyOf: [
          { type: "number" },
          {
            type: "object",
            properties: {
              op: { enum: ["+", "-"] },
              args: { type: "array", items: { $ref: "#/$defs/Expr" } },
            },
          },
        ],
      },
    },
  });
  const defs = gs.$defs as JsonObject;
  assert.deepEqual(defs.Expr, {
    title: "Expr",
    anyOf: [{ type: "number" }, { $ref: "#/$defs/Expr_option1" }],
  });
  assert.deepEqual((defs.Expr_option1 as JsonObject).properties, {
    op: { type: "string", enum: ["+", "-"] },
    args: { type: "array", items: { $ref: "#/$defs/Expr" } },
  });
});

Deno.test("convert: inlined $ref targets warn with the $ref path", () => {
  const { warnings } = convert({
    type: "object",
    properties: { a: { $ref: "#/$defs/Email" }, b: { $ref: "#/$defs/Email" } },
    $defs: { Email: { type: "string", format: "email" } },
  });
  assert.deepEqual(warnings, ["#/$defs/Email: 'format' is described to the model but not enforced"]);
});

Deno.test("convert: $ref errors", () => {
  throwsSchemaError(
    { type: "object", properties: { a: { $ref: "other.json#/x" } } },
    "only local $ref values are supported, got 'other.json#/x'",
    "#/properties/a",
  );
  throwsSchemaError({ $ref: "#anchor" }, "only local $ref values are supported, got '#anchor'", "#");
  throwsSchemaError({ $ref: 5 }, "only local $ref values are supported, got '5'", "#");
  throwsSchemaError({ $ref: "#/$defs/missing" }, "unresolvable $ref '#/$defs/missing'", "#");
  throwsSchemaError({ $ref: "#/$defs/x/5", $defs: { x: [1] } }, "unresolvable $ref '#/$defs/x/5'", "#");
  throwsSchemaError({ $ref: "#/$defs/x", $defs: { x: 3 } }, "expected a schema object, got 3", "#/$defs/x");
  throwsSchemaError(
    {
      type: "object",
      properties: { a: { $ref: "#/$defs/A" } },
      $defs: { A: { type: "array", items: { $ref: "#/$defs/A" } } },
    },
    "recursive $ref '#/$defs/A' must point to an object or union schema",
    "#/$defs/A",
  );
  throwsSchemaError(
    { $defs: { A: { $ref: "#/$defs/B" }, B: { $ref: "#/$defs/A" } }, $ref: "#/$defs/A" },
    "recursive $ref '#/$defs/A' must point to an object or union schema",
    "#/$defs/A",
  );
  throwsSchemaError(
    { type: "array", items: { $ref: "#" } },
    "recursive $ref '#' must point to an object or union schema",
    "#",
  );
});

Deno.test("convert: array $ref targets and `true` targets", () => {
  const { gs, warnings } = convert({
    type: "object",
    properties: { a: { $ref: "#/$defs/Any" }, b: { $ref: "#/$defs/List/items" } },
    $defs: { Any: true, List: { type: "array", items: { type: "integer" } } },
  });
  assert.deepEqual(gs.properties, { a: { type: "string" }, b: { type: "integer" } });
  assert.deepEqual(warnings, ["#/$defs/Any: unconstrained schema `true` is generated as a string"]);
});

// ---- naming ----------------------------------------------------------------------------------------

Deno.test("convert: type names are sanitised and de-duplicated", () => {
  const { gs } = convert({
    title: "3D Point!",
    type: "object",
    properties: {
      "my-prop": { type: "object", properties: {} },
      my_prop: { type: "object", properties: {} },
      pet: { $ref: "#/$defs/Pet" },
      other: { $ref: "#/$defs/Other" },
    },
    $defs: {
      Pet: { title: "Animal", type: "object", properties: {} },
      Other: { title: "Animal", type: "object", properties: {} },
    },
  });
  assert.equal(gs.title, "_3D_Point_");
  const defs = gs.$defs as JsonObject;
  assert.deepEqual(Object.keys(defs), ["_3D_Point__my_prop", "_3D_Point__my_prop2", "Animal", "Animal2"]);
  assert.deepEqual((gs.properties as JsonObject).other, { $ref: "#/$defs/Animal2" });
  for (const [name, def] of Object.entries(defs)) assert.equal((def as JsonObject).title, name);
});

Deno.test("convert: a def named like the root gets a suffix", () => {
  const { gs } = convert({
    title: "Pet",
    type: "object",
    properties: { friend: { $ref: "#/$defs/Pet" } },
    $defs: { Pet: { type: "object", properties: {} } },
  });
  assert.equal(gs.title, "Pet");
  assert.deepEqual(gs.properties, { friend: { $ref: "#/$defs/Pet2" } });
});

Deno.test("convert: property paths escape ~ and /", () => {
  const { warnings } = convert({ type: "object", properties: { "a/b~c": { type: "string", format: "x" } } });
  assert.deepEqual(warnings, ["#/properties/a~1b~0c: 'format' is described to the model but not enforced"]);
});

Deno.test("convert: the input schema is not modified", () => {
  const schema = {
    type: "object",
    properties: { a: { allOf: [{ properties: { x: { type: "string" } } }] }, b: { enum: [1, 2] } },
    $defs: {},
  } as JsonObject;
  const before = JSON.stringify(schema);
  convert(schema);
  assert.equal(JSON.stringify(schema), before);
});

Deno.test("convert: OpenAPI's 'nullable: true' is not read, and says how to write a value that may be null", () => {
  assert.deepEqual(property({ type: "string", nullable: true }, true).warnings, [
    `#/properties/p: 'nullable' is OpenAPI's keyword, not JSON Schema's: the on-device, scripted and llama ` +
    `models never give null here; write "type": ["string", "null"] for a value that may be null`,
  ]);
  assert.deepEqual(property({ nullable: true, enum: ["a", "b"] }).warnings, [
    `#/properties/p: 'nullable' is OpenAPI's keyword, not JSON Schema's: the on-device, scripted and llama ` +
    `models never give null here; give it a "null" type for a value that may be null`,
  ]);
  assert.deepEqual(property({ type: "string", nullable: false }).warnings, []);
});

Deno.test("convert: an enum of booleans or of numbers is not called mixed-type; the warning says what the answer holds", () => {
  const booleans = property({ enum: [true, false] });
  assert.deepEqual(booleans.node, { type: "string", enum: ["true", "false"] });
  assert.deepEqual(booleans.warnings, [
    `#/properties/p: boolean enum is generated as strings: the on-device and scripted models answer ` +
    `the string "true", not true`,
  ]);
  assert.deepEqual(property({ type: "number", enum: [1.5, 2] }).warnings, [
    `#/properties/p: number enum is generated as strings: the on-device and scripted models answer ` +
    `the string "1.5", not 1.5`,
  ]);
});
