/**
 * The GGUF grammar of a structured answer where node-llama-cpp's JSON-schema grammar falls short: numeric
 * bounds of any size, and `const`/`enum` values that are objects or arrays. Each such node becomes a
 * placeholder string in the schema node-llama-cpp compiles, and the placeholder's literal in its GBNF text is
 * replaced by a rule of our own (read here as a RegExp; no model needed).
 */
import assert from "node:assert/strict";
import type { ResponseSchema, StepTool } from "../../src/models/language_model.ts";
import { grammarWithRules, placeholderGbnf } from "../../src/models/llama_grammar.ts";
import { responseGrammarPlan, toolGrammarSchema } from "../../src/models/llama_schema.ts";
import type { JsonObject } from "../../src/protocol/json.ts";
import { convertSchema } from "../../src/schema/convert.ts";
import { gbnfToRegExp } from "../helpers/gbnf_regexp.ts";

function responseSchema(jsonSchema: JsonObject, name = "Response"): ResponseSchema {
  return { name, generationSchema: convertSchema(jsonSchema, name).generationSchema, jsonSchema };
}

const LOOT: JsonObject = {
  type: "object",
  properties: {
    gold: { type: "integer", minimum: 0 },
    price: { type: "integer", minimum: 1, maximum: 1000 },
    confidence: { type: "number", minimum: 0, maximum: 1 },
    dice: { type: "integer", minimum: 1, maximum: 6 },
    loot: { const: { item: "sword", qty: 1 } },
    tier: { enum: [[1, 2], [3], "none"] },
    name: { type: "string" },
    huge: { type: "number", minimum: 1e300 },
  },
  required: ["gold", "price", "confidence", "dice", "loot", "tier", "name", "huge"],
};

/** The rule that stands for member `key` of the plan's root object, as a RegExp. */
function memberRule(plan: ReturnType<typeof responseGrammarPlan>, key: string): RegExp {
  const member = (plan.schema.properties as JsonObject)[key] as JsonObject;
  assert.equal(typeof member.const, "string", `${key}: ${JSON.stringify(member)}`);
  const rule = plan.rules.get(member.const as string);
  assert.ok(rule !== undefined, `no rule for ${key}`);
  return gbnfToRegExp(rule);
}

Deno.test("GGUF grammar plan: numeric bounds of any size are rules of their own", () => {
  const plan = responseGrammarPlan(responseSchema(LOOT));
  const gold = memberRule(plan, "gold");
  assert.ok(gold.test("0") && gold.test("1500") && !gold.test("-3"));
  const price = memberRule(plan, "price");
  assert.ok(
    price.test("1") && price.test("1000") && !price.test("1500") && !price.test("0") && !price.test("-3"),
  );
  const confidence = memberRule(plan, "confidence");
  assert.ok(
    confidence.test("0.85") && confidence.test("1") && !confidence.test("1.5") && !confidence.test("-0.1"),
  );
  const dice = memberRule(plan, "dice");
  assert.ok(dice.test("6") && !dice.test("7"));
  // A bound its grammar cannot write (no number of 16 digits reaches 1e300): a plain number, validated after.
  assert.deepEqual((plan.schema.properties as JsonObject).huge, { type: "number" });
  assert.deepEqual((plan.schema.properties as JsonObject).name, { type: "string" });
});

Deno.test("GGUF grammar plan: exclusive bounds, in draft 6's form and draft 4's, stay exclusive", () => {
  const jsonSchema: JsonObject = {
    type: "object",
    properties: {
      above: { type: "number", exclusiveMinimum: 0, exclusiveMaximum: 1 },
      draft4: { type: "number", minimum: 0, exclusiveMinimum: true, maximum: 1 },
      count: { type: "integer", minimum: 0, exclusiveMinimum: true, maximum: 10, exclusiveMaximum: true },
      // The inclusive bound is the tighter one: inclusive.
      mixed: { type: "number", minimum: 0.5, exclusiveMinimum: 0, maximum: 1 },
    },
    required: ["above", "draft4", "count", "mixed"],
  };
  const plan = responseGrammarPlan(responseSchema(jsonSchema));
  const above = memberRule(plan, "above");
  assert.ok(above.test("0.5") && !above.test("0") && !above.test("1") && !above.test("0.000"));
  const draft4 = memberRule(plan, "draft4");
  assert.ok(draft4.test("0.5") && draft4.test("1") && !draft4.test("0"));
  const count = memberRule(plan, "count");
  assert.ok(count.test("1") && count.test("9") && !count.test("0") && !count.test("10"));
  const mixed = memberRule(plan, "mixed");
  assert.ok(mixed.test("0.5") && !mixed.test("0.4"));
});

Deno.test("GGUF grammar plan: a date or date-time is a real calendar date", () => {
  const jsonSchema: JsonObject = {
    type: "object",
    properties: {
      when: { type: "string", format: "date" },
      stamp: { type: "string", format: "date-time" },
      at: { type: "string", format: "time" },
    },
    required: ["when", "stamp", "at"],
  };
  const plan = responseGrammarPlan(responseSchema(jsonSchema));
  const when = memberRule(plan, "when");
  assert.ok(when.test('"2024-02-29"') && !when.test('"2024-02-30"') && !when.test('"2023-02-29"'));
  const stamp = memberRule(plan, "stamp");
  assert.ok(stamp.test('"2024-04-30T10:00:00Z"') && !stamp.test('"2024-04-31T10:00:00Z"'));
  // node-llama-cpp's own time rule is right as it is.
  const at = (plan.schema.properties as JsonObject).at as JsonObject;
  assert.deepEqual([at.type, at.format], ["string", "time"]);
});

Deno.test("GGUF grammar plan: object and array consts and enum members are written as JSON", () => {
  const plan = responseGrammarPlan(responseSchema(LOOT));
  const loot = memberRule(plan, "loot");
  assert.ok(loot.test('{"item":"sword","qty":1}') && !loot.test('"{\\"item\\":\\"sword\\",\\"qty\\":1}"'));
  const tier = memberRule(plan, "tier");
  assert.ok(tier.test("[1,2]") && tier.test("[3]") && tier.test('"none"') && !tier.test('"[3]"'));
});

Deno.test("GGUF grammar plan: the fallback schema is node-llama-cpp's own, without placeholders", () => {
  const plan = responseGrammarPlan(responseSchema(LOOT));
  const plain = plan.plain.properties as JsonObject;
  assert.deepEqual(plain.price, { type: "integer" });
  assert.deepEqual(plain.dice, { enum: [1, 2, 3, 4, 5, 6] });
  assert.ok(!JSON.stringify(plan.plain).includes("oam-rule"));
  // Nothing to replace: no rules, the same schema.
  const simple = responseGrammarPlan(
    responseSchema({ type: "object", properties: { n: { type: "string" } } }),
  );
  assert.equal(simple.rules.size, 0);
  assert.deepEqual(simple.schema, simple.plain);
});

Deno.test("GGUF grammar plan: a placeholder never equals a value of the client's schema", () => {
  const jsonSchema: JsonObject = {
    type: "object",
    properties: { word: { enum: ["oam-rule-0", "oam-rule-1"] }, n: { type: "integer", minimum: 0 } },
    required: ["word", "n"],
  };
  const plan = responseGrammarPlan(responseSchema(jsonSchema));
  const [placeholder] = plan.rules.keys();
  assert.ok(!["oam-rule-0", "oam-rule-1"].includes(placeholder), placeholder);
});

Deno.test("GGUF grammar plan: the placeholders' literals in node-llama-cpp's GBNF text become the rules", () => {
  const plan = responseGrammarPlan(responseSchema(LOOT));
  const placeholders = [...plan.rules.keys()];
  // node-llama-cpp writes a string const as a rule of its own: `val0 ::= "\"…\""`.
  const text = [
    `root ::= "{" ${placeholders.map((_, i) => `val${i}`).join(' "," ')} "}" "\\n\\n\\n\\n" [\\n]*`,
    ...placeholders.map((p, i) => `val${i} ::= ${placeholderGbnf(p)}`),
  ].join("\n");
  const patched = grammarWithRules(text, plan.rules);
  assert.ok(patched !== undefined);
  for (const p of placeholders) assert.ok(!patched.includes(p), patched);
  for (const rule of plan.rules.values()) assert.ok(patched.includes(rule));
  // A placeholder missing from the text (a node the grammar never reaches) is left out; none at all: no
  // grammar (the caller falls back to the plain one).
  const partial = grammarWithRules(text.split("\n").slice(0, 2).join("\n"), plan.rules);
  assert.ok(partial !== undefined && partial.includes(plan.rules.get(placeholders[0])!));
  assert.equal(grammarWithRules(text.split("\n")[0], plan.rules), undefined);
});

Deno.test("GGUF grammar plan: a tool's arguments keep node-llama-cpp's own schema", () => {
  const tool: StepTool = {
    name: "sell",
    description: "",
    parameters: convertSchema(LOOT, "SellArguments").generationSchema,
    jsonSchema: LOOT,
  };
  const grammar = toolGrammarSchema(tool) as JsonObject;
  assert.ok(!JSON.stringify(grammar).includes("oam-rule"));
  assert.deepEqual((grammar.properties as JsonObject).dice, { enum: [1, 2, 3, 4, 5, 6] });
});

Deno.test("GGUF grammar: a nullable member or item may be null, in an answer and in a tool's arguments", () => {
  const jsonSchema: JsonObject = {
    type: "object",
    properties: {
      target: { type: ["string", "null"] },
      level: { anyOf: [{ type: "integer", minimum: 1, maximum: 3 }, { type: "null" }] },
      mood: { enum: ["calm", "angry", null] },
      tags: { type: "array", items: { type: ["string", "null"] } },
      name: { type: "string" },
    },
    required: ["target", "level", "mood", "tags", "name"],
  };
  const plan = responseGrammarPlan(responseSchema(jsonSchema));
  const props = plan.schema.properties as Record<string, JsonObject>;
  const nullBranch = (node: JsonObject) => (node.oneOf as JsonObject[] | undefined)?.at(-1);
  for (const key of ["target", "level", "mood"]) {
    assert.deepEqual(nullBranch(props[key]), { type: "null" }, key);
  }
  assert.deepEqual(nullBranch(props.tags.items as JsonObject), { type: "null" });
  assert.equal(props.name.oneOf, undefined);
  const tool: StepTool = {
    name: "aim",
    description: "",
    parameters: convertSchema(jsonSchema, "AimArguments").generationSchema,
    jsonSchema,
  };
  const params = toolGrammarSchema(tool) as JsonObject;
  assert.deepEqual(nullBranch((params.properties as Record<string, JsonObject>).target), { type: "null" });
});

Deno.test("GGUF grammar plan: a uuid or ipv4 in an answer is a rule of its own; in tool arguments a plain string", () => {
  const jsonSchema: JsonObject = {
    type: "object",
    properties: { id: { type: "string", format: "uuid" }, host: { type: "string", format: "ipv4" } },
    required: ["id", "host"],
  };
  const plan = responseGrammarPlan(responseSchema(jsonSchema));
  const id = memberRule(plan, "id");
  assert.ok(id.test('"2eb8aa08-aa98-11ea-b4aa-73b441d16380"') && !id.test('"2eb8aa08"'));
  const host = memberRule(plan, "host");
  assert.ok(host.test('"192.168.0.1"') && !host.test('"192.168.0.256"') && !host.test('"localhost"'));
  // node-llama-cpp's function calling knows no such format: the arguments' grammar takes any string.
  const { generationSchema } = convertSchema(jsonSchema, "MeetArguments");
  const tool = toolGrammarSchema({ name: "meet", description: "", parameters: generationSchema, jsonSchema });
  const properties = tool.properties as JsonObject;
  for (const member of [properties.id, properties.host] as JsonObject[]) {
    assert.deepEqual([member.type, member.format, member.const], ["string", undefined, undefined]);
  }
});
