/**
 * The GBNF rules the GGUF grammar uses where node-llama-cpp's JSON-schema grammar has no numeric bounds:
 * checked exhaustively on small windows by reading each rule as a RegExp (no model needed).
 */
import assert from "node:assert/strict";
import { gbnfLiteral, integerRangeGbnf, numberRangeGbnf } from "../../src/schema/grammar_numbers.ts";
import { gbnfToRegExp } from "../helpers/gbnf_regexp.ts";

function integerRule(low: number | undefined, high: number | undefined): RegExp {
  const rule = integerRangeGbnf(low, high);
  assert.ok(rule !== undefined, `no rule for ${low}...${high}`);
  return gbnfToRegExp(rule);
}

function numberRule(
  low: number | undefined,
  high: number | undefined,
  exclusive: { low?: boolean; high?: boolean } = {},
): RegExp {
  const rule = numberRangeGbnf({ low, high, exclusive });
  assert.ok(rule !== undefined, `no rule for ${low}...${high}`);
  return gbnfToRegExp(rule);
}

Deno.test("integer ranges: exactly the integers between the bounds, as JSON writes them", () => {
  const ranges: [number, number][] = [
    [0, 0],
    [1, 1000],
    [0, 9],
    [5, 5],
    [7, 123],
    [-3, 3],
    [-120, -7],
    [-1, 0],
    [99, 101],
    [10, 1999],
    [0, 100],
    [-1000, 1000],
    [37, 4521],
    [1, 10],
    [0, 1],
  ];
  for (const [low, high] of ranges) {
    const rule = integerRule(low, high);
    for (let n = low - 60; n <= high + 60; n++) {
      assert.equal(rule.test(String(n)), n >= low && n <= high, `${n} in ${low}...${high}`);
    }
    assert.equal(rule.test(`0${Math.max(low, 1)}`), false, "no leading zero");
    assert.equal(rule.test("-0"), false);
    assert.equal(rule.test(`${low}.0`), false, "no fraction");
  }
  // Wide ranges, sampled.
  for (const [low, high] of [[1, 1_000_000], [-987_654, 12_345_678]] as [number, number][]) {
    const rule = integerRule(low, high);
    let seed = 7;
    for (let k = 0; k < 5000; k++) {
      seed = (seed * 1103515245 + 12345) % 2147483648; // a fixed sequence: the same samples every run
      const n = Math.round((seed / 2147483648 - 0.5) * 3 * Math.max(Math.abs(low), Math.abs(high)));
      assert.equal(rule.test(String(n)), n >= low && n <= high, `${n} in ${low}...${high}`);
    }
  }
});

Deno.test("integer ranges: half-open, non-integer and huge bounds", () => {
  const gold = integerRule(0, undefined);
  assert.ok(gold.test("0") && gold.test("1500") && gold.test("9999999999999999"));
  assert.ok(!gold.test("-3") && !gold.test("-1") && !gold.test("10000000000000000"));
  const debt = integerRule(undefined, -1);
  assert.ok(debt.test("-1") && debt.test("-9999999999999999") && !debt.test("0"));
  const inward = integerRule(0.5, 3.5);
  assert.deepEqual(["0", "1", "2", "3", "4"].map((s) => inward.test(s)), [false, true, true, true, false]);
  const safe = integerRule(-(2 ** 53), 2 ** 53);
  assert.ok(safe.test(String(2 ** 53)) && safe.test(String(-(2 ** 53))) && safe.test("0"));
  assert.ok(!safe.test(String(2 ** 53 + 2)));
  // Bounds past the grammar's 16 digits: open on the side they leave open, nothing on the side they close.
  assert.ok(integerRule(-1e300, 1e300).test("-42"));
  assert.equal(integerRangeGbnf(1e300, undefined), undefined);
  assert.equal(integerRangeGbnf(undefined, -1e300), undefined);
  assert.equal(integerRangeGbnf(5, 4), undefined);
  assert.equal(integerRangeGbnf(0.2, 0.8), undefined);
});

Deno.test("number ranges: the numbers between the bounds, with a fraction", () => {
  const ranges: [number, number][] = [
    [0, 1],
    [0.25, 0.75],
    [-1.5, 2.25],
    [-10, -0.5],
    [0.05, 0.3],
    [1, 1],
    [2.5, 2.5],
    [0.3, 0.31],
    [-0.75, -0.25],
    [9.99, 10.01],
    [0, 100],
    [1.5, 3],
    [0.1, 0.19],
  ];
  for (const [low, high] of ranges) {
    for (const exclusive of [{}, { low: true }, { high: true }, { low: true, high: true }]) {
      if (low === high && (exclusive.low === true || exclusive.high === true)) {
        assert.equal(numberRangeGbnf({ low, high, exclusive }), undefined);
        continue;
      }
      const rule = numberRule(low, high, exclusive);
      const above = (n: number) => exclusive.low === true ? n > low : n >= low;
      const below = (n: number) => exclusive.high === true ? n < high : n <= high;
      const span = high - low + 2;
      for (let k = -100; k <= 300; k++) {
        const value = low - 1 + (span * k) / 200;
        for (
          const text of [0, 1, 2, 3].map((digits) => value.toFixed(digits)).concat([`${value.toFixed(2)}0`])
        ) {
          const parsed = Number(text);
          // -0 is 0: the grammar may write either where 0 is in the range
          if (/^-0(\.0*)?$/.test(text) && above(0) && below(0)) continue;
          const name = `${text} in ${low}...${high} ${JSON.stringify(exclusive)}`;
          assert.equal(rule.test(text), above(parsed) && below(parsed), name);
        }
      }
      assert.equal(rule.test(`${low}e0`), false, "no exponent");
    }
  }
});

Deno.test("number ranges: exclusive bounds at 0 and 1 (a positive amount, a confidence below 1)", () => {
  const positive = numberRule(0, undefined, { low: true });
  assert.ok(positive.test("0.001") && positive.test("3") && !positive.test("0") && !positive.test("0.000"));
  assert.ok(!positive.test("-0") && !positive.test("-1"));
  const confidence = numberRule(0, 1, { high: true });
  assert.ok(
    confidence.test("0.99") && confidence.test("0") && !confidence.test("1") && !confidence.test("1.0"),
  );
  const negative = numberRule(undefined, 0, { high: true });
  assert.ok(negative.test("-0.5") && !negative.test("0") && !negative.test("-0") && !negative.test("-0.00"));
});

Deno.test("number ranges: half-open, tiny and huge bounds", () => {
  const confidence = numberRule(0, undefined);
  assert.ok(confidence.test("0") && confidence.test("0.5") && confidence.test("1500.25"));
  assert.ok(!confidence.test("-0.5") && !confidence.test("-3"));
  const tiny = numberRule(1e-7, 1);
  assert.ok(tiny.test("0.0000001") && tiny.test("0.5") && !tiny.test("0.00000009") && !tiny.test("0"));
  const sum = numberRule(0.1 + 0.2, 1);
  assert.ok(sum.test("0.31") && !sum.test("0.3"));
  assert.ok(numberRule(-1e300, 1e300).test("-12.5"));
  assert.equal(numberRangeGbnf({ low: 1e300 }), undefined);
  assert.equal(numberRangeGbnf({ high: -1e300 }), undefined);
  assert.equal(numberRangeGbnf({ low: 1e-300, high: 1 }), undefined, "too many fraction digits to write");
  assert.equal(numberRangeGbnf({ low: 2, high: 1 }), undefined);
});

Deno.test("rules stay small and use small repetitions", () => {
  const rules = [
    integerRangeGbnf(-(2 ** 53), 2 ** 53),
    integerRangeGbnf(123_456_789, 987_654_321_012),
    numberRangeGbnf({ low: -123456.789, high: 987654.321 }),
    numberRangeGbnf({ low: 0.1 + 0.2 }),
  ];
  for (const rule of rules) {
    assert.ok(rule !== undefined && rule.length < 4000, `${rule?.length} characters`);
    for (const [, count] of rule.matchAll(/\{(\d+)/g)) assert.ok(Number(count) <= 16, rule);
  }
});

Deno.test("literals: quotes, backslashes and newlines are escaped", () => {
  const text = '{"say":"a\\"b\\n"}\n';
  assert.ok(gbnfToRegExp(gbnfLiteral(text)).test(text));
});
