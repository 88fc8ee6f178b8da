/**
 * `anyOf`/`oneOf` in the conversion: `null` branches make the value nullable, a single remaining branch is
 * used as is, branches that are all string literals become one string `enum`, and anything else becomes a
 * named union type (`{"title", "anyOf": [...]}`).
 * @module
 */
import { isJsonObject, type JsonObject, type JsonValue, ownValue, setOwn } from "../protocol/json.ts";
import { describe } from "./description.ts";
import { nonEmptyString, unique } from "./keyword_values.ts";
import { resolveLocalRef } from "./pointer.ts";
import { type Converted, MAX_DEPTH, type SchemaAt, type Walk } from "./walk.ts";

/** A union schema: its `anyOf` or `oneOf` keyword and branches. */
export interface UnionSchema extends SchemaAt {
  /** `anyOf` or `oneOf`. */
  key: string;
  /** The keyword's branches. */
  branches: JsonValue[];
}

/** Converts a union (`anyOf` or `oneOf`). */
export function convertUnion(walk: Walk, { schema, pos, key, branches }: UnionSchema): Converted {
  let nullable = false;
  const concrete: { branch: JsonValue; index: number }[] = [];
  branches.forEach((branch, index) => {
    if (isNullBranch(branch)) nullable = true;
    else concrete.push({ branch, index });
  });
  const description = describe(walk, { schema, path: pos.path });
  if (concrete.length === 0) {
    walk.warn(pos.path, "schema without a type is generated as a string");
    return { node: { type: "string" }, description, nullable: true };
  }
  if (concrete.length === 1) {
    const { branch, index } = concrete[0];
    const result = walk.convert(branch, {
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
  const literals = stringLiterals(walk.root, concrete.map((c) => c.branch), pos.depth);
  if (literals !== undefined) {
    return { node: { type: "string", enum: literals }, description, nullable };
  }
  const slot = pos.slot!;
  const def: JsonObject = {};
  const name = walk.claim(slot, def);
  slot.description = description;
  const nodes: JsonValue[] = concrete.map(({ branch, index }) => {
    const title = isJsonObject(branch) ? nonEmptyString(branch, "title") : undefined;
    const result = walk.convert(branch, {
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
  return { node: walk.refNode(slot), description, nullable };
}

/** True for a branch that only admits `null`. */
function isNullBranch(branch: JsonValue): boolean {
  if (!isJsonObject(branch)) return false;
  const type = ownValue(branch, "type");
  if (type === "null") return true;
  if (Array.isArray(type) && type.length > 0 && type.every((t) => t === "null")) return true;
  if (Object.hasOwn(branch, "const") && branch.const === null) return true;
  const values = ownValue(branch, "enum");
  return Array.isArray(values) && values.length > 0 && values.every((v) => v === null);
}

/** The string values when every branch is a string literal (`const` or string `enum`), else undefined. */
function stringLiterals(root: JsonValue, branches: JsonValue[], depth: number): string[] | undefined {
  const values: string[] = [];
  for (let branch of branches) {
    // Follow pure `$ref` chains without converting (bounded like every other chain).
    for (let hops = depth; isJsonObject(branch) && Object.hasOwn(branch, "$ref"); hops++) {
      const ref = branch.$ref;
      if (hops > MAX_DEPTH || typeof ref !== "string") return undefined;
      const resolution = resolveLocalRef(root, ref);
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
    const choices = ownValue(branch, "enum");
    if (!Array.isArray(choices) || choices.length === 0) return undefined;
    for (const choice of choices) {
      if (typeof choice !== "string") return undefined;
      values.push(choice);
    }
  }
  return unique(values);
}
