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
 *
 * This module is the entry point and the walk (named types, warnings, limits, dispatch by keyword); each
 * keyword has its own converter module (`refs.ts`, `all_of.ts`, `unions.ts`, `literals.ts`, `typed.ts`,
 * `objects.ts`, `arrays.ts`, `numbers.ts`), and `description.ts` builds the description texts.
 * @module
 */

import {
  compactJson,
  isJsonObject,
  type JsonObject,
  type JsonValue,
  ownValue,
  setOwn,
} from "../protocol/json.ts";
import { mergeAllOf } from "./all_of.ts";
import type { ExclusiveBounds } from "./grammar_numbers.ts";
import { nonEmptyString } from "./keyword_values.ts";
import { convertConst, convertEnum } from "./literals.ts";
import { TypeNameRegistry } from "./names.ts";
import { escapePointerSegment } from "./pointer.ts";
import { checkKeywords } from "./keywords.ts";
import { type FreeFormObject, freeFormWarnings } from "./free_form.ts";
import type { GrammarStringLimits } from "./grammar_rules.ts";
import { type ModelNote, type SchemaWarning, warningsFor } from "./model_notes.ts";
import { convertRef } from "./refs.ts";
import { notASchema, SchemaError } from "./schema_error.ts";
import { convertTyped } from "./typed.ts";
import { convertUnion } from "./unions.ts";
import {
  type Converted,
  DEPTH_MESSAGE,
  MAX_DEPTH,
  MAX_NODES,
  type Position,
  type Slot,
  type Walk,
} from "./walk.ts";

export { toolArgumentsTypeName } from "./names.ts";
export { SchemaError } from "./schema_error.ts";

/**
 * Result of {@link convertSchema}.
 *
 * @example
 * ```ts
 * import { convertSchema, type SchemaConversion } from "@open-apple-models/bridge/engine";
 * const schema = { type: "object", properties: { ok: { type: "boolean" } } };
 * const converted: SchemaConversion = convertSchema(schema, "Verdict");
 * converted.warnings; // []
 * ```
 */
export interface SchemaConversion {
  /** The normalised generation schema (FoundationModels JSON dialect). */
  generationSchema: JsonObject;
  /** Warnings, each `"<schema path>: <message>"`. */
  warnings: string[];
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
 * import { convertSchema } from "@open-apple-models/bridge/engine";
 *
 * const { generationSchema, warnings } = convertSchema(
 *   { type: "object", properties: { gate: { type: "string" } }, required: ["gate"] },
 *   "OpenGateArguments",
 * );
 * // generationSchema: { title: "OpenGateArguments", type: "object", properties: { gate: { type: "string" } },
 * //   required: ["gate"], "x-order": ["gate"], additionalProperties: false }
 * ```
 */
export function convertSchema(schema: JsonValue, rootName: string): SchemaConversion {
  const { generationSchema, warnings, freeForm } = new Converter(schema).run(rootName);
  return {
    generationSchema,
    warnings: [...warnings, ...freeFormWarnings(freeForm, { plainObjects: false })],
  };
}

/** A {@link SchemaConversion} and the named object types the JSON Schema leaves open to any members. */
export interface OpenObjectsConversion extends SchemaConversion {
  /**
   * The names (`title`s) of the generation schema's object types that the JSON Schema leaves open to any
   * members (`{"type": "object"}`): the generation schema holds them empty (FoundationModels generates no
   * free-form object), a backend that can generate any object (the GGUF grammar) may.
   */
  openObjects: string[];
  /**
   * The objects with no properties whose members are not forbidden, which the generation schema holds empty.
   * Their warnings are not in `warnings`: they depend on the model ({@link freeFormWarnings}).
   */
  freeForm: FreeFormObject[];
  /**
   * The generation schema's nodes (by identity, within `generationSchema`) that stand for the JSON Schema's
   * non-string `enum` or `const` values, with those values (`null` left out of an enum: it makes the member
   * optional). FoundationModels generates them as strings, a range or a described type; a backend whose
   * grammar takes any JSON value (the GGUF grammar) may generate the values themselves.
   */
  literals: ReadonlyMap<JsonObject, readonly JsonValue[]>;
  /**
   * The generation schema's string nodes (by identity) whose JSON Schema has constraints the GGUF grammar
   * enforces (`minLength`/`maxLength`, a `date`/`time`/`date-time` format); the generation schema only
   * describes them.
   */
  strings: ReadonlyMap<JsonObject, GrammarStringLimits>;
  /**
   * The generation schema's `number` nodes (by identity) whose `minimum`/`maximum` stands for the JSON
   * Schema's exclusive bound, which the GGUF grammar of an answer enforces as exclusive.
   */
  exclusive: ReadonlyMap<JsonObject, ExclusiveBounds>;
  /**
   * The generation schema's nodes (by identity) of object members and array items the JSON Schema lets be
   * null (the generation schema leaves a member out of `required`, an item as its type); the GGUF grammar
   * generates them as their type or null.
   */
  nullable: ReadonlySet<JsonObject>;
  /**
   * `warnings` before they are worded for a model: some depend on it (`model_notes.ts`); `warnings` holds
   * them as worded when no model is known, {@link warningsFor}`(warningNotes, model)` for the model in use.
   */
  warningNotes: readonly SchemaWarning[];
}

/**
 * {@link convertSchema}, also naming the object types the JSON Schema leaves open to any members, and listing
 * the objects without properties apart from the other warnings.
 *
 * @example
 * ```ts
 * import { convertSchemaWithOpenObjects } from "./convert.ts";
 * const schema = { type: "object", properties: { extra: { type: "object" } } };
 * convertSchemaWithOpenObjects(schema, "Response").openObjects; // ["Response_extra"]
 * ```
 */
export function convertSchemaWithOpenObjects(schema: JsonValue, rootName: string): OpenObjectsConversion {
  return new Converter(schema).run(rootName);
}

class Converter implements Walk {
  readonly root: JsonValue;
  readonly #warnings: SchemaWarning[] = [];
  readonly #seenWarnings = new Set<string>();
  readonly #names = new TypeNameRegistry();
  /** Schema object → the named type it denotes (or is being converted into). Identity-keyed: never a prototype lookup. */
  readonly #slots = new Map<JsonObject, Slot>();
  /** Non-root named types in creation order. */
  readonly #defs = new Map<string, JsonObject>();
  #rootDef: JsonObject | undefined;
  readonly #openObjects: string[] = [];
  readonly #freeForm: FreeFormObject[] = [];
  readonly #literals = new Map<JsonObject, readonly JsonValue[]>();
  readonly #strings = new Map<JsonObject, GrammarStringLimits>();
  readonly #exclusive = new Map<JsonObject, ExclusiveBounds>();
  readonly #nullable = new Set<JsonObject>();
  #nodes = 0;

  constructor(root: JsonValue) {
    this.root = root;
  }

  run(rootName: string): OpenObjectsConversion {
    const title = isJsonObject(this.root) ? nonEmptyString(this.root, "title") : undefined;
    const base = title ?? rootName;
    const rootSlot: Slot = { base, isRoot: true, used: false, name: this.#names.allocate(base) };
    const result = this.convert(this.root, { path: "#", name: rootSlot.name!, depth: 0, slot: rootSlot });
    this.checkPending(rootSlot);
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
    return {
      generationSchema: top,
      warnings: warningsFor(this.#warnings),
      openObjects: this.#openObjects,
      freeForm: this.#freeForm,
      literals: this.#literals,
      strings: this.#strings,
      exclusive: this.#exclusive,
      nullable: this.#nullable,
      warningNotes: this.#warnings,
    };
  }

  // ---- Walk -----------------------------------------------------------------------------------------

  warn(path: string, message: string): void {
    const text = `${path}: ${message}`;
    if (this.#seenWarnings.has(text)) return;
    this.#seenWarnings.add(text);
    this.#warnings.push(text);
  }

  note(note: ModelNote): void {
    let key: string;
    try {
      key = compactJson(note);
    } catch {
      key = `${note.path}: ${note.kind}`; // a value that cannot be serialised (a cycle built in code)
    }
    if (this.#seenWarnings.has(key)) return;
    this.#seenWarnings.add(key);
    this.#warnings.push(note);
  }

  noteString(node: JsonObject, limits: GrammarStringLimits): void {
    this.#strings.set(node, limits);
  }

  noteExclusive(node: JsonObject, exclusive: ExclusiveBounds): void {
    this.#exclusive.set(node, exclusive);
  }

  noteNullable(node: JsonObject): void {
    this.#nullable.add(node);
  }

  countNode(path: string): void {
    if (++this.#nodes > MAX_NODES) {
      throw new SchemaError(`the schema has more than ${MAX_NODES} nodes`, path);
    }
  }

  noteOpenObject(name: string): void {
    this.#openObjects.push(name);
  }

  noteFreeForm(object: FreeFormObject): void {
    if (!this.#freeForm.some((seen) => seen.path === object.path)) this.#freeForm.push(object);
  }

  noteLiterals(node: JsonObject, values: readonly JsonValue[]): void {
    this.#literals.set(node, values);
  }

  newSlot(base: string): Slot {
    return { base, isRoot: false, used: false };
  }

  hasSlot(schema: JsonObject): boolean {
    return this.#slots.has(schema);
  }

  claim(slot: Slot, def: JsonObject): string {
    slot.name ??= this.#names.allocate(slot.base);
    slot.used = true;
    if (slot.isRoot) this.#rootDef = def;
    else this.#defs.set(slot.name, def);
    return slot.name;
  }

  refNode(slot: Slot): JsonObject {
    if (slot.isRoot) return { $ref: "#" };
    slot.name ??= this.#names.allocate(slot.base);
    return { $ref: `#/$defs/${escapePointerSegment(slot.name)}` };
  }

  checkPending(slot: Slot): void {
    if (!slot.used && slot.pending !== undefined) {
      throw new SchemaError(
        `recursive $ref '${slot.pending.ref}' must point to an object or union schema`,
        slot.pending.path,
      );
    }
  }

  convert(schema: JsonValue, pos: Position): Converted {
    this.countNode(pos.path);
    if (pos.depth > MAX_DEPTH) throw new SchemaError(DEPTH_MESSAGE, pos.path);
    if (schema === true) {
      this.warn(pos.path, "unconstrained schema `true` is generated as a string");
      return { node: { type: "string" }, nullable: false };
    }
    if (!isJsonObject(schema)) throw notASchema(schema, pos.path);
    checkKeywords(this, { schema, path: pos.path });
    const existing = this.#slots.get(schema);
    if (existing !== undefined && existing !== pos.slot) return this.#refTo(existing, pos.path);
    const slot = pos.slot ?? this.newSlot(pos.name);
    if (existing === undefined) this.#slots.set(schema, slot);
    const result = this.#dispatch(schema, { ...pos, slot });
    if (!slot.used) {
      if (existing === undefined) this.#slots.delete(schema);
      if (pos.slot === undefined) this.checkPending(slot);
    }
    return result;
  }

  // ---- dispatch -------------------------------------------------------------------------------------

  /** A reference to a type that is already known (possibly still in progress: recursion). */
  #refTo(slot: Slot, path: string): Converted {
    if (!slot.used && slot.pending === undefined) slot.pending = { ref: path, path };
    return { node: this.refNode(slot), description: slot.description, nullable: false };
  }

  #dispatch(schema: JsonObject, pos: Position): Converted {
    if (Object.hasOwn(schema, "$ref")) return convertRef(this, { schema, pos });
    const allOf = ownValue(schema, "allOf");
    if (Array.isArray(allOf)) {
      return this.convert(mergeAllOf(this, { schema, pos }), { ...pos, depth: pos.depth + 1 });
    }
    for (const key of ["anyOf", "oneOf"]) {
      const branches = ownValue(schema, key);
      if (Array.isArray(branches)) return convertUnion(this, { schema, pos, key, branches });
    }
    const values = ownValue(schema, "enum");
    if (Array.isArray(values) && values.length > 0) return convertEnum(this, { schema, pos, values });
    if (Object.hasOwn(schema, "const")) return convertConst(this, { schema, pos, value: schema.const });
    return convertTyped(this, { schema, pos });
  }
}
