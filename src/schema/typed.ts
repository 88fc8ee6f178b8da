/**
 * Schemas by `type` in the conversion: the declared (or inferred) type picks the object, array, integer,
 * number, boolean or string converter; `null` among the types makes the value nullable, and of several
 * other types only the first is used (with a warning).
 * @module
 */
import { ownValue } from "../protocol/json.ts";
import { didYouMean, nearestName } from "../protocol/edit_distance.ts";
import { describe, STRING_DESCRIBED } from "./description.ts";
import { stringValue, unique } from "./keyword_values.ts";
import { convertArray } from "./arrays.ts";
import { grammarStringLimits } from "./grammar_rules.ts";
import { convertInteger, convertNumber } from "./numbers.ts";
import { convertObject } from "./objects.ts";
import { SCHEMA_TYPES, SchemaError } from "./schema_error.ts";
import type { Converted, SchemaAt, TypedSchema, Walk } from "./walk.ts";

const KNOWN_TYPES = new Set(SCHEMA_TYPES);

/** Types named as programming languages name them, and the JSON Schema type each means. */
const LANGUAGE_TYPES: Record<string, string> = {
  int: "integer",
  int32: "integer",
  int64: "integer",
  long: "integer",
  float: "number",
  double: "number",
  decimal: "number",
  bool: "boolean",
  str: "string",
  list: "array",
  dict: "object",
};

/** A schema converted by its `type`. */
export interface TypeRequest extends SchemaAt {
  /** The type when the schema declares none (instead of inferring it from its keywords). */
  fallbackType?: string;
  /** Full sentences the description gets. */
  sentences?: string[];
}

/** Converts a schema by its declared or inferred `type`. */
export function convertTyped(walk: Walk, request: TypeRequest): Converted {
  const { schema, pos } = request;
  const declared = ownValue(schema, "type");
  let types: string[];
  if (declared === undefined) {
    types = [];
  } else if (typeof declared === "string") {
    types = [declared];
  } else if (Array.isArray(declared) && declared.every((t) => typeof t === "string")) {
    types = declared as string[];
  } else {
    throw new SchemaError("invalid 'type'", pos.path);
  }
  for (const type of types) {
    if (!KNOWN_TYPES.has(type)) {
      const meant = Object.hasOwn(LANGUAGE_TYPES, type.toLowerCase())
        ? LANGUAGE_TYPES[type.toLowerCase()]
        : nearestName(type, [...KNOWN_TYPES]);
      const hint = meant === undefined ? ` (a type is one of ${SCHEMA_TYPES.join(", ")})` : didYouMean(meant);
      throw new SchemaError(`unsupported type '${type}'${hint}`, pos.path);
    }
  }
  const nullable = types.includes("null");
  const concrete = unique(types.filter((t) => t !== "null"));
  let kind: string;
  if (concrete.length > 1) {
    walk.warn(
      pos.path,
      `multiple types [${concrete.join(", ")}] are not supported; using '${concrete[0]}'`,
    );
    kind = concrete[0];
  } else if (concrete.length === 1) {
    kind = concrete[0];
  } else {
    kind = request.fallbackType ?? inferType(walk, request);
  }
  const typed: TypedSchema = { schema, pos, nullable, sentences: request.sentences ?? [] };
  switch (kind) {
    case "object":
      return convertObject(walk, typed);
    case "array":
      return convertArray(walk, typed);
    case "integer":
      return convertInteger(walk, typed);
    case "number":
      return convertNumber(walk, typed);
    case "boolean":
      return {
        node: { type: "boolean" },
        description: describe(walk, { schema, path: pos.path, sentences: typed.sentences }),
        nullable,
      };
    default:
      return convertString(walk, typed);
  }
}

function inferType(walk: Walk, { schema, pos }: SchemaAt): string {
  if (Object.hasOwn(schema, "properties")) return "object";
  if (Object.hasOwn(schema, "items") || Object.hasOwn(schema, "prefixItems")) return "array";
  if (Object.hasOwn(schema, "pattern") || Object.hasOwn(schema, "format")) return "string";
  if (Object.hasOwn(schema, "minimum") || Object.hasOwn(schema, "maximum")) return "number";
  walk.warn(pos.path, "schema without a type is generated as a string");
  return "string";
}

function convertString(walk: Walk, { schema, pos, nullable, sentences }: TypedSchema): Converted {
  const extra = [...sentences];
  const pattern = stringValue(schema, "pattern");
  if (pattern !== undefined) {
    walk.note({ kind: "described", path: pos.path, key: "pattern", value: pattern, grammar: false });
    extra.push(`Must match the regular expression ${pattern}.`);
  }
  const description = describe(walk, {
    schema,
    path: pos.path,
    described: STRING_DESCRIBED,
    sentences: extra,
  });
  const node = { type: "string" };
  const limits = grammarStringLimits(schema);
  if (limits !== undefined) walk.noteString(node, limits);
  return { node, description, nullable };
}
