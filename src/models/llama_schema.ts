/**
 * Generation schema (the bridge's normalised JSON Schema dialect, see `src/schema/convert.ts`) → the JSON
 * Schema subset node-llama-cpp compiles into a grammar (`GbnfJsonSchema`).
 *
 * What the grammar enforces: object shapes with properties in generation order, every one present
 * (node-llama-cpp's grammar generates each listed property, `required` or not: an optional member is filled,
 * which the client's schema allows; one the client's schema lets be null may be null), no other properties
 * (any, when `additionalProperties` is `true`; an object of an answer or of a tool's arguments that the
 * client's JSON Schema leaves open, `{"type": "object"}`, takes any members),
 * enums and consts (of strings, and — when the generation schema is the conversion of the client's schema —
 * of the client's numbers and booleans too: FoundationModels' generation schema holds those as strings, a
 * range or a described type, the grammar generates the values themselves), unions, arrays with item counts,
 * integer vs number, booleans, named and recursive types, and — when the generation schema is the conversion
 * of the client's schema, which only describes them — a string's `minLength`/`maxLength` (up to 500) or its
 * `date`, `time` or `date-time` format (the rules are in `src/schema/grammar_rules.ts`).
 *
 * A structured answer's grammar ({@link responseGrammarPlan}) enforces besides what node-llama-cpp's grammar
 * cannot express, as rules of our own put in its grammar text (`llama_grammar.ts`): `integer` and `number`
 * bounds of any size the 16 integer digits of its numbers can write, one-sided or exclusive ones too
 * (`src/schema/grammar_numbers.ts`), `const`/`enum` values that are objects or arrays (as their JSON text),
 * dates the calendar has (`src/schema/grammar_dates.ts`), and the `uuid` and `ipv4` formats
 * (`src/schema/grammar_names.ts`). A tool's arguments get node-llama-cpp's grammar only
 * (its function calling builds the grammar from the schema): there an integer range of up to 257 values is
 * enforced as the list of its values, and other numeric bounds are not. The backend validates every answer and
 * every tool call's arguments against the client's JSON Schema afterwards.
 * @module
 */
import { compactJson, isJsonObject, type JsonObject, type JsonValue, ownValue } from "../protocol/json.ts";
import { convertSchemaWithOpenObjects } from "../schema/convert.ts";
import { enumeratesRange, GRAMMAR_FORMATS, type GrammarStringLimits } from "../schema/grammar_rules.ts";
import {
  type ExclusiveBounds,
  gbnfLiteral,
  integerRangeGbnf,
  numberRangeGbnf,
} from "../schema/grammar_numbers.ts";
import { dateFormatGbnf } from "../schema/grammar_dates.ts";
import { nameFormatGbnf } from "../schema/grammar_names.ts";
import type { GbnfSchema } from "./llama_api.ts";
import type { ResponseSchema, StepTool } from "./language_model.ts";

/** Name of the `$defs` entry that stands for the root when the schema refers to itself (`{"$ref": "#"}`). */
const ROOT_DEF = "Root__";
const DEF_PREFIX = "#/$defs/";

function withDescription(out: Record<string, unknown>, schema: JsonObject): GbnfSchema {
  const description = ownValue(schema, "description");
  if (typeof description === "string" && description !== "") out.description = description;
  return out;
}

/** What one grammar conversion carries along. */
interface Context {
  /** Set when the schema refers to its root. */
  usesRoot: boolean;
  /** Object types generated as any object (see {@link responseGrammarSchema}). */
  openObjects: ReadonlySet<string>;
  /** Nodes generated as the client's enum or const values (see {@link responseGrammarSchema}). */
  literals: ReadonlyMap<JsonObject, readonly JsonValue[]>;
  /** String nodes generated with the client's length bounds or format (see {@link responseGrammarSchema}). */
  strings: ReadonlyMap<JsonObject, GrammarStringLimits>;
  /** Number nodes whose bounds are exclusive (see {@link responseGrammarPlan}). */
  exclusive: ReadonlyMap<JsonObject, ExclusiveBounds>;
  /** Nodes whose value may be null (see {@link grammarSchema}). */
  nullable: ReadonlySet<JsonObject>;
  /** Rules of our own by placeholder, when the grammar is built from text (see {@link responseGrammarPlan}). */
  rules?: Placeholders;
}

/** The placeholder `const`s of a grammar schema and the GBNF rule each stands for. */
class Placeholders {
  readonly rules = new Map<string, string>();
  readonly #prefix: string;

  /** `taken`: the schemas' text, which no placeholder may occur in. */
  constructor(taken: string) {
    let prefix = "oam-rule-";
    while (taken.includes(prefix)) prefix = `oam-${prefix}`;
    this.#prefix = prefix;
  }

  /** A placeholder `const` for `rule`. */
  add(rule: string): GbnfSchema {
    const placeholder = `${this.#prefix}${this.rules.size}`;
    this.rules.set(placeholder, rule);
    return { const: placeholder };
  }
}

/** A value node-llama-cpp's grammar writes as a `const` or `enum` member (not an object or array). */
function isPrimitive(value: JsonValue): boolean {
  return value === null || typeof value !== "object";
}

/** A numeric node's grammar: its range as a rule of our own when there is one and it can be written. */
function numeric(schema: JsonObject, type: "integer" | "number", context: Context): GbnfSchema | undefined {
  const min = ownValue(schema, "minimum");
  const max = ownValue(schema, "maximum");
  const low = typeof min === "number" ? min : undefined;
  const high = typeof max === "number" ? max : undefined;
  if (low === undefined && high === undefined) return undefined;
  if (context.rules !== undefined) {
    const rule = type === "integer"
      ? integerRangeGbnf(low, high)
      : numberRangeGbnf({ low, high, exclusive: context.exclusive.get(schema) });
    if (rule !== undefined) return withDescription({ ...context.rules.add(rule) }, schema);
    return undefined;
  }
  // node-llama-cpp's own grammar: a small closed integer range as the list of its values.
  if (type === "integer" && low !== undefined && high !== undefined && enumeratesRange(low, high)) {
    const values: number[] = [];
    for (let n = Math.ceil(low); n <= high; n++) values.push(n);
    return withDescription({ enum: values }, schema);
  }
  return undefined;
}

/** What a backend's grammar may generate beyond its generation schema (see {@link clientConversion}). */
interface Widening {
  /** The generation schema to convert (a conversion of the client's schema equal to the one given). */
  generationSchema: JsonObject;
  openObjects: ReadonlySet<string>;
  literals: ReadonlyMap<JsonObject, readonly JsonValue[]>;
  strings: ReadonlyMap<JsonObject, GrammarStringLimits>;
  exclusive: ReadonlyMap<JsonObject, ExclusiveBounds>;
  nullable: ReadonlySet<JsonObject>;
}

function convert(schema: JsonValue, context: Context): GbnfSchema {
  const node = convertNode(schema, context);
  // A member or item the client's schema lets be null: its type or null.
  return isJsonObject(schema) && context.nullable.has(schema) ? { oneOf: [node, { type: "null" }] } : node;
}

function convertNode(schema: JsonValue, context: Context): GbnfSchema {
  if (!isJsonObject(schema)) return {};
  const literal = context.literals.get(schema);
  if (literal !== undefined) {
    const converted = convertLiteral(schema, literal, context);
    if (converted !== undefined) return converted;
  }
  const ref = ownValue(schema, "$ref");
  if (typeof ref === "string") {
    if (ref === "#") {
      context.usesRoot = true;
      return { $ref: `${DEF_PREFIX}${ROOT_DEF}` };
    }
    return { $ref: ref };
  }
  const union = ownValue(schema, "anyOf") ?? ownValue(schema, "oneOf");
  if (Array.isArray(union)) {
    return withDescription({ oneOf: union.map((branch) => convert(branch, context)) }, schema);
  }
  const values = ownValue(schema, "enum");
  if (Array.isArray(values)) return withDescription({ enum: values }, schema);
  if (Object.hasOwn(schema, "const")) return withDescription({ const: schema.const }, schema);
  const type = ownValue(schema, "type");
  switch (type) {
    case "object":
      return convertObject(schema, context);
    case "array":
      return convertArray(schema, context);
    case "integer":
    case "number":
      return numeric(schema, type, context) ?? withDescription({ type }, schema);
    case "string":
      return convertString(schema, context);
    case "boolean":
    case "null":
      return withDescription({ type }, schema);
    default:
      // No type: any JSON value.
      return withDescription({ type: ["string", "number", "boolean", "null"] }, schema);
  }
}

/** A node generated as one of the client's values; undefined when the grammar cannot write them. */
function convertLiteral(
  schema: JsonObject,
  literal: readonly JsonValue[],
  context: Context,
): GbnfSchema | undefined {
  if (literal.every(isPrimitive)) {
    return withDescription(literal.length === 1 ? { const: literal[0] } : { enum: [...literal] }, schema);
  }
  if (context.rules === undefined) return undefined;
  // Objects and arrays among the values: each written as its JSON text.
  const rule = [...new Set(literal.map((value) => gbnfLiteral(compactJson(value))))].join(" | ");
  return withDescription({ ...context.rules.add(rule) }, schema);
}

/** An object node: its members in `x-order`, no others (unless the schema or `openObjects` allows them). */
function convertObject(schema: JsonObject, context: Context): GbnfSchema {
  const properties = ownValue(schema, "properties");
  const props = isJsonObject(properties) ? properties : {};
  const order = ownValue(schema, "x-order");
  const names = Array.isArray(order)
    ? order.filter((n): n is string => typeof n === "string" && Object.hasOwn(props, n))
    : Object.keys(props);
  const title = ownValue(schema, "title");
  if (names.length === 0 && typeof title === "string" && context.openObjects.has(title)) {
    return withDescription(
      { type: "object", properties: {}, required: [], additionalProperties: true },
      schema,
    );
  }
  const out: Record<string, unknown> = {};
  for (const name of names) out[name] = convert(props[name], context);
  const required = ownValue(schema, "required");
  return withDescription({
    type: "object",
    properties: out,
    required: Array.isArray(required) ? required.filter((n) => typeof n === "string" && n in out) : names,
    // Converted client schemas never allow other members; `oam serve`'s json_object schema does.
    additionalProperties: ownValue(schema, "additionalProperties") === true,
  }, schema);
}

/** An array node: its items and length bounds. */
function convertArray(schema: JsonObject, context: Context): GbnfSchema {
  const out: Record<string, unknown> = { type: "array" };
  const items = ownValue(schema, "items");
  if (items !== undefined) out.items = convert(items, context);
  const min = ownValue(schema, "minItems");
  const max = ownValue(schema, "maxItems");
  if (typeof min === "number") out.minItems = min;
  if (typeof max === "number") out.maxItems = max;
  return withDescription(out, schema);
}

/** A string node: its length limits or format, or a rule of its own for a format the grammar lacks. */
function convertString(schema: JsonObject, context: Context): GbnfSchema {
  const type = "string";
  const limits = context.strings.get(schema);
  // A date as the calendar has them (node-llama-cpp's rule takes 2024-02-30), a uuid or ipv4 address.
  const format = limits?.format;
  const rule = format === undefined ? undefined : dateFormatGbnf(format) ?? nameFormatGbnf(format);
  if (rule !== undefined && context.rules !== undefined) {
    return withDescription({ ...context.rules.add(rule) }, schema);
  }
  // node-llama-cpp's grammar knows no uuid or ipv4 format (a tool's arguments): any string, validated after.
  if (format !== undefined && !GRAMMAR_FORMATS.includes(format)) return withDescription({ type }, schema);
  return withDescription({ type, ...limits }, schema);
}

/**
 * The grammar schema of a generation schema (tool arguments or a structured answer); the object types named
 * in `openObjects` take any members, and the nodes in `literals` are generated as the client's values.
 *
 * @example
 * ```ts
 * import { grammarSchema } from "./llama_schema.ts";
 * grammarSchema({ type: "object", properties: { id: { type: "string", enum: ["a", "b"] } }, required: ["id"] });
 * // { type: "object", properties: { id: { enum: ["a", "b"] } }, required: ["id"], additionalProperties: false }
 * ```
 */
export function grammarSchema(
  generationSchema: JsonObject,
  {
    openObjects = new Set(),
    literals = new Map(),
    strings = new Map(),
    exclusive = new Map(),
    nullable = new Set(),
  }: Partial<Omit<Widening, "generationSchema">> = {},
): GbnfSchema {
  return build(generationSchema, { openObjects, literals, strings, exclusive, nullable });
}

/** {@link grammarSchema}, with the placeholders of a {@link GrammarPlan} when `rules` is given. */
function build(
  generationSchema: JsonObject,
  { openObjects, literals, strings, exclusive, nullable }: Omit<Widening, "generationSchema">,
  rules?: Placeholders,
): GbnfSchema {
  const context: Context = { usesRoot: false, openObjects, literals, strings, exclusive, nullable, rules };
  const defs: Record<string, GbnfSchema> = {};
  const sourceDefs = ownValue(generationSchema, "$defs");
  if (isJsonObject(sourceDefs)) {
    for (const [name, def] of Object.entries(sourceDefs)) defs[name] = convert(def, context);
  }
  const root = convert(generationSchema, context);
  if (context.usesRoot) defs[ROOT_DEF] = root;
  return Object.keys(defs).length === 0 ? root : { ...root, $defs: defs };
}

/**
 * The grammar schema of a structured answer. An object type the client's JSON Schema leaves open to any
 * members (`{"type": "object"}` without properties, anywhere in the schema) is generated as any object: the
 * generation schema holds it empty (the protocol's conversion, the form FoundationModels decodes), and the
 * answer is checked against the client's schema either way. A string's `minLength`/`maxLength` or its
 * `date`/`time`/`date-time` format, which the generation schema only describes, is generated as the client's
 * schema says. Only when the generation schema is the conversion of the client's schema (a backend's own
 * generation schema is taken as it is).
 *
 * @example
 * ```ts
 * import { convertSchema } from "../schema/convert.ts";
 * import { responseGrammarSchema } from "./llama_schema.ts";
 * const jsonSchema = { type: "object", properties: { extra: { type: "object" } }, required: ["extra"] };
 * const { generationSchema } = convertSchema(jsonSchema, "Response");
 * responseGrammarSchema({ name: "Response", generationSchema, jsonSchema });
 * // $defs.Response_extra: { type: "object", properties: {}, required: [], additionalProperties: true }
 * ```
 */
export function responseGrammarSchema(schema: ResponseSchema): GbnfSchema {
  const { generationSchema, ...widening } = clientConversion(schema.generationSchema, schema.jsonSchema);
  return grammarSchema(generationSchema, widening);
}

/**
 * How a structured answer's grammar is built: `schema` for node-llama-cpp to turn into GBNF text, holding a
 * placeholder string `const` for each node it cannot express, whose literal in that text is then replaced by
 * its rule in `rules` (`llama_grammar.ts`); `plain` is node-llama-cpp's own grammar schema
 * ({@link responseGrammarSchema}), for when there are no rules or the text cannot be made.
 */
export interface GrammarPlan {
  /** The grammar schema with placeholders (equal to `plain` when `rules` is empty). */
  schema: GbnfSchema;
  /** GBNF expression by placeholder. */
  rules: ReadonlyMap<string, string>;
  /** The grammar schema without placeholders. */
  plain: GbnfSchema;
}

/**
 * The {@link GrammarPlan} of a structured answer: beyond {@link responseGrammarSchema}, every `integer` or
 * `number` bound (`minimum`/`maximum`, one-sided or both, any size the grammar's 16 digits can write; the
 * generation schema holds exclusive ones as inclusive) and every `const`/`enum` of objects or arrays (written
 * as their JSON text) is a rule of its own.
 *
 * @example
 * ```ts
 * import { convertSchema } from "../schema/convert.ts";
 * import { responseGrammarPlan } from "./llama_schema.ts";
 * const jsonSchema = { type: "object", properties: { gold: { type: "integer", minimum: 0 } }, required: ["gold"] };
 * const { generationSchema } = convertSchema(jsonSchema, "Response");
 * const plan = responseGrammarPlan({ name: "Response", generationSchema, jsonSchema });
 * // plan.schema.properties.gold: { const: "oam-rule-0" }; plan.rules.get("oam-rule-0"): the integers ≥ 0
 * ```
 */
export function responseGrammarPlan(schema: ResponseSchema): GrammarPlan {
  const { generationSchema, ...widening } = clientConversion(schema.generationSchema, schema.jsonSchema);
  const plain = build(generationSchema, widening);
  const placeholders = new Placeholders(compactJson(generationSchema) + compactJson(schema.jsonSchema));
  const withRules = build(generationSchema, widening, placeholders);
  if (placeholders.rules.size === 0) return { schema: plain, rules: placeholders.rules, plain };
  return { schema: withRules, rules: placeholders.rules, plain };
}

/**
 * The grammar schema of a tool's arguments: as {@link responseGrammarSchema}, an object type the client's
 * argument schema leaves open to any members is generated as any object (the tool's generation schema holds
 * it empty; the arguments are checked against the client's schema either way).
 *
 * @example
 * ```ts
 * import { convertSchema } from "../schema/convert.ts";
 * import { toolGrammarSchema } from "./llama_schema.ts";
 * const jsonSchema = { type: "object", properties: { extra: { type: "object" } }, required: ["extra"] };
 * const { generationSchema } = convertSchema(jsonSchema, "GiveArguments");
 * toolGrammarSchema({ name: "give", description: "", parameters: generationSchema, jsonSchema });
 * // $defs.GiveArguments_extra: { type: "object", properties: {}, required: [], additionalProperties: true }
 * ```
 */
export function toolGrammarSchema(tool: StepTool): GbnfSchema {
  const { generationSchema, ...widening } = clientConversion(tool.parameters, tool.jsonSchema);
  return grammarSchema(generationSchema, widening);
}

/**
 * When a generation schema is the conversion of the client's schema: that conversion (equal to it), with
 * its open object types, the nodes that stand for the client's non-string enum and const values, and the
 * string nodes whose length bounds or format the grammar enforces; else the generation schema as it is,
 * widened nowhere.
 */
function clientConversion(generationSchema: JsonObject, jsonSchema: JsonObject): Widening {
  const asItIs: Widening = {
    generationSchema,
    openObjects: new Set(),
    literals: new Map(),
    strings: new Map(),
    exclusive: new Map(),
    nullable: new Set(),
  };
  const title = ownValue(generationSchema, "title");
  if (typeof title !== "string") return asItIs;
  let conversion;
  try {
    conversion = convertSchemaWithOpenObjects(jsonSchema, title);
  } catch {
    return asItIs;
  }
  if (
    conversion.openObjects.length === 0 && conversion.literals.size === 0 && conversion.strings.size === 0 &&
    conversion.exclusive.size === 0 && conversion.nullable.size === 0
  ) {
    return asItIs;
  }
  if (compactJson(conversion.generationSchema) !== compactJson(generationSchema)) return asItIs;
  return {
    generationSchema: conversion.generationSchema,
    openObjects: new Set(conversion.openObjects),
    literals: conversion.literals,
    strings: conversion.strings,
    exclusive: conversion.exclusive,
    nullable: conversion.nullable,
  };
}

/** Whether a tool's argument schema takes no arguments at all (`{}` or an object without properties). */
export function takesNoArguments(generationSchema: JsonObject): boolean {
  const properties = ownValue(generationSchema, "properties");
  return Object.keys(generationSchema).length === 0 ||
    (ownValue(generationSchema, "type") === "object" &&
      (!isJsonObject(properties) || Object.keys(properties).length === 0));
}
