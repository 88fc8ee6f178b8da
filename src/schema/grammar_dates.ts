/**
 * GBNF for the `date` and `date-time` formats that admits only real calendar dates: node-llama-cpp's own
 * format rule takes any day up to 31 in any month (`2024-02-30`), which the answer's validation
 * (`schema/formats`) would then refuse, costing a retry. The time part is node-llama-cpp's (`13:45:00Z`, `13:45:00.000+02:00`).
 * @module
 */

/** Years divisible by 4 but not by 100, or by 400. */
const LEAP_YEAR =
  '( [0-9]{2} ( [02468] [48] | [2468] "0" | [13579] [26] ) | ( [02468] [048] | [13579] [26] ) "00" )';

/** A month and day: 31 days, 30 days, or February's first 28. */
const MONTH_DAY = [
  '( "0" [13578] | "1" [02] ) "-" ( "0" [1-9] | [12] [0-9] | "3" [01] )',
  '( "0" [469] | "11" ) "-" ( "0" [1-9] | [12] [0-9] | "30" )',
  '"02-" ( "0" [1-9] | "1" [0-9] | "2" [0-8] )',
].join(" | ");

/** `YYYY-MM-DD`, a real date (February 29 in leap years only). */
const DATE = `( [0-9]{4} "-" ( ${MONTH_DAY} ) | ${LEAP_YEAR} "-02-29" )`;

/** node-llama-cpp's time: `HH:MM:SS`, optional milliseconds, `Z` or an offset. */
const TIME =
  '( [01] [0-9] | "2" [0-3] ) ":" [0-5] [0-9] ":" [0-5] [0-9] ( "." [0-9]{3} )? ( "Z" | ( "+" | "-" ) ( [01] [0-9] | "2" [0-3] ) ":" [0-5] [0-9] )';

/**
 * The GBNF of a JSON string in `format` (`date` or `date-time`, quotes included); undefined for another
 * format (node-llama-cpp's own rule is kept).
 *
 * @example
 * ```ts
 * import { dateFormatGbnf } from "./grammar_dates.ts";
 * dateFormatGbnf("date"); // admits "2024-02-29", not "2023-02-29" or "2024-02-30"
 * dateFormatGbnf("time"); // undefined
 * ```
 */
export function dateFormatGbnf(format: string): string | undefined {
  const quote = '"\\""';
  if (format === "date") return `${quote} ${DATE} ${quote}`;
  if (format === "date-time") return `${quote} ${DATE} "T" ${TIME} ${quote}`;
  return undefined;
}
