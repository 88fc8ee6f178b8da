/**
 * JSON Schema → generation schema conversion (PROTOCOL.md §9, reference rules and warning texts).
 *
 * The output is a normalised JSON Schema in the dialect FoundationModels' `GenerationSchema` decodes (the form
 * Apple's own encoder writes for `@Generable` types):
 *
 * - object types: `{"title", "description"?, "type": "object", "properties", "required", "x-order",
 *   "additionalProperties": false}` — `required` lists the non-optional properties, `x-order` all of them in
 *   generation order;
 * - every named type (objects and unions) except the root lives in the top-level `$defs` under its type name
 *   and is used through `{"$ref": "#/$defs/<Name>"}`; the root type is the top-level node itself and is
 *   referenced recursively as `{"$ref": "#"}`;
 * - unions: `{"title", "description"?, "anyOf": [branch, …]}` (the JSON form of
 *   `DynamicGenerationSchema(name:description:anyOf:)`; branches are inline primitives/arrays or `$ref`s);
 * - string choices and constants: `{"type": "string", "enum": [...]}` (Apple encodes `.anyOf` and
 *   `.constant` guides this way);
 * - `integer`/`number` with `minimum`/`maximum`, `array` with `items`/`minItems`/`maxItems`, `boolean`.
 *
 * Nullable values are expressed as optional properties (absent from `required`); `type` arrays, `null`
 * branches and `allOf` never appear in the output. Descriptions are lifted the way the reference lifts them
 * (item descriptions into the array as "Each item: …", property descriptions onto the property node);
 * everything the model cannot enforce is appended to the description and reported as a warning.
 *
 * Adversarial input is bounded: nesting or `$ref` chains deeper than 32 levels fail with a {@link SchemaError},
 * cycles either become named references or fail, and every key read uses own-property checks only.
 * @module
 */
import { compactJson, isJsonObject, type JsonObject, type JsonValue, setOwn } from "../protocol/json.ts";
import { TypeNameRegistry } from "./names.ts";
import { escapePointerSegment, resolveLocalRef, unescapePointerSegment } from "./pointer.ts";

export { toolArgumentsTypeName } from "./names.ts";

/** A JSON Schema the converter cannot use (`-32007 invalid_schema` on the wire). */
export class SchemaError extends Error {
  /** Where in the schema the problem is, e.g. `#/properties/a/items` or a `$ref` string. */
  readonly schemaPath: string;

  /** Creates an error with the reference's message text and the schema location. */
  constructor(message: string, schemaPath: string) {
    super(message);
    this.name = "SchemaError";
    this.schemaPath = schemaPath;
  }
}

/** Result of {@link convertSchema}. */
export interface SchemaConversion {
  /** The normalised generation schema (FoundationModels JSON dialect). */
  generationSchema: JsonObject;
  /** Warnings, each `"<schema path>: <message>"`. */
  warnings: string[];
}

/** Maximum nesting (and `$ref` chain) depth. */
const MAX_DEPTH = 32;
/** Upper bound on converted schema nodes (a schema this big would not fit the model's 8k-token context anyway). */
const MAX_NODES = 20_000;
const DEPTH_MESSAGE = "the schema nests or references more than 32 levels deep";
/** Integer bounds are clamped to what every consumer (JS numbers, Swift `Int`) represents exactly. */
const MAX_INTEGER = Number.MAX_SAFE_INTEGER;

const KNOWN_TYPES = new Set(["object", "array", "string", "integer", "number", "boolean", "null"]);
const STRING_DESCRIBED = ["format", "minLength", "maxLength", "contentEncoding", "contentMediaType"];
const ARRAY_DESCRIBED = ["uniqueItems", "contains"];
const NUMBER_DESCRIBED = ["multipleOf"];
const OBJECT_DESCRIBED = ["minProperties", "maxProperties", "patternProperties", "dependentRequired"];

/** A (possibly) named type under construction, shared by every schema object that denotes it. */
interface Slot {
  readonly base: string;
  readonly isRoot: boolean;
  name?: string;
  /** True once an object or union converter has turned it into a named type. */
  used: boolean;
  /** The named type's description, lifted to every property that references it. */
  description?: string;
  /** The first `$ref` that reached it while it was still being converted (and not yet named). */
  pending?: { ref: string; path: string };
}

interface Position {
  /** Schema path for warnings and errors. */
  path: string;
  /** Type name candidate for a named type created at this position. */
  name: string;
  depth: number;
  slot?: Slot;
}

interface Converted {
  node: JsonObject;
  /** Description lifted to the enclosing property, array or union. */
  description?: string;
  nullable: boolean;
}

/**
 * Converts a JSON Schema to the model's generation schema.
 *
 * @param schema the JSON Schema (an object, or `true`)
 * @param rootName the root type name when the schema has no `title` (`Response`, `Content`,
 *   `<PascalCaseToolName>Arguments`)
 * @throws {SchemaError} when the schema cannot be converted
 *
 * @example
 * ```ts
 * const { generationSchema, warnings } = convertSchema(
 *   { type: "object", properties: { gate: { type: "string" } }, required: ["gate"] },
 *   "OpenGateArguments",
 * );
 * // generationSchema: { title: "OpenGateArguments", type: "object", properties: { gate: { type: "string" } },
 * //   required: ["gate"], "x-order": ["gate"], additionalProperties: false }
 * ```
 */
export function convertSchema(schema: JsonValue, rootName: string): SchemaConversion {
  return new Converter(schema).run(rootName);
}

function stringValue(object: JsonObject, key: string): string | undefined {
  if (!Object.hasOwn(object, key)) return undefined;
  const value = object[key];
  return typeof value === "string" ? value : undefined;
}

function nonEmptyString(object: JsonObject, key: string): string | undefined {
  const value = stringValue(object, key);
  return value === undefined || value === "" ? undefined : value;
}

function own(object: JsonObject, key: string): JsonValue | undefined {
  return Object.hasOwn(object, key) ? object[key] : undefined;
}

/** Text of a value inside a description: strings as-is, everything else compact JSON. */
function describeValue(value: JsonValue): string {
  if (typeof value === "string") return value;
  return safeJson(value);
}

function safeJson(value: JsonValue): string {
  try {
    return compactJson(value);
  } catch {
    return "…";
  }
}

function unique<T>(values: readonly T[]): T[] {
  return [...new Set(values)];
}

function clampInteger(value: number): number {
  return Math.min(MAX_INTEGER, Math.max(-MAX_INTEGER, value));
}

/** The own `minimum`, `maximum`, `exclusiveMinimum` and `exclusiveMaximum` of a numeric schema. */
function numericBounds(schema: JsonObject): {
  minimum: JsonValue | undefined;
  maximum: JsonValue | undefined;
  exclusiveMinimum: JsonValue | undefined;
  exclusiveMaximum: JsonValue | undefined;
} {
  return {
    minimum: own(schema, "minimum"),
    maximum: own(schema, "maximum"),
    exclusiveMinimum: own(schema, "exclusiveMinimum"),
    exclusiveMaximum: own(schema, "exclusiveMaximum"),
  };
}

function isNullBranch(branch: JsonValue): boolean {
  if (!isJsonObject(branch)) return false;
  const type = own(branch, "type");
  if (type === "null") return true;
  if (Array.isArray(type) && type.length > 0 && type.every((t) => t === "null")) return true;
  if (Object.hasOwn(branch, "const") && branch.const === null) return true;
  const values = own(branch, "enum");
  return Array.isArray(values) && values.length > 0 && values.every((v) => v === null);
}

class Converter {
  readonly #root: JsonValue;
  readonly #warnings: string[] = [];
  readonly #seenWarnings = new Set<string>();
  readonly #names = new TypeNameRegistry();
  /** Schema object → the named type it denotes (or is being converted into). Identity-keyed: never a prototype lookup. */
  readonly #slots = new Map<JsonObject, Slot>();
  /** Non-root named types in creation order. */
  readonly #defs = new Map<string, JsonObject>();
  #rootDef: JsonObject | undefined;
  #nodes = 0;

  constructor(root: JsonValue) {
    this.#root = root;
  }

  run(rootName: string): SchemaConversion {
    const title = isJsonObject(this.#root) ? nonEmptyString(this.#root, "title") : undefined;
    const base = title ?? rootName;
    const rootSlot: Slot = { base, isRoot: true, used: false, name: this.#names.allocate(base) };
    const result = this.#convert(this.#root, { path: "#", name: rootSlot.name!, depth: 0, slot: rootSlot });
    this.#checkPending(rootSlot);
    let top: JsonObject;
    if (rootSlot.used && this.#rootDef !== undefined) {
      top = this.#rootDef;
    } else {
      top = result.node;
      if (result.description !== undefined) setOwn(top, "description", result.description);
    }
    if (this.#defs.size > 0) {
      const defs: JsonObject = {};
      for (const [name, def] of this.#defs) setOwn(defs, name, def);
      setOwn(top, "$defs", defs);
    }
    return { generationSchema: top, warnings: this.#warnings };
  }

  // ---- infrastructure -------------------------------------------------------------------------------

  #warn(path: string, message: string): void {
    const text = `${path}: ${message}`;
    if (this.#seenWarnings.has(text)) return;
    this.#seenWarnings.add(text);
    this.#warnings.push(text);
  }

  #newSlot(base: string): Slot {
    return { base, isRoot: false, used: false };
  }

  /** Turns a slot into a named type and returns its name. */
  #claim(slot: Slot, def: JsonObject): string {
    slot.name ??= this.#names.allocate(slot.base);
    slot.used = true;
    if (slot.isRoot) this.#rootDef = def;
    else this.#defs.set(slot.name, def);
    return slot.name;
  }

  #refNode(slot: Slot): JsonObject {
    if (slot.isRoot) return { $ref: "#" };
    slot.name ??= this.#names.allocate(slot.base);
    return { $ref: `#/$defs/${escapePointerSegment(slot.name)}` };
  }

  /** A reference to a type that is already known (possibly still in progress: recursion). */
  #refTo(slot: Slot, path: string): Converted {
    if (!slot.used && slot.pending === undefined) slot.pending = { ref: path, path };
    return { node: this.#refNode(slot), description: slot.description, nullable: false };
  }

  /** A slot reached recursively must have become a named type; an inline cycle is an error. */
  #checkPending(slot: Slot): void {
    if (!slot.used && slot.pending !== undefined) {
      throw new SchemaError(
        `recursive $ref '${slot.pending.ref}' must point to an object or union schema`,
        slot.pending.path,
      );
    }
  }

  #describe(
    schema: JsonObject,
    path: string,
    describedKeys: readonly string[],
    sentences: readonly string[],
  ): string | undefined {
    const notes: string[] = [];
    for (const key of describedKeys) {
      if (!Object.hasOwn(schema, key)) continue;
      const value = schema[key];
      if (key === "uniqueItems" && value === false) continue;
      this.#warn(path, `'${key}' is described to the model but not enforced`);
      notes.push(`${key}: ${describeValue(value)}`);
    }
    const examples = own(schema, "examples");
    if (Array.isArray(examples) && examples.length > 0) {
      notes.push(`examples: ${examples.slice(0, 3).map(describeValue).join(", ")}`);
    }
    if (Object.hasOwn(schema, "default")) notes.push(`default: ${describeValue(schema.default)}`);
    let text = nonEmptyString(schema, "description") ?? "";
    for (const sentence of sentences) {
      // "Gate name" + "Must be …" → "Gate name. Must be …" (the added sentences are full sentences).
      if (text !== "" && !/[.!?:;]$/.test(text)) text += ".";
      text = text === "" ? sentence : `${text} ${sentence}`;
    }
    if (notes.length > 0) text = text === "" ? `(${notes.join("; ")})` : `${text} (${notes.join("; ")})`;
    return text === "" ? undefined : text;
  }

  // ---- dispatch -------------------------------------------------------------------------------------

  #convert(schema: JsonValue, pos: Position): Converted {
    if (++this.#nodes > MAX_NODES) {
      throw new SchemaError(`the schema has more than ${MAX_NODES} nodes`, pos.path);
    }
    if (pos.depth > MAX_DEPTH) throw new SchemaError(DEPTH_MESSAGE, pos.path);
    if (schema === true) {
      this.#warn(pos.path, "unconstrained schema `true` is generated as a string");
      return { node: { type: "string" }, nullable: false };
    }
    if (!isJsonObject(schema)) throw new SchemaError("expected a schema object", pos.path);
    const existing = this.#slots.get(schema);
    if (existing !== undefined && existing !== pos.slot) return this.#refTo(existing, pos.path);
    const slot = pos.slot ?? this.#newSlot(pos.name);
    if (existing === undefined) this.#slots.set(schema, slot);
    const result = this.#dispatch(schema, { ...pos, slot });
    if (!slot.used) {
      if (existing === undefined) this.#slots.delete(schema);
      if (pos.slot === undefined) this.#checkPending(slot);
    }
    return result;
  }

  #dispatch(schema: JsonObject, pos: Position): Converted {
    if (Object.hasOwn(schema, "$ref")) return this.#ref(schema, pos);
    const allOf = own(schema, "allOf");
    if (Array.isArray(allOf)) {
      return this.#convert(this.#mergeAllOf(schema, pos), { ...pos, depth: pos.depth + 1 });
    }
    for (const key of ["anyOf", "oneOf"]) {
      const branches = own(schema, key);
      if (Array.isArray(branches)) return this.#union(schema, key, branches, pos);
    }
    const values = own(schema, "enum");
    if (Array.isArray(values) && values.length > 0) return this.#enum(schema, values, pos);
    if (Object.hasOwn(schema, "const")) return this.#const(schema, schema.const, pos);
    return this.#typed(schema, pos, {});
  }

  // ---- $ref -----------------------------------------------------------------------------------------

  #resolve(ref: JsonValue, path: string): JsonValue {
    if (typeof ref !== "string") {
      throw new SchemaError(`only local $ref values are supported, got '${safeJson(ref)}'`, path);
    }
    const resolution = resolveLocalRef(this.#root, ref);
    if (resolution.ok) return resolution.target;
    throw new SchemaError(
      resolution.reason === "nonlocal"
        ? `only local $ref values are supported, got '${ref}'`
        : `unresolvable $ref '${ref}'`,
      path,
    );
  }

  #ref(schema: JsonObject, pos: Position): Converted {
    const ref = schema.$ref;
    const target = this.#resolve(ref, pos.path);
    const refPath = ref as string;
    let slot: Slot | undefined;
    if (isJsonObject(target) && !this.#slots.has(target)) {
      // The root's own `$ref` names the root type; any other target is named by its title or pointer key.
      slot = pos.slot?.isRoot && !pos.slot.used
        ? pos.slot
        : this.#newSlot(this.#refTypeName(target, refPath));
    }
    const result = this.#convert(target, {
      path: refPath,
      name: slot?.base ?? pos.name,
      depth: pos.depth + 1,
      slot,
    });
    if (slot !== undefined && slot !== pos.slot) this.#checkPending(slot);
    const sibling = nonEmptyString(schema, "description");
    return { ...result, description: sibling ?? result.description };
  }

  #refTypeName(target: JsonObject, ref: string): string {
    const title = nonEmptyString(target, "title");
    if (title !== undefined) return title;
    const segments = ref.split("/");
    return unescapePointerSegment(segments[segments.length - 1]);
  }

  // ---- allOf ----------------------------------------------------------------------------------------

  /** Merges `allOf` parts (resolving `$ref` parts and nested `allOf`) into one schema object. */
  #mergeAllOf(schema: JsonObject, pos: Position): JsonObject {
    const merged: JsonObject = {};
    const properties: JsonObject = {};
    let hasProperties = false;
    const required: string[] = [];
    const visited = new Set<JsonObject>();

    const absorb = (part: JsonObject): void => {
      for (const key of Object.keys(part)) {
        const value = part[key];
        if (key === "allOf" || key === "$ref") continue;
        if (key === "properties") {
          if (!isJsonObject(value)) continue;
          hasProperties = true;
          for (const name of Object.keys(value)) {
            if (!Object.hasOwn(properties, name)) setOwn(properties, name, value[name]);
          }
        } else if (key === "required") {
          if (Array.isArray(value)) {
            for (const name of value) if (typeof name === "string") required.push(name);
          }
        } else if (!Object.hasOwn(merged, key)) {
          setOwn(merged, key, value);
        }
      }
    };

    const visit = (part: JsonValue, path: string, depth: number): void => {
      if (depth > MAX_DEPTH) throw new SchemaError(DEPTH_MESSAGE, path);
      if (++this.#nodes > MAX_NODES) {
        throw new SchemaError(`the schema has more than ${MAX_NODES} nodes`, path);
      }
      if (part === true) return;
      if (!isJsonObject(part)) throw new SchemaError("expected a schema object", path);
      // Each schema object is merged once: `A and A` is `A`, and it keeps cycles and diamonds finite.
      if (visited.has(part)) return;
      visited.add(part);
      absorb(part);
      if (Object.hasOwn(part, "$ref")) {
        const ref = part.$ref;
        visit(this.#resolve(ref, path), ref as string, depth + 1);
      }
      const parts = own(part, "allOf");
      if (Array.isArray(parts)) {
        parts.forEach((sub, index) => visit(sub, `${path}/allOf/${index}`, depth + 1));
      }
    };

    visit(schema, pos.path, pos.depth);
    if (hasProperties) setOwn(merged, "properties", properties);
    if (required.length > 0) setOwn(merged, "required", unique(required));
    return merged;
  }

  // ---- unions ---------------------------------------------------------------------------------------

  #union(schema: JsonObject, key: string, branches: JsonValue[], pos: Position): Converted {
    let nullable = false;
    const concrete: { branch: JsonValue; index: number }[] = [];
    branches.forEach((branch, index) => {
      if (isNullBranch(branch)) nullable = true;
      else concrete.push({ branch, index });
    });
    const description = this.#describe(schema, pos.path, [], []);
    if (concrete.length === 0) {
      this.#warn(pos.path, "schema without a type is generated as a string");
      return { node: { type: "string" }, description, nullable: true };
    }
    if (concrete.length === 1) {
      const { branch, index } = concrete[0];
      const result = this.#convert(branch, {
        ...pos,
        path: `${pos.path}/${key}/${index}`,
        depth: pos.depth + 1,
      });
      return {
        node: result.node,
        description: description ?? result.description,
        nullable: nullable || result.nullable,
      };
    }
    const literals = this.#stringLiterals(concrete.map((c) => c.branch), pos.depth);
    if (literals !== undefined) {
      return { node: { type: "string", enum: literals }, description, nullable };
    }
    const slot = pos.slot!;
    const def: JsonObject = {};
    const name = this.#claim(slot, def);
    slot.description = description;
    const nodes: JsonValue[] = concrete.map(({ branch, index }) => {
      const title = isJsonObject(branch) ? nonEmptyString(branch, "title") : undefined;
      const result = this.#convert(branch, {
        path: `${pos.path}/${key}/${index}`,
        name: title ?? `${name}_option${index}`,
        depth: pos.depth + 1,
      });
      if (result.description !== undefined) setOwn(result.node, "description", result.description);
      return result.node;
    });
    setOwn(def, "title", name);
    if (description !== undefined) setOwn(def, "description", description);
    setOwn(def, "anyOf", nodes);
    return { node: this.#refNode(slot), description, nullable };
  }

  /** The string values when every branch is a string literal (`const` or string `enum`), else undefined. */
  #stringLiterals(branches: JsonValue[], depth: number): string[] | undefined {
    const values: string[] = [];
    for (let branch of branches) {
      // Follow pure `$ref` chains without converting (bounded like every other chain).
      for (let hops = depth; isJsonObject(branch) && Object.hasOwn(branch, "$ref"); hops++) {
        const ref = branch.$ref;
        if (hops > MAX_DEPTH || typeof ref !== "string") return undefined;
        const resolution = resolveLocalRef(this.#root, ref);
        if (!resolution.ok) return undefined;
        branch = resolution.target;
      }
      if (!isJsonObject(branch)) return undefined;
      if (Object.hasOwn(branch, "const")) {
        const value = branch.const;
        if (typeof value !== "string") return undefined;
        values.push(value);
        continue;
      }
      const choices = own(branch, "enum");
      if (!Array.isArray(choices) || choices.length === 0) return undefined;
      for (const choice of choices) {
        if (typeof choice !== "string") return undefined;
        values.push(choice);
      }
    }
    return unique(values);
  }

  // ---- enum / const ---------------------------------------------------------------------------------

  #enum(schema: JsonObject, values: JsonValue[], pos: Position): Converted {
    const present = values.filter((v) => v !== null);
    const nullable = present.length < values.length;
    if (present.length === 0) return { ...this.#typed(schema, pos, {}), nullable: true };
    if (present.every((v) => typeof v === "string")) {
      const description = this.#describe(schema, pos.path, [], []);
      return { node: { type: "string", enum: unique(present as string[]) }, description, nullable };
    }
    if (present.every((v) => typeof v === "number" && Number.isInteger(v))) {
      const numbers = present as number[];
      // A loop, not Math.min(...spread): enums may be longer than the engine's argument limit.
      let min = Infinity;
      let max = -Infinity;
      for (const n of numbers) {
        if (n < min) min = n;
        if (n > max) max = n;
      }
      min = clampInteger(min);
      max = clampInteger(max);
      this.#warn(pos.path, `integer enum is enforced as a range ${min}...${max}; exact values are described`);
      const sentence = `One of: ${numbers.map(String).join(", ")}.`;
      const description = this.#describe(schema, pos.path, [], [sentence]);
      return { node: { type: "integer", minimum: min, maximum: max }, description, nullable };
    }
    this.#warn(pos.path, "mixed-type enum is generated as strings");
    const description = this.#describe(schema, pos.path, [], []);
    return { node: { type: "string", enum: unique(present.map(describeValue)) }, description, nullable };
  }

  #const(schema: JsonObject, value: JsonValue, pos: Position): Converted {
    if (typeof value === "string") {
      const description = this.#describe(schema, pos.path, [], []);
      return { node: { type: "string", enum: [value] }, description, nullable: false };
    }
    const text = safeJson(value);
    this.#warn(pos.path, `non-string const ${text} is described instead of enforced`);
    let fallbackType = "string";
    if (typeof value === "boolean") fallbackType = "boolean";
    else if (typeof value === "number") fallbackType = Number.isInteger(value) ? "integer" : "number";
    return this.#typed(schema, pos, { fallbackType, sentences: [`Must be exactly ${text}.`] });
  }

  // ---- typed schemas --------------------------------------------------------------------------------

  #typed(
    schema: JsonObject,
    pos: Position,
    options: { fallbackType?: string; sentences?: string[] },
  ): Converted {
    const declared = own(schema, "type");
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
      if (!KNOWN_TYPES.has(type)) throw new SchemaError(`unsupported type '${type}'`, pos.path);
    }
    const nullable = types.includes("null");
    const concrete = unique(types.filter((t) => t !== "null"));
    let kind: string;
    if (concrete.length > 1) {
      this.#warn(
        pos.path,
        `multiple types [${concrete.join(", ")}] are not supported; using '${concrete[0]}'`,
      );
      kind = concrete[0];
    } else if (concrete.length === 1) {
      kind = concrete[0];
    } else {
      kind = options.fallbackType ?? this.#inferType(schema, pos.path);
    }
    const sentences = options.sentences ?? [];
    switch (kind) {
      case "object":
        return this.#object(schema, pos, nullable, sentences);
      case "array":
        return this.#array(schema, pos, nullable, sentences);
      case "integer":
        return this.#integer(schema, pos, nullable, sentences);
      case "number":
        return this.#number(schema, pos, nullable, sentences);
      case "boolean":
        return {
          node: { type: "boolean" },
          description: this.#describe(schema, pos.path, [], sentences),
          nullable,
        };
      default:
        return this.#string(schema, pos, nullable, sentences);
    }
  }

  #inferType(schema: JsonObject, path: string): string {
    if (Object.hasOwn(schema, "properties")) return "object";
    if (Object.hasOwn(schema, "items") || Object.hasOwn(schema, "prefixItems")) return "array";
    if (Object.hasOwn(schema, "pattern") || Object.hasOwn(schema, "format")) return "string";
    if (Object.hasOwn(schema, "minimum") || Object.hasOwn(schema, "maximum")) return "number";
    this.#warn(path, "schema without a type is generated as a string");
    return "string";
  }

  #string(schema: JsonObject, pos: Position, nullable: boolean, sentences: string[]): Converted {
    const extra = [...sentences];
    const pattern = stringValue(schema, "pattern");
    if (pattern !== undefined) {
      this.#warn(pos.path, `pattern '${pattern}' is described to the model but not enforced`);
      extra.push(`Must match the regular expression ${pattern}.`);
    }
    const description = this.#describe(schema, pos.path, STRING_DESCRIBED, extra);
    return { node: { type: "string" }, description, nullable };
  }

  #integer(schema: JsonObject, pos: Position, nullable: boolean, sentences: string[]): Converted {
    const lows: number[] = [];
    const highs: number[] = [];
    const { minimum, maximum, exclusiveMinimum, exclusiveMaximum } = numericBounds(schema);
    if (isFiniteNumber(minimum)) {
      // Draft 4: `exclusiveMinimum: true` makes `minimum` exclusive.
      lows.push(exclusiveMinimum === true ? Math.floor(minimum) + 1 : Math.ceil(minimum));
    }
    if (isFiniteNumber(maximum)) {
      highs.push(exclusiveMaximum === true ? Math.ceil(maximum) - 1 : Math.floor(maximum));
    }
    if (isFiniteNumber(exclusiveMinimum)) lows.push(Math.floor(exclusiveMinimum) + 1);
    if (isFiniteNumber(exclusiveMaximum)) highs.push(Math.ceil(exclusiveMaximum) - 1);
    return this.#ranged("integer", lows, highs, schema, pos, nullable, sentences);
  }

  #number(schema: JsonObject, pos: Position, nullable: boolean, sentences: string[]): Converted {
    const lows: number[] = [];
    const highs: number[] = [];
    const { minimum, maximum, exclusiveMinimum, exclusiveMaximum } = numericBounds(schema);
    if (isFiniteNumber(minimum)) lows.push(minimum);
    if (isFiniteNumber(maximum)) highs.push(maximum);
    const exclusive =
      (isFiniteNumber(exclusiveMinimum) || (exclusiveMinimum === true && isFiniteNumber(minimum))) ||
      (isFiniteNumber(exclusiveMaximum) || (exclusiveMaximum === true && isFiniteNumber(maximum)));
    if (exclusive) this.#warn(pos.path, "exclusive number bounds are enforced as inclusive");
    if (isFiniteNumber(exclusiveMinimum)) lows.push(exclusiveMinimum);
    if (isFiniteNumber(exclusiveMaximum)) highs.push(exclusiveMaximum);
    return this.#ranged("number", lows, highs, schema, pos, nullable, sentences);
  }

  /**
   * A numeric node with the tightest of the collected lower and upper bounds (integer bounds clamped to the
   * safe range); a range that is empty is dropped with a warning.
   */
  #ranged(
    type: "integer" | "number",
    lows: number[],
    highs: number[],
    schema: JsonObject,
    pos: Position,
    nullable: boolean,
    sentences: string[],
  ): Converted {
    const fit = type === "integer" ? clampInteger : (value: number) => value;
    let low = lows.length > 0 ? fit(Math.max(...lows)) : undefined;
    let high = highs.length > 0 ? fit(Math.min(...highs)) : undefined;
    if (low !== undefined && high !== undefined && low > high) {
      this.#warn(pos.path, `empty ${type} range is ignored`);
      low = high = undefined;
    }
    const node: JsonObject = { type };
    if (low !== undefined) node.minimum = low;
    if (high !== undefined) node.maximum = high;
    const description = this.#describe(schema, pos.path, NUMBER_DESCRIBED, sentences);
    return { node, description, nullable };
  }

  #array(schema: JsonObject, pos: Position, nullable: boolean, sentences: string[]): Converted {
    const items = own(schema, "items");
    const prefixItems = own(schema, "prefixItems");
    let itemSchema: JsonValue | undefined;
    let itemPath = `${pos.path}/items`;
    if (isJsonObject(items) || items === true) {
      itemSchema = items;
    } else if (Array.isArray(prefixItems) && prefixItems.length > 0) {
      this.#warn(pos.path, "tuple arrays (prefixItems) are generated as arrays of the first item type");
      itemSchema = prefixItems[0];
      itemPath = `${pos.path}/prefixItems/0`;
    } else if (Array.isArray(items) && items.length > 0) {
      // Draft 4–2019 tuple form.
      this.#warn(pos.path, "tuple arrays (prefixItems) are generated as arrays of the first item type");
      itemSchema = items[0];
      itemPath = `${pos.path}/items/0`;
    } else if (items !== undefined && items !== false && !Array.isArray(items)) {
      throw new SchemaError("expected a schema object", itemPath);
    } else {
      this.#warn(pos.path, "array without 'items' is generated as an array of strings");
    }
    let item: Converted = { node: { type: "string" }, nullable: false };
    if (itemSchema !== undefined) {
      // Items take the array's type name (`Root_cats` for the elements of property `cats`).
      const name = pos.slot?.isRoot ? `${pos.name}_item` : pos.name;
      item = this.#convert(itemSchema, { path: itemPath, name, depth: pos.depth + 1 });
    }
    const extra = [...sentences];
    if (item.description !== undefined) extra.push(`Each item: ${item.description}`);
    const description = this.#describe(schema, pos.path, ARRAY_DESCRIBED, extra);
    const node: JsonObject = { type: "array", items: item.node };
    const minItems = own(schema, "minItems");
    const maxItems = own(schema, "maxItems");
    let low = isFiniteNumber(minItems) ? clampInteger(Math.max(0, Math.ceil(minItems))) : undefined;
    let high = isFiniteNumber(maxItems) ? clampInteger(Math.max(0, Math.floor(maxItems))) : undefined;
    if (low !== undefined && high !== undefined && low > high) {
      this.#warn(pos.path, "empty item count range is ignored");
      low = high = undefined;
    }
    if (low !== undefined) node.minItems = low;
    if (high !== undefined) node.maxItems = high;
    return { node, description, nullable };
  }

  #object(schema: JsonObject, pos: Position, nullable: boolean, sentences: string[]): Converted {
    const slot = pos.slot!;
    const def: JsonObject = {};
    const name = this.#claim(slot, def);
    const declared = own(schema, "properties");
    const props: JsonObject = isJsonObject(declared) ? declared : {};
    const keys = Object.keys(props);
    const additional = own(schema, "additionalProperties");
    if (keys.length === 0 && additional !== undefined && additional !== false) {
      this.#warn(
        pos.path,
        "free-form objects (additionalProperties without properties) cannot be generated; producing an empty object",
      );
    }
    const description = this.#describe(schema, pos.path, OBJECT_DESCRIBED, sentences);
    slot.description = description;

    const order: string[] = [];
    const placed = new Set<string>();
    const xOrder = own(schema, "x-order");
    if (Array.isArray(xOrder)) {
      for (const key of xOrder) {
        if (typeof key === "string" && Object.hasOwn(props, key) && !placed.has(key)) {
          placed.add(key);
          order.push(key);
        }
      }
    }
    for (const key of keys) {
      if (!placed.has(key)) {
        placed.add(key);
        order.push(key);
      }
    }
    const requiredList = own(schema, "required");
    const required = new Set(
      Array.isArray(requiredList) ? requiredList.filter((k): k is string => typeof k === "string") : [],
    );

    const properties: JsonObject = {};
    const requiredOut: string[] = [];
    for (const key of order) {
      const sub = props[key];
      const result = this.#convert(sub, {
        path: `${pos.path}/properties/${escapePointerSegment(key)}`,
        name: `${name}_${key}`,
        depth: pos.depth + 1,
      });
      const text = result.description ?? (isJsonObject(sub) ? nonEmptyString(sub, "description") : undefined);
      if (text !== undefined) setOwn(result.node, "description", text);
      setOwn(properties, key, result.node);
      if (required.has(key) && !result.nullable) requiredOut.push(key);
    }

    setOwn(def, "title", name);
    if (description !== undefined) setOwn(def, "description", description);
    setOwn(def, "type", "object");
    setOwn(def, "properties", properties);
    setOwn(def, "required", requiredOut);
    setOwn(def, "x-order", order);
    setOwn(def, "additionalProperties", false);
    return { node: this.#refNode(slot), description, nullable };
  }
}

function isFiniteNumber(value: JsonValue | undefined): value is number {
  return typeof value === "number" && Number.isFinite(value);
}
