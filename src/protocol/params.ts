/**
 * Typed access to request params with the spec's `-32602` messages (reference-behavior §2.4). `null` members
 * count as absent for every accessor, while `has` still sees the raw key (for "a present key wins" rules).
 * @module
 */
import { BridgeError } from "./errors.ts";
import { compactJson, isJsonObject, type JsonObject, type JsonValue } from "./json.ts";
import { didYouMean, nearestName } from "./edit_distance.ts";
import { MAX_DURATION_SECONDS } from "./npc_defaults.ts";

/**
 * The warning of an unknown member `member.key`, named `member.name` with its path, of an object whose members
 * are `known`:
 * "Unknown parameter '<name>' was ignored.", with "(did you mean '<known key>'?)" before the period when `key`
 * is a near miss of one (the rule of {@link nearestName}, as the client's persona files are checked).
 *
 * @example
 * ```ts
 * import { unknownParameter } from "./params.ts";
 * unknownParameter({ name: "persona.personalty", key: "personalty" }, ["name", "personality"]);
 * // "Unknown parameter 'persona.personalty' was ignored (did you mean 'personality'?)."
 * unknownParameter({ name: "colour", key: "colour" }, ["session", "model"]); // "Unknown parameter 'colour' was ignored."
 * ```
 */
export function unknownParameter(member: { name: string; key: string }, known: Iterable<string>): string {
  const { name, key } = member;
  return `Unknown parameter '${name}' was ignored${didYouMean(nearestName(key, [...known]))}.`;
}

/** Longest JSON shown in a "got …" message before it is cut. */
const SHOWN = 80;

/**
 * A short rendering of a value for error messages (cut to 77 UTF-16 units + "..." past 80; 76 when the 77th
 * is the first half of an emoji, so no half character is quoted).
 */
export function showValue(value: JsonValue): string {
  const text = compactJson(value);
  if (text.length <= SHOWN) return text;
  const half = text.charCodeAt(76) >= 0xd800 && text.charCodeAt(76) <= 0xdbff; // an emoji's first half
  return text.slice(0, half ? 76 : 77) + "...";
}

/** Largest safe integer magnitude for integer params. */
const MAX_INT = 2 ** 53;

/**
 * Bounds for numeric params.
 *
 * @example
 * ```ts
 * import { type Bounds, Params } from "@open-apple-models/bridge/engine";
 * const percent: Bounds = { min: 0, max: 100 };
 * Params.from({ chance: 40 }).optionalInteger("chance", percent); // 40 (150 fails with -32602)
 * ```
 */
export interface Bounds {
  /** Smallest allowed value. */
  min?: number;
  /** Largest allowed value. */
  max?: number;
}

function formatBound(n: number): string {
  return Number.isInteger(n) ? String(n) : String(n);
}

/**
 * Params of one request (or one nested object), with a path prefix for messages.
 *
 * @example
 * ```ts
 * import { Params } from "@open-apple-models/bridge/engine";
 * const p = Params.from({ session: "guard", stream: true });
 * p.string("session"); // "guard"
 * p.optionalBool("stream"); // true
 * ```
 */
export class Params {
  /** The raw object (may contain null members). */
  readonly raw: JsonObject;
  /** Prefix for parameter names in messages, e.g. `options.`. */
  readonly prefix: string;

  /** Wraps an object; `prefix` is prepended to keys in messages. */
  constructor(raw: JsonObject, prefix = "") {
    this.raw = raw;
    this.prefix = prefix;
  }

  /** Params from a request's `params` member: absent or null → `{}`; non-objects fail with -32602. */
  static from(params: JsonValue | undefined): Params {
    if (params === undefined || params === null) return NO_PARAMS;
    if (!isJsonObject(params)) throw BridgeError.invalidParams("params must be an object.");
    return new Params(params);
  }

  /** Full name of a key for messages. */
  name(key: string): string {
    return this.prefix + key;
  }

  /** True when the raw key is present (even with a null value). */
  has(key: string): boolean {
    return Object.hasOwn(this.raw, key);
  }

  /** The value of a key; null and absent both give undefined. */
  get(key: string): JsonValue | undefined {
    if (!Object.hasOwn(this.raw, key)) return undefined;
    const v = this.raw[key];
    return v === null ? undefined : v;
  }

  /**
   * The `-32602` error of a missing required parameter `key`: "Missing required parameter '<key>'.", with
   * `options.note` in parentheses (`use world/remove to delete`). Once {@link unknownKeys} or {@link expectKeys}
   * ran, it also names the unknown keys given, each with the key it most likely meant (their warnings never reach
   * a request that fails): a required key sent under another name is the usual cause.
   *
   * @example
   * ```ts
   * import { Params } from "@open-apple-models/bridge/engine";
   * const p = Params.from({ world: "village", vaule: 3 });
   * p.expectKeys(["world", "path", "value"]);
   * p.missingParameter("value", { note: "use world/remove to delete" }).message;
   * // "Missing required parameter 'value' (the unknown parameter 'vaule' (did you mean 'value'?) was ignored; use world/remove to delete)."
   * ```
   */
  missingParameter(key: string, options: { note?: string } = {}): BridgeError {
    const unknown = this.#allowed === undefined ? [] : this.#unknownNames(this.#allowed);
    const notes = unknown.length === 0 ? [] : [
      `the unknown parameter${unknown.length === 1 ? "" : "s"} ${listed(unknown)} ${
        unknown.length === 1 ? "was" : "were"
      } ignored`,
    ];
    if (options.note !== undefined) notes.push(options.note);
    const given = notes.length === 0 ? "" : ` (${notes.join("; ")})`;
    return BridgeError.invalidParams(`Missing required parameter '${this.name(key)}'${given}.`);
  }

  /** The keys {@link unknownKeys} or {@link expectKeys} was last given (for {@link missingParameter}'s message). */
  #allowed: readonly string[] | undefined;

  /** The unknown keys' names, each with the allowed key it most likely meant: `'lines' (did you mean 'line'?)`. */
  #unknownNames(allowed: readonly string[]): string[] {
    const names: string[] = [];
    for (const key in this.raw) {
      if (allowed.includes(key)) continue;
      names.push(`'${this.name(key)}'${didYouMean(nearestName(key, allowed))}`);
    }
    return names;
  }

  /** Error for a parameter of the wrong type. */
  private wrongType(key: string, what: string, value: JsonValue): BridgeError {
    return BridgeError.invalidParams(
      `Parameter '${this.name(key)}' must be ${what}; got ${showValue(value)}.`,
    );
  }

  /** The value at `key`, of any type; -32602 when it is absent or null. */
  value(key: string): JsonValue {
    const v = this.get(key);
    if (v === undefined) throw this.missingParameter(key);
    return v;
  }

  /** The string at `key`; -32602 when it is absent, null or not a string. */
  string(key: string): string {
    const v = this.optionalString(key);
    if (v === undefined) throw this.missingParameter(key);
    return v;
  }

  /** The string at `key`, or undefined when absent or null; -32602 when it is not a string. */
  optionalString(key: string): string | undefined {
    const v = this.get(key);
    if (v === undefined) return undefined;
    if (typeof v !== "string") throw this.wrongType(key, "a string", v);
    return v;
  }

  /** The boolean at `key`; -32602 when it is absent, null or not a boolean. */
  bool(key: string): boolean {
    const v = this.optionalBool(key);
    if (v === undefined) throw this.missingParameter(key);
    return v;
  }

  /** The boolean at `key`, or undefined when absent or null; -32602 when it is not a boolean. */
  optionalBool(key: string): boolean | undefined {
    const v = this.get(key);
    if (v === undefined) return undefined;
    if (typeof v !== "boolean") throw this.wrongType(key, "a boolean", v);
    return v;
  }

  /** An optional finite number within bounds. */
  optionalNumber(key: string, bounds: Bounds = {}): number | undefined {
    const v = this.get(key);
    if (v === undefined) return undefined;
    if (typeof v !== "number") throw this.wrongType(key, "a number", v);
    if (!Number.isFinite(v)) {
      throw BridgeError.invalidParams(`Parameter '${this.name(key)}' must be a finite number.`);
    }
    this.checkBounds(key, v, bounds);
    return v;
  }

  /** An optional integer (|n| < 2^53) within bounds. */
  optionalInteger(key: string, bounds: Bounds = {}): number | undefined {
    const v = this.get(key);
    if (v === undefined) return undefined;
    if (typeof v !== "number" || !Number.isInteger(v) || Math.abs(v) >= MAX_INT) {
      throw this.wrongType(key, "an integer", v);
    }
    this.checkBounds(key, v, bounds);
    return v;
  }

  /** A required integer within bounds. */
  integer(key: string, bounds: Bounds = {}): number {
    const v = this.optionalInteger(key, bounds);
    if (v === undefined) throw this.missingParameter(key);
    return v;
  }

  /** Throws when a number is outside its bounds. */
  private checkBounds(key: string, v: number, bounds: Bounds): void {
    if (bounds.min !== undefined && v < bounds.min) {
      throw BridgeError.invalidParams(
        `Parameter '${this.name(key)}' must be at least ${formatBound(bounds.min)}.`,
      );
    }
    if (bounds.max !== undefined && v > bounds.max) {
      throw BridgeError.invalidParams(
        `Parameter '${this.name(key)}' must be at most ${formatBound(bounds.max)}.`,
      );
    }
  }

  /** The array at `key`, or undefined when absent or null; -32602 when it is not an array. */
  optionalArray(key: string): JsonValue[] | undefined {
    const v = this.get(key);
    if (v === undefined) return undefined;
    if (!Array.isArray(v)) throw this.wrongType(key, "an array", v);
    return v;
  }

  /** The array at `key`; -32602 when it is absent, null or not an array. */
  array(key: string): JsonValue[] {
    const v = this.optionalArray(key);
    if (v === undefined) throw this.missingParameter(key);
    return v;
  }

  /** An optional array of strings. */
  optionalStringArray(key: string): string[] | undefined {
    const v = this.optionalArray(key);
    if (v === undefined) return undefined;
    return v.map((item, i) => {
      if (typeof item !== "string") {
        throw BridgeError.invalidParams(
          `Parameter '${this.name(key)}[${i}]' must be a string; got ${showValue(item)}.`,
        );
      }
      return item;
    });
  }

  /** An optional object, as raw JSON. */
  optionalObject(key: string): JsonObject | undefined {
    const v = this.get(key);
    if (v === undefined) return undefined;
    if (!isJsonObject(v)) throw this.wrongType(key, "an object", v);
    return v;
  }

  /** An optional nested object as Params with the key as prefix ("'<key>' must be an object." otherwise). */
  optionalParams(key: string): Params | undefined {
    const v = this.get(key);
    if (v === undefined) return undefined;
    if (!isJsonObject(v)) throw BridgeError.invalidParams(`'${this.name(key)}' must be an object.`);
    return new Params(v, `${this.name(key)}.`);
  }

  /**
   * An optional duration in seconds (0…86400, 0 = no limit), returned in milliseconds (`null` for no limit).
   * Absent gives `undefined`.
   */
  optionalSeconds(key: string): number | null | undefined {
    const v = this.get(key);
    if (v === undefined) return undefined;
    if (typeof v !== "number" || !Number.isFinite(v) || v < 0 || v > MAX_DURATION_SECONDS) {
      throw BridgeError.invalidParams(
        `Parameter '${
          this.name(key)
        }' must be a number of seconds from 0 to ${MAX_DURATION_SECONDS} (0 means no limit); got ${
          showValue(v)
        }.`,
      );
    }
    return v === 0 ? null : Math.round(v * 1000);
  }

  /**
   * Declares the keys the params may have without warning about the others, for a method whose result has no
   * `warnings` (`world/set`): a missing required parameter's error then names the unknown keys given, as after
   * {@link unknownKeys}.
   *
   * @example
   * ```ts
   * import { Params } from "@open-apple-models/bridge/engine";
   * const p = Params.from({ key: "gold" });
   * p.expectKeys(["world", "path"]);
   * p.optionalString("world"); // undefined: p.string("world") fails with -32602, and its message is
   * p.missingParameter("world").message; // "Missing required parameter 'world' (the unknown parameter 'key' was ignored)."
   * ```
   */
  expectKeys(allowed: readonly string[]): void {
    if (this !== NO_PARAMS) this.#allowed = allowed;
  }

  /**
   * Warnings for keys not in `allowed`, in request order: "Unknown parameter '<prefix><key>' was ignored.", with
   * the allowed key a near miss most likely meant (see {@link unknownParameter}).
   */
  unknownKeys(allowed: readonly string[]): string[] {
    this.expectKeys(allowed);
    const warnings: string[] = [];
    // for…in, not Object.keys: no array of keys per request (JSON objects have no inherited enumerable keys)
    for (const key in this.raw) {
      if (!allowed.includes(key)) warnings.push(unknownParameter({ name: this.name(key), key }, allowed));
    }
    return warnings;
  }
}

/** "'a'", "'a' and 'b'", "'a', 'b' and 'c'". */
function listed(names: readonly string[]): string {
  return names.length === 1 ? names[0] : `${names.slice(0, -1).join(", ")} and ${names[names.length - 1]}`;
}

/** The params of a request without any (shared: params are only read). */
const NO_PARAMS = new Params(Object.freeze({}) as JsonObject);
