import assert from "node:assert/strict";
import type { JsonObject, JsonValue } from "../../src/protocol/json.ts";
import { compileValidator } from "../../src/schema/validate.ts";
import { convertSchema } from "../../src/schema/convert.ts";

Deno.test("validate: valid values give null", () => {
  const validate = compileValidator({
    type: "object",
    properties: { gate: { type: "string" }, count: { type: "integer", minimum: 0 } },
    required: ["gate"],
  });
  assert.equal(validate({ gate: "north" }), null);
  assert.equal(validate({ gate: "north", count: 3 }), null);
});

Deno.test("validate: short messages with the schema location", () => {
  const validate = compileValidator({
    type: "object",
    properties: {
      x: { type: "integer" },
      list: { type: "array", items: { type: "integer" } },
      mood: { enum: ["calm", "angry"] },
      inner: { type: "object", properties: { y: { type: "string" } }, required: ["y"] },
    },
    required: ["x"],
    additionalProperties: false,
  });
  assert.equal(validate({ x: 1.5 }), "#/properties/x: must be integer");
  assert.equal(validate({}), "#: must have required property 'x'");
  assert.equal(validate({ x: 1, list: [1, "a"] }), "#/properties/list/items: must be integer (at /list/1)");
  assert.equal(
    validate({ x: 1, mood: "sad" }),
    '#/properties/mood: must be equal to one of the allowed values: "calm", "angry"',
  );
  assert.equal(validate({ x: 1, inner: {} }), "#/properties/inner: must have required property 'y'");
  assert.equal(validate({ x: 1, extra: true }), "#: must NOT have additional properties 'extra'");
  assert.equal(validate("text"), "#: must be object");
});

Deno.test("validate: $defs, definitions and recursive refs", () => {
  const validate = compileValidator({
    $defs: { Name: { type: "string", minLength: 1 } },
    definitions: {
      Node: { type: "object", properties: { next: { $ref: "#/definitions/Node" }, v: { type: "integer" } } },
    },
    type: "object",
    properties: { name: { $ref: "#/$defs/Name" }, list: { $ref: "#/definitions/Node" } },
  });
  assert.equal(validate({ name: "a", list: { v: 1, next: { v: 2 } } }), null);
  assert.equal(validate({ name: "" }), "#/$defs/Name: must NOT have fewer than 1 characters (at /name)");
  assert.match(validate({ list: { next: { v: "x" } } })!, /must be integer \(at \/list\/next\/v\)$/);
});

Deno.test("validate: a draft 2020-12 $schema does not disable validation", () => {
  const validate = compileValidator({
    $schema: "https://json-schema.org/draft/2020-12/schema",
    type: "object",
    properties: { a: { type: "boolean" } },
  });
  assert.equal(validate({ a: "no" }), "#/properties/a: must be boolean");
});

Deno.test("validate: compiled validators are cached per schema object and per schema text", () => {
  const schema: JsonObject = { type: "string" };
  assert.equal(compileValidator(schema), compileValidator(schema));
  // An equal schema built anew (a decision's, a turn's) compiles once.
  assert.equal(compileValidator(schema), compileValidator({ type: "string" }));
  assert.notEqual(compileValidator(schema), compileValidator({ type: "string", minLength: 1 }));
  // The same $id in different schemas does not clash.
  const a = compileValidator({ $id: "https://example.com/s", type: "string" });
  const b = compileValidator({ $id: "https://example.com/s", type: "integer" });
  assert.equal(a("x"), null);
  assert.equal(b(1), null);
  assert.equal(b("x"), "#: must be integer");
});

Deno.test("validate: schemas ajv cannot compile accept everything (and never throw)", () => {
  const broken: JsonValue[] = [
    { type: "foo" },
    { pattern: "(" },
    { $ref: "https://example.com/remote.json" },
    { $ref: "#/$defs/missing" },
    { type: "object", properties: { a: { $ref: "#/nowhere" } } },
  ];
  for (const schema of broken) {
    const validate = compileValidator(schema as JsonObject);
    assert.equal(validate({ anything: [1, 2, 3] }), null);
    assert.equal(validate("x"), null);
  }
});

Deno.test("validate: __proto__ keys are data, and their subschema is enforced", () => {
  const validate = compileValidator(
    JSON.parse('{"type":"object","properties":{"__proto__":{"type":"integer"}},"required":["__proto__"]}'),
  );
  assert.equal(validate(JSON.parse('{"__proto__": 1}')), null);
  assert.equal(validate({}), "#: must have required property '__proto__'");
  assert.equal(validate(JSON.parse('{"__proto__": "x"}')), "#/properties/__proto__: must be integer");
  assert.equal(({} as Record<string, unknown>).type, undefined);
  assert.equal(({} as Record<string, unknown>).properties, undefined);
});

Deno.test("validate: a schema too deep to compile accepts everything; deep values do not crash", () => {
  let deep: JsonObject = { type: "string" };
  for (let i = 0; i < 10_000; i++) deep = { type: "array", items: deep };
  const validateDeep = compileValidator(deep);
  // ajv overflows the stack compiling it: the documented fallback (accept everything), never a throw.
  for (const value of [[], 1, "x", [[1]]]) assert.equal(validateDeep(value), null, JSON.stringify(value));
  // The same shape at a depth ajv compiles is enforced.
  let shallow: JsonObject = { type: "string" };
  for (let i = 0; i < 50; i++) shallow = { type: "array", items: shallow };
  assert.equal(compileValidator(shallow)(1), "#: must be array");
});

Deno.test("validate: a schema that refers to itself ($ref '#') is enforced at every depth", () => {
  const recursive = compileValidator({
    anyOf: [{ type: "integer" }, { type: "array", items: { $ref: "#" } }],
  });
  assert.equal(recursive([[1, [2]]]), null);
  assert.equal(recursive("x"), "#/anyOf/0: must be integer");
  assert.equal(recursive([[1, ["a"]]]), "#/anyOf/0: must be integer");
  let value: JsonValue = 1;
  for (let i = 0; i < 1000; i++) value = [value];
  assert.equal(recursive(value), null);
  // A value too deep to walk is reported, not thrown.
  for (let i = 0; i < 100_000; i++) value = [value];
  assert.equal(recursive(value), "#: the value could not be validated (Maximum call stack size exceeded)");
});

Deno.test("validate: own __proto__ keys are checked like any other property", () => {
  // Parsed, so that `__proto__` is an own key (as it is when it arrives over the wire).
  const validate = compileValidator(JSON.parse(
    '{"type":"object","properties":{"__proto__":{"type":"object","properties":{"a":{"type":"string"}},' +
      '"additionalProperties":false},"b":{"type":"string"}},"required":["__proto__"],"additionalProperties":false}',
  ));
  assert.equal(validate(JSON.parse('{"__proto__":{"a":"x"},"b":"y"}')), null);
  assert.equal(
    validate(JSON.parse('{"__proto__":{"a":1}}')),
    "#/properties/__proto__/properties/a: must be string",
  );
  assert.equal(validate({ b: "y" }), "#: must have required property '__proto__'");
  assert.equal(validate(JSON.parse('{"__proto__":{},"c":1}')), "#: must NOT have additional properties 'c'");
  assert.equal(({} as Record<string, unknown>).a, undefined);
});

Deno.test("validate: schemas that differ only in annotations share one compiled validator", () => {
  const reply = (name: string): JsonObject => ({
    type: "object",
    title: `${name}'s reply`,
    additionalProperties: false,
    properties: {
      emotion: { type: "string", enum: ["calm", "angry"], description: `How ${name} feels.` },
      line: { type: "string", description: `What ${name} says.`, examples: ["Hello."] },
      options: { type: "array", items: { type: "string", $comment: name }, maxItems: 2 },
    },
    required: ["emotion", "line"],
  });
  const gorm = compileValidator(reply("Gorm"));
  const mira = compileValidator(reply("Mira"));
  assert.equal(gorm, mira, "one validator for both NPCs' reply schemas");
  assert.equal(gorm({ emotion: "calm", line: "Hm." }), null);
  assert.equal(
    mira({ emotion: "sad", line: "Hm." }),
    '#/properties/emotion: must be equal to one of the allowed values: "calm", "angry"',
  );
  assert.equal(
    mira({ emotion: "calm", line: "Hm.", options: ["a", "b", "c"] }),
    "#/properties/options: must NOT have more than 2 items",
  );
  // A schema whose constraints differ gets its own.
  assert.notEqual(compileValidator({ ...reply("Gorm"), required: ["emotion"] }), gorm);
});

Deno.test("validate: only annotation keywords go; properties, enum and const values named like them stay", () => {
  const validate = compileValidator({
    type: "object",
    properties: {
      description: { type: "string", minLength: 2 },
      title: { const: { description: "exact" } },
      kind: { enum: ["description", "title"] },
    },
    required: ["description", "title"],
    additionalProperties: false,
  });
  assert.equal(validate({ description: "ok", title: { description: "exact" }, kind: "title" }), null);
  assert.equal(validate({ title: { description: "exact" } }), "#: must have required property 'description'");
  assert.equal(
    validate({ description: "x", title: { description: "exact" } }),
    "#/properties/description: must NOT have fewer than 2 characters",
  );
  assert.equal(validate({ description: "ok", title: {} }), "#/properties/title: must be equal to constant");
  assert.equal(
    validate({ description: "ok", title: { description: "exact" }, kind: "other" }),
    '#/properties/kind: must be equal to one of the allowed values: "description", "title"',
  );
});

Deno.test("validate: a generation schema's failures are named by the value's place, not by $defs the designer never wrote", () => {
  const generation = convertSchema({
    type: "object",
    properties: {
      reward: { title: "reward", type: "object", properties: { amount: { type: "integer", maximum: 500 } } },
      bag: { type: "object" },
      loot: { type: "array", items: { type: "object", properties: { name: { type: "string" } } } },
    },
  }, "Content").generationSchema;
  const validate = compileValidator(generation, { locateByValue: true });
  assert.equal(
    validate({ reward: { amount: 9999 } }),
    "#/properties/reward/properties/amount: must be <= 500",
  );
  assert.equal(
    validate({ bag: { gold: 3 } }),
    "#/properties/bag: must NOT have additional properties 'gold'",
  );
  assert.equal(validate({ loot: [{ name: 5 }] }), "#/properties/loot/items/properties/name: must be string");
  assert.equal(validate({ extra: 1 }), "#: must NOT have additional properties 'extra'");
  // The schema's own paths otherwise (a designer's $defs are theirs).
  assert.equal(
    compileValidator(generation)({ reward: { amount: 9999 } }),
    "#/$defs/Content_reward/properties/amount: must be <= 500 (at /reward/amount)",
  );
});
