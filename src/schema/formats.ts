/**
 * The string `format`s the llama and OpenAI-compatible backends check in an answer and a tool's arguments
 * (given to ajv as its `formats`). A format not named here is ignored, never an error: JSON Schema makes
 * formats open-ended.
 * @module
 */
import { isDate, isDateTime, isTime } from "./format_dates.ts";
import { isEmail, isHostname, isIpv4, isIpv6, isUri, isUuid } from "./format_names.ts";

/**
 * Each checked format and its test of a string.
 *
 * @example
 * ```ts
 * import { CHECKED_FORMATS } from "./formats.ts";
 * CHECKED_FORMATS.date("2024-02-29"); // true
 * CHECKED_FORMATS.date("2024-02-30"); // false
 * ```
 */
export const CHECKED_FORMATS: Readonly<Record<string, (text: string) => boolean>> = Object.freeze({
  "date": isDate,
  "time": isTime,
  "date-time": isDateTime,
  "email": isEmail,
  "hostname": isHostname,
  "ipv4": isIpv4,
  "ipv6": isIpv6,
  "uri": isUri,
  "uuid": isUuid,
});

/**
 * Whether the backends check `format` (see {@link CHECKED_FORMATS}).
 *
 * @example
 * ```ts
 * import { isCheckedFormat } from "./formats.ts";
 * isCheckedFormat("email"); // true
 * isCheckedFormat("color"); // false: ignored
 * ```
 */
export function isCheckedFormat(format: string): boolean {
  return Object.hasOwn(CHECKED_FORMATS, format);
}
