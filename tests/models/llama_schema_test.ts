/**
 * The GGUF grammar of a structured answer: an object the client's JSON Schema leaves open to any members
 * (`{"type": "object"}`, nested anywhere) is generated as any object, while the generation schema the
 * protocol hands out keeps it empty and the answer is still checked against the client's schema.
 */
import assert from "node:assert/strict";
import type { ResponseSchema } from "../../src/models/language_model.ts";
import { responseGrammarSchema } from "../../src/models/llama_schema.ts";
import type { JsonObject } from "../../src/protocol/json.ts";
import { convertSchema } from "../../src/schema/convert.ts";

function responseSchema(jsonSchema: JsonObject, name = "Response"): ResponseSchema {
  return { name, generationSchema: convertSchema(jsonSchema, name).generationSchema, jsonSchema };
}

/** The grammar of `jsonSchema`'s member `key` (a `$ref` into `$defs` followed). */
function memberGrammar(jsonSchema: JsonObject, key: string): JsonObject {
  const grammar = responseGrammarSchema(responseSchema(jsonSchema)) as JsonObject;
  const member = (grammar.properties as JsonObject)[key] as JsonObject;
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
