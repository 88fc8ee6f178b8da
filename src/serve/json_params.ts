/**
 * Typed access to the members of a request body object that names the failing field in OpenAI errors
 * (`messages[2].content`). `null` members count as absent. Keys come from the client: only own properties are
 * read.
 * @module
 */
import { isJsonObject, type JsonObject, type JsonValue } from "../protocol/json.ts";
import { OpenAIError } from "./openai_error.ts";

/** OpenAI's limits on a tool or schema name. */
const NAME_PATTERN = /^[a-zA-Z0-9_-]+$/;
const MAX_NAME_LENGTH = 64;

/**
 * One object of a request body and its path.
 *
 * @example
 * ```ts
 * import { JsonParams } from "./json_params.ts";
 * const p = JsonParams.of({ model: "system", n: 2 }, "");
 * p.string("model"); // "system"
 * p.integer("n"); // 2
 * ```
 */
export class JsonParams {
  readonly object: JsonObject;
  /** Its path in the body (`""` for the body itself). */
  readonly path: string;

  /** Wraps an object found at `path`. */
  constructor(object: JsonObject, path: string) {
    this.object = object;
    this.path = path;
  }

  /** Wraps `value`, which must be an object. */
  static of(value: JsonValue, path: string): JsonParams {
    if (!isJsonObject(value)) {
      throw OpenAIError.invalidRequest(
        `${path === "" ? "The request body" : `'${path}'`} must be an object.`,
        path === "" ? null : path,
        path === "" ? null : "invalid_type",
      );
    }
    return new JsonParams(value, path);
  }

  /** The full name of member `key`. */
  param(key: string): string {
    return this.path === "" ? key : `${this.path}.${key}`;
  }

  /** The raw member, undefined when absent or null. */
  value(key: string): JsonValue | undefined {
    if (!Object.hasOwn(this.object, key)) return undefined;
    const v = this.object[key];
    return v === null ? undefined : v;
  }

  /** True when the member is present and not null. */
  has(key: string): boolean {
    return this.value(key) !== undefined;
  }

  /** An optional string. */
  string(key: string): string | undefined {
    const v = this.value(key);
    if (v === undefined) return undefined;
    if (typeof v !== "string") throw this.typeError(key, "a string");
    return v;
  }

  requiredString(key: string): string {
    const v = this.string(key);
    if (v === undefined) throw this.missing(key);
    return v;
  }

  /** An optional boolean. */
  bool(key: string): boolean | undefined {
    const v = this.value(key);
    if (v === undefined) return undefined;
    if (typeof v !== "boolean") throw this.typeError(key, "a boolean");
    return v;
  }

  /** An optional finite number. */
  number(key: string): number | undefined {
    const v = this.value(key);
    if (v === undefined) return undefined;
    if (typeof v !== "number" || !Number.isFinite(v)) throw this.typeError(key, "a number");
    return v;
  }

  /** An optional integer (a safe one). */
  integer(key: string): number | undefined {
    const v = this.value(key);
    if (v === undefined) return undefined;
    if (typeof v !== "number" || !Number.isSafeInteger(v)) throw this.typeError(key, "an integer");
    return v;
  }

  /** An optional array. */
  array(key: string): JsonValue[] | undefined {
    const v = this.value(key);
    if (v === undefined) return undefined;
    if (!Array.isArray(v)) throw this.typeError(key, "an array");
    return v;
  }

  /** An optional object. */
  child(key: string): JsonParams | undefined {
    const v = this.value(key);
    if (v === undefined) return undefined;
    if (!isJsonObject(v)) throw this.typeError(key, "an object");
    return new JsonParams(v, this.param(key));
  }

  /** A required object. */
  requiredChild(key: string): JsonParams {
    const c = this.child(key);
    if (c === undefined) throw this.missing(key);
    return c;
  }

  /**
   * A required name as OpenAI checks one (tool and schema names): 1–64 ASCII letters, digits, `_` or `-`,
   * refused with OpenAI's own messages and codes (`empty_string`, `string_above_max_length`, `invalid_value`).
   * `hint` follows the message of a name with other characters.
   */
  name(key: string, hint = ""): string {
    const name = this.requiredString(key);
    const field = `Invalid '${this.param(key)}'`;
    if (name === "") {
      throw this.#refuse(
        key,
        `${field}: empty string. Expected a string with minimum length 1, but got an empty string instead.`,
        "empty_string",
      );
    }
    if (name.length > MAX_NAME_LENGTH) {
      throw this.#refuse(
        key,
        `${field}: string too long. Expected a string with maximum length ${MAX_NAME_LENGTH}, but got a ` +
          `string with length ${name.length} instead.`,
        "string_above_max_length",
      );
    }
    if (!NAME_PATTERN.test(name)) {
      throw this.#refuse(
        key,
        `${field}: string does not match pattern. Expected a string that matches the pattern ` +
          `'^[a-zA-Z0-9_-]+$'.${hint === "" ? "" : ` ${hint}`}`,
        "invalid_value",
      );
    }
    return name;
  }

  /** An optional array of at least one item (OpenAI's `empty_array` otherwise). */
  nonEmptyArray(key: string): JsonValue[] | undefined {
    const list = this.array(key);
    if (list?.length === 0) {
      const message =
        `Invalid '${this.param(key)}': empty array. Expected an array with minimum length 1, but ` +
        "got an empty array instead.";
      throw this.#refuse(key, message, "empty_array");
    }
    return list;
  }

  /** An optional number within `[min, max]`, refused as OpenAI does (`decimal_above_max_value`, …). */
  numberIn(key: string, min: number, max: number): number | undefined {
    const v = this.number(key);
    if (v !== undefined) this.#checkBounds(key, v, "decimal", min, max);
    return v;
  }

  /** An optional integer of at least `min`, refused as OpenAI does (`integer_below_min_value`). */
  integerAtLeast(key: string, min: number): number | undefined {
    const v = this.integer(key);
    if (v !== undefined) this.#checkBounds(key, v, "integer", min, Infinity);
    return v;
  }

  #checkBounds(key: string, v: number, kind: "decimal" | "integer", min: number, max: number): void {
    if (v >= min && v <= max) return;
    const below = v < min;
    const expected = below ? `>= ${min}` : `<= ${max}`;
    throw this.#refuse(
      key,
      `Invalid '${this.param(key)}': ${kind} ${
        below ? "below minimum" : "above maximum"
      } value. Expected a ` +
        `value ${expected}, but got ${v} instead.`,
      `${kind}_${below ? "below_min" : "above_max"}_value`,
    );
  }

  #refuse(key: string, message: string, code: string): OpenAIError {
    return OpenAIError.invalidRequest(message, this.param(key), code);
  }

  /** 400 `missing_required_parameter`. */
  missing(key: string): OpenAIError {
    return OpenAIError.invalidRequest(
      `Missing required parameter: '${this.param(key)}'.`,
      this.param(key),
      "missing_required_parameter",
    );
  }

  /** 400 `invalid_type`. */
  typeError(key: string, expected: string): OpenAIError {
    return OpenAIError.invalidRequest(
      `Invalid type for '${this.param(key)}': expected ${expected}.`,
      this.param(key),
      "invalid_type",
    );
  }

  /** 400 `invalid_value` with `message`. */
  invalid(key: string, message: string): OpenAIError {
    return OpenAIError.invalidRequest(message, this.param(key), "invalid_value");
  }
}
