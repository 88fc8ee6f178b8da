/**
 * What the keyword converters (objects, arrays, unions, `$ref`, …) see of one conversion: the position they
 * convert at, what they return, and the {@link Walk} that recurses, warns and names types. The walk itself
 * is `Converter` in `convert.ts`; the converters depend only on this interface, so no module imports back.
 * @module
 */
import type { JsonObject, JsonValue } from "../protocol/json.ts";
import type { FreeFormObject } from "./free_form.ts";
import type { GrammarStringLimits } from "./grammar_rules.ts";
import type { ExclusiveBounds } from "./grammar_numbers.ts";
import type { ModelNote } from "./model_notes.ts";

/** Maximum nesting (and `$ref` chain) depth. */
export const MAX_DEPTH = 32;
/** Upper bound on converted schema nodes (a schema this big would not fit the model's 8k-token context anyway). */
export const MAX_NODES = 20_000;
/** The error text of a schema deeper than {@link MAX_DEPTH}. */
export const DEPTH_MESSAGE = "the schema nests or references more than 32 levels deep";

/** A (possibly) named type under construction, shared by every schema object that denotes it. */
export interface Slot {
  /** The name the type is given when it becomes a named type. */
  readonly base: string;
  /** True for the root schema's slot. */
  readonly isRoot: boolean;
  /** The named type's name, once it is one. */
  name?: string;
  /** True once an object or union converter has turned it into a named type. */
  used: boolean;
  /** The named type's description, lifted to every property that references it. */
  description?: string;
  /** The first `$ref` that reached it while it was still being converted (and not yet named). */
  pending?: { ref: string; path: string };
}

/** Where a schema is converted. */
export interface Position {
  /** Schema path for warnings and errors. */
  path: string;
  /** Type name candidate for a named type created at this position. */
  name: string;
  /** Nesting depth (objects, arrays, unions and `$ref`s followed). */
  depth: number;
  /** The named type this position's schema denotes, if any. */
  slot?: Slot;
}

/** A converted schema node. */
export interface Converted {
  /** The generation-schema node. */
  node: JsonObject;
  /** Description lifted to the enclosing property, array or union. */
  description?: string;
  /** True when the schema also allows null. */
  nullable: boolean;
}

/** A schema object at a position: what every keyword converter is given. */
export interface SchemaAt {
  /** The schema object. */
  schema: JsonObject;
  /** Where it is converted. */
  pos: Position;
}

/** A schema whose type is decided: what the object, array, number and string converters are given. */
export interface TypedSchema extends SchemaAt {
  /** True when `null` is one of its types (the property becomes optional). */
  nullable: boolean;
  /** Full sentences the description gets (from `const`, integer `enum`). */
  sentences: string[];
}

/** One conversion in progress, as the keyword converters use it. */
export interface Walk {
  /** The whole input schema (the document local `$ref`s resolve against). */
  readonly root: JsonValue;
  /** Converts a subschema (counting it, bounding depth, and sharing named types by schema object identity). */
  convert(schema: JsonValue, pos: Position): Converted;
  /** Adds the warning `"<path>: <message>"` (once). */
  warn(path: string, message: string): void;
  /** Adds a warning whose text depends on the model (once; see `model_notes.ts`). */
  note(note: ModelNote): void;
  /** Counts one schema node; throws a `SchemaError` past {@link MAX_NODES}. */
  countNode(path: string): void;
  /** A fresh unnamed slot whose type name would be `base`. */
  newSlot(base: string): Slot;
  /** True when the schema object already denotes a slot (it is converted or being converted). */
  hasSlot(schema: JsonObject): boolean;
  /** Turns a slot into a named type whose definition is `def` and returns its name. */
  claim(slot: Slot, def: JsonObject): string;
  /** The `$ref` node that uses a slot's named type. */
  refNode(slot: Slot): JsonObject;
  /** Throws when a slot reached recursively did not become a named type (an inline cycle). */
  checkPending(slot: Slot): void;
  /**
   * Notes a named object type the JSON Schema leaves open to any members (no properties): the generation
   * schema holds it empty, a backend that can generate any object may.
   */
  noteOpenObject(name: string): void;
  /**
   * Notes an object with no properties whose members are not forbidden: the generation schema holds it empty;
   * whether that deserves a warning depends on the model ({@link FreeFormObject}).
   */
  noteFreeForm(object: FreeFormObject): void;
  /**
   * Notes a generation-schema node that stands for the JSON Schema's non-string `enum` or `const` values
   * (generated as strings, as a range, or only described there): a backend whose grammar takes any JSON
   * value (the GGUF grammar) generates the values themselves.
   */
  noteLiterals(node: JsonObject, values: readonly JsonValue[]): void;
  /**
   * Notes a generation-schema string node whose JSON Schema has constraints the GGUF grammar enforces
   * (`minLength`/`maxLength` or a `date`/`time`/`date-time` format) that the generation schema only describes.
   */
  noteString(node: JsonObject, limits: GrammarStringLimits): void;
  /**
   * Notes a generation-schema `number` node whose `minimum` or `maximum` stands for an exclusive bound (the
   * generation schema holds it as inclusive; the GGUF grammar of an answer enforces it as it is).
   */
  noteExclusive(node: JsonObject, exclusive: ExclusiveBounds): void;
  /**
   * Notes a generation-schema node that stands for a value that may be null (an object member left out of
   * `required`, an array item generated as its type): the GGUF grammar generates it as the type or null.
   */
  noteNullable(node: JsonObject): void;
}
