/** The GGUF grammar's uuid and ipv4 rules admit exactly what validation accepts (read as a RegExp; no model). */
import assert from "node:assert/strict";
import { nameFormatGbnf } from "../../src/schema/grammar_names.ts";
import { isIpv4, isUuid } from "../../src/schema/format_names.ts";
import { gbnfToRegExp } from "../helpers/gbnf_regexp.ts";

const quoted = (text: string) => JSON.stringify(text);

Deno.test("ipv4 format: every octet from 0 to 255 without leading zeros, and nothing else", () => {
  const rule = gbnfToRegExp(nameFormatGbnf("ipv4")!);
  for (let n = 0; n <= 300; n++) {
    for (const octet of [String(n), String(n).padStart(2, "0"), String(n).padStart(3, "0")]) {
      const text = `10.${octet}.0.1`;
      assert.equal(rule.test(quoted(text)), isIpv4(text), text);
    }
  }
  for (const text of ["1.2.3", "1.2.3.4.5", "1.2.3.4 ", "a.b.c.d", "255.255.255.255", "0.0.0.0"]) {
    assert.equal(rule.test(quoted(text)), isIpv4(text), text);
  }
  assert.ok(!rule.test("1.2.3.4"), "a JSON string, quotes included");
});

Deno.test("uuid format: 8-4-4-4-12 hex digits in either case, and nothing else", () => {
  const rule = gbnfToRegExp(nameFormatGbnf("uuid")!);
  for (
    const text of [
      "2eb8aa08-aa98-11ea-b4aa-73b441d16380",
      "2EB8AA08-AA98-11EA-B4AA-73B441D16380",
      "2eb8aa08aa9811eab4aa73b441d16380",
      "2eb8aa08-aa98-11ea-b4aa-73b441d1638",
      "2eb8aa08-aa98-11ea-b4aa-73b441d163800",
      "2eb8aa0g-aa98-11ea-b4aa-73b441d16380",
      "{2eb8aa08-aa98-11ea-b4aa-73b441d16380}",
    ]
  ) {
    assert.equal(rule.test(quoted(text)), isUuid(text), text);
  }
  assert.equal(nameFormatGbnf("email"), undefined);
});
