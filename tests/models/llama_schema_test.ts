/**
 * The GGUF grammar of a structured answer and of a tool's arguments: an object the client's JSON Schema
 * leaves open to any members (`{"type": "object"}`, nested anywhere) is generated as any object, while the
 * generation schema the protocol hands out keeps it empty and the answer or the arguments are still checked
 * against the client's schema.
 */
import assert from "node:assert/strict";
import { parseToolDefinitions } from "../../src/agent/tool_definitions.ts";
import type { ResponseSchema, StepTool } from "../../src/models/language_model.ts";
import { responseGrammarSchema } from "../../src/models/llama_schema.ts";
import { chatFunctions } from "../../src/models/llama_tools.ts";
import type { JsonObject } from "../../src/protocol/json.ts";
import { convertSchema } from "../../src/schema/convert.ts";

function responseSchema(jsonSchema: JsonObject, name = "Response"): ResponseSchema {
  return { name, generationSchema: convertSchema(jsonSchema, name).generationSchema, jsonSchema };
}

/** The grammar of `jsonSchema`'s member `key` (a `$ref` into `$defs` followed). */
function memberGrammar(jsonSchema: JsonObject, key: string): JsonObject {
  const grammar = responseGrammarSchema(responseSchema(jsonSchema)) as JsonObject;
  let member = (grammar.properties as JsonObject)[key] as JsonObject;
  // A member that may be null is its type or null: its type.
  const branches = member.oneOf as JsonObject[] | undefined;
  if (branches?.length === 2 && branches[1].type === "null") member = branches[0];
  const ref = member.$ref;
  if (typeof ref !== "string") return member;
  return (grammar.$defs as JsonObject)[ref.slice("#/$defs/".length)] as JsonObject;
}

const withMember = (member: JsonObject): JsonObject => ({
  type: "object",
  properties: { name: { type: "string" }, extra: member },
  required: ["name", "extra"],
});

Deno.test("GGUF grammar: a nested object without properties is any object, not {}", () => {
  const open: JsonObject[] = [
    { type: "object" },
    { type: "object", description: "Anything else." },
    { type: "object", additionalProperties: true },
    { type: "object", properties: {}, required: [] },
    { type: ["object", "null"] },
  ];
  for (const member of open) {
    assert.deepEqual(
      memberGrammar(withMember(member), "extra"),
      {
        type: "object",
        properties: {},
        required: [],
        additionalProperties: true,
        ...(member.description ? { description: member.description } : {}),
      },
      JSON.stringify(member),
    );
  }
  // In an array's items, a union's branch and a $defs type too.
  const deep = responseGrammarSchema(responseSchema({
    type: "object",
    properties: {
      list: { type: "array", items: { type: "object" } },
      either: { anyOf: [{ type: "string" }, { $ref: "#/$defs/Bag" }] },
    },
    $defs: { Bag: { type: "object" } },
  })) as JsonObject;
  const defs = deep.$defs as Record<string, JsonObject>;
  const opened = Object.entries(defs).filter(([, def]) => def.additionalProperties === true).map(([n]) => n);
  assert.equal(opened.length, 2, JSON.stringify(defs));
});

Deno.test("GGUF grammar: objects the schema closes or constrains stay as the generation schema has them", () => {
  const closed: JsonObject[] = [
    { type: "object", additionalProperties: false },
    { type: "object", additionalProperties: { type: "string" } },
    { type: "object", minProperties: 1 },
    { type: "object", patternProperties: { "^x": { type: "string" } } },
    { type: "object", required: ["id"] },
    { type: "object", properties: { id: { type: "string" } } },
  ];
  for (const member of closed) {
    assert.equal(
      memberGrammar(withMember(member), "extra").additionalProperties,
      false,
      JSON.stringify(member),
    );
  }
});

Deno.test("GGUF grammar: the generation schema the protocol hands out is unchanged (the open object stays {})", () => {
  const jsonSchema = withMember({ type: "object" });
  const { generationSchema } = convertSchema(jsonSchema, "Response");
  const defs = generationSchema.$defs as Record<string, JsonObject>;
  assert.deepEqual(Object.values(defs).map((def) => [def.properties, def.additionalProperties]), [[
    {},
    false,
  ]]);
  // A generation schema that is not the conversion of the client's schema (a backend's own) is taken as it is.
  const other = { ...jsonSchema, properties: { name: { type: "integer" }, extra: { type: "object" } } };
  const grammar = responseGrammarSchema({
    name: "Response",
    generationSchema: convertSchema(other, "Response").generationSchema,
    jsonSchema,
  }) as JsonObject;
  const grammarDefs = grammar.$defs as Record<string, JsonObject>;
  assert.deepEqual(Object.values(grammarDefs).map((def) => def.additionalProperties), [false]);
});

/** A client tool as the agent hands it to a backend (parsed from its definition like `session/new`'s tools). */
function clientTool(name: string, parameters: JsonObject): StepTool {
  const [tool] = parseToolDefinitions([{ name, description: "A tool.", parameters }], {
    path: "tools",
    defaultTimeoutMs: null,
  }).tools;
  return {
    name,
    description: tool.description,
    parameters: tool.generationSchema,
    jsonSchema: tool.jsonSchema,
  };
}

Deno.test("GGUF tool call: a nested object without properties in a tool's arguments is any object, not {}", () => {
  const parameters: JsonObject = {
    type: "object",
    properties: { item: { type: "string" }, extra: { type: "object" } },
    required: ["item", "extra"],
  };
  const tool = clientTool("give_item", parameters);
  const params = chatFunctions([tool]).give_item.params as JsonObject;
  const ref = ((params.properties as JsonObject).extra as JsonObject).$ref as string;
  assert.deepEqual((params.$defs as JsonObject)[ref.slice("#/$defs/".length)], {
    type: "object",
    properties: {},
    required: [],
    additionalProperties: true,
  });
  // The tool's generation schema (what the protocol hands out) still holds it empty, and the client's own
  // schema is what the arguments are checked against.
  const defs = tool.parameters.$defs as Record<string, JsonObject>;
  assert.deepEqual(Object.values(defs).map((def) => [def.properties, def.additionalProperties]), [[
    {},
    false,
  ]]);
  assert.equal(tool.jsonSchema, parameters);
  // Closed or constrained objects stay closed; a tool without arguments still has no params.
  const closed = clientTool("close", withMember({ type: "object", additionalProperties: false }));
  const closedParams = chatFunctions([closed]).close.params as JsonObject;
  assert.deepEqual(
    Object.values(closedParams.$defs as JsonObject).map((def) => (def as JsonObject).additionalProperties),
    [
      false,
    ],
  );
  assert.deepEqual(chatFunctions([clientTool("wave", { type: "object" })]), {
    wave: { description: "A tool." },
  });
});

Deno.test("GGUF grammar: non-string enums and consts are generated as the JSON values they are", () => {
  const cases: [JsonObject, JsonObject][] = [
    [{ enum: [1, 2, 3] }, { enum: [1, 2, 3] }],
    // A sparse integer enum: the values, not the range 1…10 the generation schema enforces.
    [{ type: "integer", enum: [1, 5, 10] }, { enum: [1, 5, 10] }],
    [{ enum: [0.5, 1.5] }, { enum: [0.5, 1.5] }],
    [{ enum: [true, false] }, { enum: [true, false] }],
    [{ enum: ["calm", 2, true] }, { enum: ["calm", 2, true] }],
    // `null` makes the member optional (generated as one of the other values).
    [{ enum: [1, 2, null] }, { enum: [1, 2] }],
    [{ const: 7 }, { const: 7 }],
    [{ const: false }, { const: false }],
    [{ const: null }, { const: null }],
    // String enums stay as they are.
    [{ enum: ["a", "b"] }, { enum: ["a", "b"] }],
  ];
  for (const [member, expected] of cases) {
    const grammar = { ...memberGrammar(withMember(member), "extra") };
    delete grammar.description;
    assert.deepEqual(grammar, expected, JSON.stringify(member));
  }
});

Deno.test("GGUF tool call: a tool's non-string enum arguments are generated as numbers and booleans", () => {
  const tool = clientTool("set_level", {
    type: "object",
    properties: { level: { enum: [1, 2, 3] }, loud: { enum: [true, false] }, unit: { const: 3 } },
    required: ["level", "loud", "unit"],
  });
  const params = chatFunctions([tool]).set_level.params as JsonObject;
  const properties = params.properties as Record<string, JsonObject>;
  assert.deepEqual(properties.level.enum, [1, 2, 3]);
  assert.deepEqual(properties.loud.enum, [true, false]);
  assert.equal(properties.unit.const, 3);
  // The generation schema the protocol hands out is unchanged.
  const generated = tool.parameters.properties as Record<string, JsonObject>;
  assert.deepEqual(generated.loud.enum, ["true", "false"]);
});

Deno.test("GGUF grammar: non-string enums in array items, `$ref`s and union branches keep their values", () => {
  const jsonSchema: JsonObject = {
    type: "object",
    properties: {
      a: { type: "array", items: { enum: [1, 2] } },
      b: { $ref: "#/$defs/L" },
      c: { anyOf: [{ enum: [true] }, { type: "string" }] },
    },
    required: ["a", "b", "c"],
    $defs: { L: { enum: [0.5, 2] } },
  };
  const grammar = responseGrammarSchema(responseSchema(jsonSchema)) as JsonObject;
  const properties = grammar.properties as Record<string, JsonObject>;
  assert.deepEqual((properties.a.items as JsonObject).enum, [1, 2]);
  assert.deepEqual(properties.b.enum, [0.5, 2]);
  assert.deepEqual(memberGrammar(jsonSchema, "c").oneOf, [{ const: true }, { type: "string" }]);
});

Deno.test("GGUF grammar: a string's minLength/maxLength and date, time and date-time formats are enforced", () => {
  const cases: [JsonObject, JsonObject][] = [
    [{ type: "string", minLength: 3 }, { type: "string", minLength: 3 }],
    [{ type: "string", maxLength: 20 }, { type: "string", maxLength: 20 }],
    [{ type: "string", minLength: 3, maxLength: 20 }, { type: "string", minLength: 3, maxLength: 20 }],
    [{ type: ["string", "null"], minLength: 2 }, { type: "string", minLength: 2 }],
    [{ type: "string", format: "date" }, { type: "string", format: "date" }],
    [{ type: "string", format: "time" }, { type: "string", format: "time" }],
    [{ type: "string", format: "date-time" }, { type: "string", format: "date-time" }],
    // A format without a type is a string; a format node-llama-cpp does not know would be "" there: left out.
    [{ format: "date" }, { type: "string", format: "date" }],
    [{ type: "string", format: "email" }, { type: "string" }],
    // A format has its own length: the lengths beside it are left to validation.
    [{ type: "string", format: "date", minLength: 10 }, { type: "string", format: "date" }],
    // Lengths llama.cpp's grammar cannot repeat, and bounds no string meets, are left to validation.
    [{ type: "string", maxLength: 5000 }, { type: "string" }],
    [{ type: "string", minLength: 600, maxLength: 700 }, { type: "string" }],
    [{ type: "string", minLength: 3, maxLength: 5000 }, { type: "string", minLength: 3 }],
    [{ type: "string", minLength: 5, maxLength: 2 }, { type: "string" }],
    [{ type: "string", minLength: 2.5 }, { type: "string" }],
    [{ type: "string", minLength: 0 }, { type: "string" }],
  ];
  for (const [member, expected] of cases) {
    const grammar = { ...memberGrammar(withMember(member), "extra") };
    delete grammar.description;
    assert.deepEqual(grammar, expected, JSON.stringify(member));
  }
});

Deno.test("GGUF grammar: string limits hold in array items, `$ref`s, union branches and tool arguments", () => {
  const name = { type: "string", minLength: 3, maxLength: 12 };
  const jsonSchema: JsonObject = {
    type: "object",
    $defs: { Day: { type: "string", format: "date" } },
    properties: {
      names: { type: "array", items: name },
      day: { $ref: "#/$defs/Day" },
      either: { anyOf: [{ type: "string", format: "time" }, { type: "integer" }] },
    },
    required: ["names", "day", "either"],
  };
  const text = JSON.stringify(responseGrammarSchema(responseSchema(jsonSchema)));
  assert.match(text, /"items":\{"type":"string","minLength":3,"maxLength":12/);
  assert.match(text, /"day":\{"type":"string","format":"date"/);
  assert.match(text, /"oneOf":\[\{"type":"string","format":"time"/);
  // The generation schema the protocol hands out only describes them.
  assert.doesNotMatch(JSON.stringify(responseSchema(jsonSchema).generationSchema), /"format":|"minLength":/);

  const tool = clientTool("name_npc", {
    type: "object",
    properties: { name, born: { type: "string", format: "date" } },
    required: ["name", "born"],
  });
  const params = chatFunctions([tool]).name_npc.params as JsonObject;
  const properties = params.properties as Record<string, JsonObject>;
  assert.deepEqual([properties.name.minLength, properties.name.maxLength], [3, 12]);
  assert.equal(properties.born.format, "date");
});
