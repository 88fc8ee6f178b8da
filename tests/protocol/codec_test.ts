/** decodeLine edge cases not easily reached through the engine: surrogates, escapes and depth. */
import assert from "node:assert/strict";
import { decodeLine, encodeMessage } from "../../src/protocol/codec.ts";

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

Deno.test("parse error messages give the byte offset", () => {
  assert.match(kind('{"a":'), /^invalid:-32700:Invalid JSON at byte \d+: /);
  assert.match(kind('{"é":x}'), /^invalid:-32700:Invalid JSON at byte \d+: /);
});

Deno.test("encodeMessage escapes line separators and never emits a newline", () => {
  const line = encodeMessage({ a: "x\ny\u2028z\u2029", b: [1.5, 9007199254740991] });
  assert.equal(line, '{"a":"x\\ny\\u2028z\\u2029","b":[1.5,9007199254740991]}');
});
