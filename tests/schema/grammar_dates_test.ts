/** The GGUF grammar's date rule admits real calendar dates only (read as a RegExp; no model needed). */
import assert from "node:assert/strict";
import { dateFormatGbnf } from "../../src/schema/grammar_dates.ts";
import { gbnfToRegExp } from "../helpers/gbnf_regexp.ts";

function isRealDate(year: number, month: number, day: number): boolean {
  const date = new Date(Date.UTC(2000, month - 1, day));
  date.setUTCFullYear(year);
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

const pad = (n: number, width: number) => String(n).padStart(width, "0");

Deno.test("date format: every day of leap and common years, and no day that does not exist", () => {
  const rule = gbnfToRegExp(dateFormatGbnf("date")!);
  for (const year of [1900, 1999, 2000, 2023, 2024, 2100, 2400, 4]) {
    for (let month = 0; month <= 13; month++) {
      for (let day = 0; day <= 32; day++) {
        const text = `"${pad(year, 4)}-${pad(month, 2)}-${pad(day, 2)}"`;
        const real = month >= 1 && month <= 12 && day >= 1 && isRealDate(year, month, day);
        assert.equal(rule.test(text), real, text);
      }
    }
  }
  assert.ok(!rule.test('"2024-2-3"') && !rule.test("2024-02-03"));
});

Deno.test("date-time format: a real date, node-llama-cpp's time", () => {
  const rule = gbnfToRegExp(dateFormatGbnf("date-time")!);
  assert.ok(rule.test('"2024-02-29T13:45:00Z"') && rule.test('"2024-05-01T13:45:00.000+02:00"'));
  assert.ok(!rule.test('"2024-02-30T13:45:00Z"') && !rule.test('"2023-02-29T13:45:00Z"'));
  assert.ok(!rule.test('"2024-05-01T24:00:00Z"') && !rule.test('"2024-05-01T13:45:00"'));
  assert.equal(dateFormatGbnf("time"), undefined);
});
