/**
 * A JSON Schema read from a file for `oam schema convert` and `oam respond --schema`, with its problems worded
 * for the file: the bridge names the schema "schema" and a part of it by its pointer ("schema: unsupported type
 * 'strin' (at #/properties/a)"); a person needs the file and the line ("mood.json: #/properties/a (line 3,
 * column 9): unsupported type 'strin'").
 * @module
 */
import type { JsonValue } from "../protocol/json.ts";
import { BridgeError } from "../protocol/errors.ts";
import { CliError } from "./cli_error.ts";
import { parseJsonc, readInputText } from "./input.ts";
import { placeInFile } from "./json_place.ts";

/** A schema file read and parsed (not yet checked as a schema). */
export interface SchemaFile {
  /** The parsed schema. */
  schema: JsonValue;
  /** How messages name the file: its path, or `<stdin>` for `-`. */
  label: string;
  /** The file and the place of `pointer` in it: "mood.json: #/properties/a (line 3, column 9)". */
  where(pointer: string): string;
}

/**
 * Reads and parses the schema at `path` (`-` for stdin; `flag` names what reads it, as in `readInputText`).
 *
 * @example
 * ```ts
 * import { readSchemaFile } from "./schema_file.ts";
 * const path = await Deno.makeTempFile({ suffix: ".json" });
 * await Deno.writeTextFile(path, '{\n  "properties": {"mood": {"enum": ["calm"]}}\n}');
 * const file = await readSchemaFile(path);
 * file.where("#/properties/mood"); // "<path>: #/properties/mood (line 2, column 26)"
 * await Deno.remove(path);
 * ```
 */
export async function readSchemaFile(path: string, flag?: string): Promise<SchemaFile> {
  const label = path === "-" ? "<stdin>" : path;
  const text = await readInputText(path, flag);
  const schema = parseJsonc(text, label);
  return { schema, label, where: (pointer) => placeInFile({ label, text }, pointer) };
}

/**
 * `error` worded for `file` when it is the bridge's refusal of the schema ("schema: … (at #/…)"), as an
 * `invalid_schema` CliError (exit 2); anything else is returned as it is.
 *
 * @example
 * ```ts
 * import { schemaProblemInFile } from "./schema_file.ts";
 * const file = { schema: {}, label: "a.json", where: (pointer: string) => `a.json: ${pointer}` };
 * schemaProblemInFile(new Error("other"), file); // the same Error
 * ```
 */
export function schemaProblemInFile(error: unknown, file: SchemaFile): unknown {
  const refused = schemaRefusal(error);
  if (refused === null || refused.path !== "schema") return error;
  return new CliError("invalid_schema", `${file.where(refused.pointer)}: ${refused.reason}`);
}

/**
 * The bridge's refusal of a schema, read from its error's data: `path` the param it refused (`schema`,
 * `tools[1].parameters`), `pointer` the part of the schema (`#/properties/a`) and `reason` the message
 * without the two; null for any other error.
 *
 * @example
 * ```ts
 * import { BridgeError } from "../protocol/errors.ts";
 * import { schemaRefusal } from "./schema_file.ts";
 * const data = { path: "schema", schemaPath: "#/properties/a" };
 * schemaRefusal(new BridgeError(-32007, "invalid_schema", "schema: bad type (at #/properties/a)", data));
 * // { path: "schema", pointer: "#/properties/a", reason: "bad type" }
 * ```
 */
export function schemaRefusal(error: unknown): { path: string; pointer: string; reason: string } | null {
  if (!(error instanceof BridgeError) || error.dataCode !== "invalid_schema") return null;
  const { path, schemaPath } = error.data;
  if (typeof path !== "string" || typeof schemaPath !== "string") return null;
  const head = `${path}: `;
  const tail = ` (at ${schemaPath})`;
  const message = error.message;
  if (!message.startsWith(head) || !message.endsWith(tail)) return null;
  return { path, pointer: schemaPath, reason: message.slice(head.length, message.length - tail.length) };
}

/** Warning `warning` of the bridge about the schema ("#/properties/a: …"), worded for `file`. */
export function schemaWarningInFile(warning: string, file: SchemaFile): string {
  const pointer = /^(#[^:\s]*): /.exec(warning)?.[1];
  return pointer === undefined
    ? `${file.label}: ${warning}`
    : `${file.where(pointer)}: ${warning.slice(pointer.length + 2)}`;
}
