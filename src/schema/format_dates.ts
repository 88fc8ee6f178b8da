/**
 * The RFC 3339 string formats of JSON Schema, checked strictly: `date` (a full-date on the calendar, February
 * 29 in leap years only), `time` (a full-time: `HH:MM:SS`, an optional fraction, `Z` or a `±HH:MM` offset) and
 * `date-time` (both joined by `T`). RFC 3339 §5.6 allows a lower-case `t` and `z`; hours run 00-23 (no
 * `24:00:00`), and a leap second (`:60`) only at 23:59 UTC, in a `date-time` only on a month's last day.
 * @module
 */

const DATE = /^([0-9]{4})-([0-9]{2})-([0-9]{2})$/;
const TIME = /^([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.[0-9]+)?(?:[Zz]|([+-])([0-9]{2}):([0-9]{2}))$/;

/** Days of `month` (1-12) in `year` (Gregorian: leap years divisible by 4, not by 100 unless by 400). */
function daysIn(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

/** A full-date's year, month and day, or null. */
function parseDate(text: string): [number, number, number] | null {
  const match = DATE.exec(text);
  if (match === null) return null;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  if (month < 1 || month > 12 || day < 1 || day > daysIn(year, month)) return null;
  return [year, month, day];
}

/** A full-time as its UTC minute of the day (may fall on the day before or after) and its second, or null. */
function parseTime(text: string): { utcMinute: number; second: number } | null {
  const match = TIME.exec(text);
  if (match === null) return null;
  const [hour, minute, second] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const sign = match[4] === "-" ? -1 : 1;
  const [offsetHour, offsetMinute] = [Number(match[5] ?? 0), Number(match[6] ?? 0)];
  if (hour > 23 || minute > 59 || second > 60 || offsetHour > 23 || offsetMinute > 59) return null;
  return { utcMinute: hour * 60 + minute - sign * (offsetHour * 60 + offsetMinute), second };
}

/** 23:59 UTC, the only minute with a leap second. */
const LAST_MINUTE = 23 * 60 + 59;

/**
 * Whether `text` is an RFC 3339 full-date on the calendar.
 *
 * @example
 * ```ts
 * import { isDate } from "./format_dates.ts";
 * isDate("2024-02-29"); // true
 * isDate("2023-02-29"); // false
 * ```
 */
export function isDate(text: string): boolean {
  return parseDate(text) !== null;
}

/**
 * Whether `text` is an RFC 3339 full-time (with its offset).
 *
 * @example
 * ```ts
 * import { isTime } from "./format_dates.ts";
 * isTime("13:45:00.5+02:00"); // true
 * isTime("23:59:60Z"); // true: a leap second
 * isTime("24:00:00Z"); // false
 * ```
 */
export function isTime(text: string): boolean {
  const time = parseTime(text);
  if (time === null) return false;
  return time.second < 60 || (time.utcMinute + 24 * 60) % (24 * 60) === LAST_MINUTE;
}

/**
 * Whether `text` is an RFC 3339 date-time: a real date, `T` (or `t`), a full-time.
 *
 * @example
 * ```ts
 * import { isDateTime } from "./format_dates.ts";
 * isDateTime("2024-05-01T13:45:00.000+02:00"); // true
 * isDateTime("1998-12-31T23:59:60Z"); // true: a leap second
 * isDateTime("2024-05-01 13:45:00Z"); // false
 * ```
 */
export function isDateTime(text: string): boolean {
  const at = text.search(/[Tt]/);
  if (at < 0) return false;
  const date = parseDate(text.slice(0, at));
  const time = parseTime(text.slice(at + 1));
  if (date === null || time === null) return false;
  if (time.second < 60) return true;
  // The UTC day is the local one, the one before or the one after (an offset is less than a day).
  const shift = Math.floor(time.utcMinute / (24 * 60));
  if (time.utcMinute - shift * 24 * 60 !== LAST_MINUTE) return false;
  const [year, month, day] = date;
  if (shift < 0) return day === 1;
  return day + shift === daysIn(year, month);
}
