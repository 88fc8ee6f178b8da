/** decodeLine edge cases not easily reached through the engine: surrogates, escapes and depth. */
import assert from "node:assert/strict";
import {
  copyIncoming,
  copyJson,
  copyMessage,
  decodeLine,
  encodeClientMessage,
  encodeMessage,
  jsonNumber,
} from "../../src/protocol/codec.ts";
import type { JsonValue } from "../../src/protocol/json.ts";
import { jsonErrorAt } from "../../src/protocol/json_error_at.ts";

function kind(line: string): string {
  const m = decodeLine(line);
  return m.kind === "invalid" ? `invalid:${m.error.code}:${m.error.message}` : m.kind;
}

Deno.test("unpaired surrogates are rejected, raw or escaped; pairs and escaped backslashes are fine", () => {
  const req = (s: string) => `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"s":"${s}"}}`;
  assert.equal(kind(req("\\ud83d\\ude00")), "request");
  assert.equal(kind(req("\\uD83D\\uDE00 and \\u00e9")), "request");
  assert.equal(kind(req("😀")), "request");
  assert.equal(kind(req("\\\\ud800")), "request"); // a backslash followed by the text ud800
  assert.equal(kind(req('\\"\\\\\\ud83d\\ude00')), "request");
  assert.match(kind(req("\\ud800")), /^invalid:-32700:Invalid JSON at byte 55: unpaired UTF-16 surrogate/);
  assert.match(kind(req("ab\\udc00")), /^invalid:-32700:Invalid JSON at byte 57: /);
  assert.match(kind(req("\\ud800\\u0041")), /^invalid:-32700:/);
  assert.match(kind(req("\\ud800x")), /^invalid:-32700:/);
  assert.match(kind(req("\\\\\\ud800")), /^invalid:-32700:/);
  assert.match(kind(req("\ud800")), /^invalid:-32700:/);
  assert.match(kind(req("\udfff\ud800")), /^invalid:-32700:/);
  assert.match(kind(`{"jsonrpc":"2.0","id":"\\udc00","method":"ping"}`), /^invalid:-32700:/);
  assert.match(kind(`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"\\ud800":1}}`), /^invalid:-32700:/);
});

Deno.test("parse error messages give the byte offset of the offending character", () => {
  const at = (line: string) => /^invalid:-32700:Invalid JSON at byte (\d+): /.exec(kind(line))?.[1];
  // V8 names a position for these.
  assert.equal(at('{"a":'), "5");
  assert.equal(at('{"a":1,}'), "7");
  assert.equal(at('{"a" 1}'), "5");
  // V8 names none for an unexpected token: the character is found by a scan (it was the end of the line).
  assert.equal(at("not json"), "1");
  assert.equal(at("x"), "0");
  assert.equal(at('{"a":tru}'), "8");
  assert.equal(at('{"é":x}'), "6"); // bytes, not UTF-16 units: é is two
  assert.equal(at('{"jsonrpc":"2.0","id":1,"method":ping}'), "33");
});

Deno.test("jsonErrorAt: -1 exactly for valid JSON, and V8's position wherever V8 names one", () => {
  assert.equal(jsonErrorAt('{"a":[1,-2.5e+3,true,false,null,"\\u00e9\\n",{}],"":[]}'), -1);
  assert.equal(jsonErrorAt("[".repeat(100_000)), 100_000); // deep nesting needs no stack
  assert.equal(jsonErrorAt(" 12 "), -1);
  // Random edits of valid messages, checked against JSON.parse (seeded: the same cases every run).
  let seed = 7;
  const random = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  const bases = [
    '{"jsonrpc":"2.0","id":1,"params":{"a":[1,2.5e3,-0.1,true,false,null,"x\\u00e9\\n"]}}',
    '[[[]],{},{"":""}]',
  ];
  const alphabet = '{}[],:"\\0123456789-+.eEtrufalsn \t\nxu';
  let positioned = 0;
  for (let i = 0; i < 20_000; i++) {
    let text = bases[i % bases.length];
    for (let edits = 1 + Math.floor(random() * 3); edits > 0; edits--) {
      const k = Math.floor(random() * (text.length + 1));
      const ch = alphabet[Math.floor(random() * alphabet.length)];
      const op = random();
      text = text.slice(0, k) + (op < 0.66 ? ch : "") + text.slice(op < 0.33 ? k : k + 1);
    }
    let v8: number | null = null;
    let valid = true;
    try {
      JSON.parse(text);
    } catch (error) {
      valid = false;
      const m = /position (\d+)/.exec(String(error));
      if (m) v8 = Number(m[1]);
    }
    const scanned = jsonErrorAt(text);
    assert.equal(scanned === -1, valid, JSON.stringify(text));
    if (v8 !== null) {
      positioned++;
      assert.equal(scanned, v8, JSON.stringify(text));
    }
  }
  assert.ok(positioned > 5_000, `${positioned} cases had a V8 position`);
});

Deno.test("encodeMessage escapes line separators and never emits a newline", () => {
  const line = encodeMessage({ a: "x\ny\u2028z\u2029", b: [1.5, 9007199254740991] });
  assert.equal(line, '{"a":"x\\ny\\u2028z\\u2029","b":[1.5,9007199254740991]}');
});

/** What the wire makes of a value: its JSON text, parsed. */
const wire = (value: unknown) => JSON.parse(JSON.stringify(value));

/** Every object and array reachable from `value`. */
function containers(value: unknown, out = new Set<object>()): Set<object> {
  if (typeof value === "object" && value !== null && !out.has(value)) {
    out.add(value);
    for (const item of Object.values(value)) containers(item, out);
  }
  return out;
}

Deno.test("copyMessage and copyJson equal the JSON round trip and share nothing with the original", () => {
  const nullProto = Object.assign(Object.create(null), { a: 1 });
  const sparse = [1, , 3]; // a hole is written as null
  const values: unknown[] = [
    { jsonrpc: "2.0", id: 1, result: { line: "Hi.", options: ["a", "b"], usage: { tokens: 3 }, empty: {} } },
    { skipped: undefined, fn: () => 1, sym: Symbol("s"), kept: "yes", [Symbol("key")]: 1 },
    [undefined, () => 1, Symbol("s"), null, sparse],
    { minusZero: -0, nested: [-0], big: 1e300, small: 5e-324, max: Number.MAX_SAFE_INTEGER },
    { nullProto, "10": "ten", "2": "two", b: 1, a: 2 },
    { text: "\ud800 lone, \u2028 line separator, 😀" },
    { deep: JSON.parse("[".repeat(98) + "1" + "]".repeat(98)) }, // the innermost array at depth 100
  ];
  for (const value of values) {
    const message = { jsonrpc: "2.0", method: "x", params: value };
    const copy = copyMessage(message);
    assert.notEqual(copy, null, JSON.stringify(value));
    assert.deepStrictEqual(copy, wire(message));
    assert.deepStrictEqual(Object.keys(copy!.params as object), Object.keys(wire(value))); // same key order
    const shared = [...containers(copy)].filter((c) => containers(message).has(c));
    assert.deepStrictEqual(shared, [], "the copy shares no object or array with the message");
    assert.deepStrictEqual(copyJson(value as JsonValue), wire(value));
  }
  assert.equal(Object.is(copyJson(-0), 0), true);
  assert.deepStrictEqual([jsonNumber(-0), jsonNumber(2.5), jsonNumber(NaN), jsonNumber(-Infinity)], [
    0,
    2.5,
    null,
    null,
  ]);
  assert.equal(Object.is(jsonNumber(-0), 0), true);
});

Deno.test("copyMessage declines (null) what its JSON text does not copy plainly; copyIncoming also what the decoder rejects", () => {
  class Point {
    x = 1;
  }
  const cycle: Record<string, unknown> = {};
  cycle.self = cycle;
  const throwing = {
    get boom(): string {
      throw new Error("no");
    },
  };
  const declined: Record<string, unknown> = {
    date: new Date(0),
    toJSON: { toJSON: () => "x" },
    hiddenToJSON: Object.defineProperty({}, "toJSON", { value: () => "x", enumerable: false }),
    instance: new Point(),
    map: new Map([["a", 1]]),
    boxed: new String("s"),
    nan: NaN,
    infinity: [Infinity],
    bigint: 1n,
    proto: JSON.parse('{"__proto__": {"a": 1}}'),
    cycle,
    tooDeep: JSON.parse("[".repeat(100) + "1" + "]".repeat(100)),
    getter: throwing,
  };
  for (const [name, value] of Object.entries(declined)) {
    assert.equal(copyMessage({ jsonrpc: "2.0", method: "x", params: { value } }), null, name);
    assert.equal(copyIncoming({ jsonrpc: "2.0", method: "x", params: { value } }), null, name);
  }
  // A lone surrogate survives the JSON round trip (a client reads it back), but the decoder rejects the line.
  for (const params of [{ text: "\udc00" }, { ["\ud800"]: 1 }]) {
    assert.deepStrictEqual(
      copyMessage({ jsonrpc: "2.0", method: "x", params }),
      wire({ jsonrpc: "2.0", method: "x", params }),
    );
    assert.equal(copyIncoming({ jsonrpc: "2.0", method: "x", params }), null);
  }
  // An enumerable key on Object.prototype would be copied as an own key: declined while it is there.
  (Object.prototype as Record<string, unknown>).polluted = 1;
  try {
    assert.equal(copyMessage({ jsonrpc: "2.0", method: "x" }), null);
  } finally {
    delete (Object.prototype as Record<string, unknown>).polluted;
  }
  assert.notEqual(copyMessage({ jsonrpc: "2.0", method: "x" }), null);
});

Deno.test("encodeClientMessage: JSON.stringify's line, or a TypeError naming the string the bridge would refuse", () => {
  const ok = [
    { jsonrpc: "2.0", id: 1, method: "ping" },
    {
      jsonrpc: "2.0",
      id: 2,
      method: "npc/talk",
      params: { line: "Ale 🙂, and \\ud800 as plain text", n: [1, "é"] },
    },
    { jsonrpc: "2.0", id: "t", result: { output: "\u2028 fine" } },
  ];
  for (const message of ok) {
    const line = encodeClientMessage(message);
    assert.equal(line, JSON.stringify(message));
    assert.equal(decodeLine(line).kind, message.id === "t" ? "response" : "request", line);
  }
  const refused: Array<[object, string]> = [
    [{ jsonrpc: "2.0", id: 3, method: "x", params: { line: "cut \ud83d" } }, "params.line"],
    [{ jsonrpc: "2.0", id: 4, method: "x", params: { line: "\ude42 first" } }, "params.line"],
    [
      { jsonrpc: "2.0", id: 5, method: "x", params: { tags: ["ok", { deep: ["\udfff"] }] } },
      "params.tags[1].deep[0]",
    ],
    [{ jsonrpc: "2.0", id: 6, method: "x", params: { ["key\ud800"]: 1 } }, "params.key\ud800"],
    [{ jsonrpc: "2.0", id: 7, result: { output: { text: "\ud800\ud800" } } }, "result.output.text"],
  ];
  for (const [message, path] of refused) {
    // What the bridge would do with the line: refuse it whole, with no id to answer.
    const decoded = decodeLine(JSON.stringify(message));
    assert.equal(decoded.kind, "invalid");
    assert.equal(decoded.kind === "invalid" && decoded.id, null);
    assert.throws(() => encodeClientMessage(message), (error: unknown) => {
      assert.ok(error instanceof TypeError);
      assert.equal(error.message.slice(0, path.length + 2), `'${path}'`);
      assert.match(error.message, /holds an unpaired UTF-16 surrogate, which the bridge cannot read/);
      return true;
    });
  }
  // Made by a toJSON: no path to name, still refused.
  assert.throws(
    () =>
      encodeClientMessage({
        jsonrpc: "2.0",
        id: 8,
        method: "x",
        params: { toJSON: () => ({ a: "\ud800" }) },
      }),
    /^TypeError: A string of the message holds an unpaired UTF-16 surrogate/,
  );
  // What JSON.stringify itself refuses stays its own TypeError.
  assert.throws(
    () => encodeClientMessage({ jsonrpc: "2.0", id: 9, method: "x", params: { n: 1n } }),
    TypeError,
  );
});
