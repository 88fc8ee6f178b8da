/**
 * GBNF for the `uuid` and `ipv4` formats, exactly what validation accepts (`format_names.ts`): node-llama-cpp's
 * JSON-schema grammar knows neither, so a structured answer's grammar puts these rules in place of the string
 * (`src/models/llama_schema.ts`). `hostname` is left to validation: its 253-character limit over labels of up
 * to 63 would make a rule as large as the rest of a grammar.
 * @module
 */

/** One hex digit, either case. */
const HEX = "[0-9A-Fa-f]";

/** 8-4-4-4-12 hex digits. */
const UUID = [8, 4, 4, 4, 12].map((n) => `${HEX}{${n}}`).join(' "-" ');

/** A decimal number 0-255 without leading zeros. */
const OCTET = '( "25" [0-5] | "2" [0-4] [0-9] | "1" [0-9] [0-9] | [1-9] [0-9] | [0-9] )';

/** Four octets, dot-separated. */
const IPV4 = `${OCTET} "." ${OCTET} "." ${OCTET} "." ${OCTET}`;

/** The formats this module writes, by name. */
const RULES: Readonly<Record<string, string>> = { uuid: UUID, ipv4: IPV4 };

/** The `format`s a structured answer's grammar generates with {@link nameFormatGbnf}. */
export const NAME_FORMATS: readonly string[] = Object.keys(RULES);

/**
 * The GBNF of a JSON string in `format` (`uuid` or `ipv4`, quotes included); undefined for another format.
 *
 * @example
 * ```ts
 * import { nameFormatGbnf } from "./grammar_names.ts";
 * nameFormatGbnf("ipv4"); // admits "192.168.0.1", not "192.168.0.256" or "192.168.0.01"
 * nameFormatGbnf("email"); // undefined
 * ```
 */
export function nameFormatGbnf(format: string): string | undefined {
  if (!Object.hasOwn(RULES, format)) return undefined;
  const quote = '"\\""';
  return `${quote} ${RULES[format]} ${quote}`;
}
