/**
 * The llama and OpenAI-compatible backends check an answer's string `format`s (`date`, `time`, `date-time`,
 * `email`, `uri`, `uuid`, `ipv4`, `ipv6`, `hostname`): a server's `"2024-02-30"` for a `date` is a problem
 * the backend retries, not data for the game. Unknown formats are ignored.
 */
import assert from "node:assert/strict";
import { checkStructured, checkToolCalls } from "../../src/models/openai_validate.ts";

/** Whether the backends' validator accepts `value` as a string of `format`. */
function accepts(format: string, value: string): boolean {
  return checkStructured(JSON.stringify(value), { type: "string", format }).ok;
}

function check(format: string, valid: string[], invalid: string[]): void {
  for (const value of valid) {
    assert.ok(accepts(format, value), `${format}: ${JSON.stringify(value)} is valid`);
  }
  for (const value of invalid) {
    assert.ok(!accepts(format, value), `${format}: ${JSON.stringify(value)} is invalid`);
  }
}

Deno.test("formats: date is an RFC 3339 full-date on the calendar", () => {
  check(
    "date",
    ["2024-02-29", "2000-02-29", "2023-02-28", "1963-06-19", "2024-12-31", "2024-04-30", "0000-02-29"],
    [
      "2023-02-29",
      "1900-02-29",
      "2024-02-30",
      "2024-04-31",
      "2024-13-01",
      "2024-00-10",
      "2024-01-00",
      "2024-01-32",
      "2024-1-01",
      "24-01-01",
      "20240101",
      "2024-01-01T00:00:00Z",
      " 2024-01-01",
      "2024-01-0১",
      "next tuesday",
      "",
    ],
  );
});

Deno.test("formats: time is an RFC 3339 full-time with an offset; a leap second only at 23:59 UTC", () => {
  check(
    "time",
    [
      "13:45:00Z",
      "13:45:00z",
      "00:00:00Z",
      "23:59:59.999999+02:00",
      "08:30:06-05:30",
      "23:59:60Z",
      "23:59:60+00:00",
      "01:29:60+01:30",
      "15:59:60-08:00",
      "23:29:60+23:30",
    ],
    [
      "24:00:00Z",
      "23:60:00Z",
      "23:59:61Z",
      "22:59:60Z",
      "23:59:60+01:00",
      "12:00:00",
      "12:00:00.5",
      "12:00:00+24:00",
      "12:00:00+02:60",
      "12:00:00+0200",
      "12:00:00.Z",
      "12:00Z",
      "1:02:03Z",
      "12:00:00,5Z",
      "12:00:00 Z",
      "T12:00:00Z",
    ],
  );
});

Deno.test("formats: date-time joins a real date and a full-time by T (or t)", () => {
  check(
    "date-time",
    [
      "2024-02-29T13:45:00Z",
      "2024-05-01T13:45:00.000+02:00",
      "2024-05-01t13:45:00z",
      "1998-12-31T23:59:60Z",
      "1998-12-31T15:59:60.123-08:00",
      "2016-12-31T23:59:60+00:00",
      // A leap second is at 23:59 UTC on a month's last day, whatever the local day.
      "1998-12-31T23:29:60-00:30",
      "1999-01-01T00:59:60+01:00",
      "1999-02-01T00:59:60+01:00",
    ],
    [
      "2023-02-29T13:45:00Z",
      "2024-02-30T13:45:00Z",
      "2024-05-01 13:45:00Z",
      "2024-05-01T13:45:00",
      "2024-05-01T24:00:00Z",
      "2024-05-01T13:45Z",
      "2024-05-01",
      "1998-12-30T23:59:60Z",
      "1998-12-31T22:59:60Z",
      "1998-12-30T23:29:60-00:30",
      "1999-01-01T00:59:60+02:00",
      "1999-01-02T00:59:60+01:00",
      "2024-05-01T13:45:00ZZ",
    ],
  );
});

Deno.test("formats: email is an address with a dot-atom or quoted local part and a host name or address literal", () => {
  check(
    "email",
    [
      "joe.bloggs@example.com",
      "te~st+tag@example.co.uk",
      '"joe bloggs"@example.com',
      '"joe..bloggs"@example.com',
      '"joe@bloggs"@example.com',
      "joe@[127.0.0.1]",
      "joe@[IPv6:::1]",
      "a@localhost",
    ],
    [
      "joe.@example.com",
      ".joe@example.com",
      "jo..e@example.com",
      "joe@invalid=domain.com",
      "joe@[127.0.0.300]",
      "joe@@example.com",
      "joe example.com",
      "@example.com",
      "joe@",
      "joe@-example.com",
      "joe@exa mple.com",
      "a@b.com, c@d.com",
      '"Winston Smith" <winston@example.com>',
      "jöe@example.com",
      `${"a".repeat(65)}@example.com`,
    ],
  );
});

Deno.test("formats: hostname follows RFC 1123 labels", () => {
  check(
    "hostname",
    [
      "example.com",
      "localhost",
      "my-host",
      "1host",
      "xn--4gbwdl.xn--wgbh1c",
      "a.b.c.d",
      "example.com.",
      "A.EXAMPLE",
    ],
    [
      "",
      ".",
      ".example.com",
      "example..com",
      "-example.com",
      "example-.com",
      "exa_mple.com",
      "exa mple.com",
      "ex@mple.com",
      `${"a".repeat(64)}.com`,
      `${"a".repeat(63)}.`.repeat(4) + "com",
      "bücher.de",
    ],
  );
});

Deno.test("formats: ipv4 is a dotted quad without leading zeros", () => {
  check(
    "ipv4",
    ["192.168.0.1", "0.0.0.0", "255.255.255.255", "10.0.0.10"],
    [
      "256.0.0.1",
      "1.2.3",
      "1.2.3.4.5",
      "01.2.3.4",
      "1.2.3.04",
      "1.2.3.4 ",
      "a.b.c.d",
      "0x7f.0.0.1",
      "1.2.3.৪",
      "",
    ],
  );
});

Deno.test("formats: ipv6 takes the full, compressed and IPv4-suffixed forms, without a zone", () => {
  check(
    "ipv6",
    [
      "::",
      "::1",
      "1::",
      "2001:db8::7",
      "2001:0DB8:0000:0000:0000:0000:1428:57ab",
      "fe80::1:2:3:4:5:6",
      "1:2:3:4:5:6:7:8",
      "::ffff:192.168.0.1",
      "1:2:3:4:5:6:1.2.3.4",
      "64:ff9b::1.2.3.4",
    ],
    [
      "",
      ":",
      ":::",
      "1:2:3:4:5:6:7",
      "1:2:3:4:5:6:7:8:9",
      "1::2::3",
      ":1::2",
      "1::2:",
      "12345::",
      "::g",
      "fe80::1%eth0",
      "1:2:3:4:5:6:7::8",
      "::1.2.3.04",
      "1:2:3:4:5:6:7:1.2.3.4",
      "::1.2.3",
      " ::1",
    ],
  );
});

Deno.test("formats: uuid is 8-4-4-4-12 hex digits", () => {
  check(
    "uuid",
    [
      "2eb8aa08-aa98-11ea-b4aa-73b441d16380",
      "2EB8AA08-AA98-11EA-B4AA-73B441D16380",
      "00000000-0000-0000-0000-000000000000",
    ],
    [
      "2eb8aa08aa9811eab4aa73b441d16380",
      "2eb8aa08-aa98-11ea-b4aa-73b441d1638",
      "2eb8aa08-aa98-11ea-b4aa-73b441d16380a",
      "2eb8aa08-aa98-11ea-b4ag-73b441d16380",
      "2eb8aa0-8aa98-11ea-b4aa-73b441d16380",
      "{2eb8aa08-aa98-11ea-b4aa-73b441d16380}",
      "",
    ],
  );
});

Deno.test("formats: uri is an absolute RFC 3986 URI", () => {
  check(
    "uri",
    [
      "http://foo.bar/?baz=qux#quux",
      "http://foo.com/blah_(wiki)#cite-1",
      "http://foo.bar/?q=Test%20URL-encoded%20stuff",
      "http://-.~_!$&'()*+,;=:%40:80%2f::::::@example.com",
      "http://223.255.255.254",
      "ldap://[2001:db8::7]/c=GB?objectClass?one",
      "mailto:John.Doe@example.com",
      "news:comp.infosystems.www.servers.unix",
      "tel:+1-816-555-1212",
      "urn:oasis:names:specification:docbook:dtd:xml:4.1.2",
      "https://example.com:8080/a/b?c=d",
      "file:///etc/hosts",
    ],
    [
      "//foo.bar/?baz=qux#quux",
      "/abc",
      "abc",
      "\\\\WINDOWS\\fileshare",
      "http:// shouldfail.com",
      ":// should fail",
      "bar,baz:foo",
      "http://example.com/a b",
      "http://example.com/<a>",
      "http://example.com/%2",
      "http://example.com/%zz",
      "http://ƒøø.ßår/?∂éœ=πîx#πîüx",
      "http://example.com/#a#b",
      "http://[2001:db8::7/",
      "http://example.com:8o/",
      "1http://example.com",
      "",
    ],
  );
});

Deno.test("formats: an unknown format is ignored, never an error", () => {
  assert.ok(accepts("color", "not a colour at all"));
  assert.ok(accepts("phone-number", ""));
  // A format applies to strings only: a number under `format: date` is judged by its type alone.
  assert.ok(checkStructured("3", { format: "date" }).ok);
});

Deno.test("formats: a bad date answer is a problem naming the field and its format", () => {
  const schema = {
    type: "object",
    properties: { when: { type: "string", format: "date" } },
    required: ["when"],
  };
  const checked = checkStructured('{"when":"2024-02-30"}', schema);
  assert.ok(!checked.ok);
  assert.match(checked.problem, /\/when must match format "date"/);
  assert.ok(checkStructured('{"when":"2024-02-29"}', schema).ok);
});

Deno.test("formats: a tool call's arguments are checked too", () => {
  const tools = [{
    name: "book",
    description: "Books a room.",
    parameters: {},
    jsonSchema: {
      type: "object",
      properties: { day: { type: "string", format: "date" } },
      required: ["day"],
    },
  }];
  const bad = checkToolCalls([{ index: 0, name: "book", arguments: '{"day":"2023-02-29"}' }], tools);
  assert.ok(!bad.ok);
  assert.match(
    bad.problem,
    /the arguments of 'book' do not match its schema: \/day must match format "date"/,
  );
  assert.ok(checkToolCalls([{ index: 0, name: "book", arguments: '{"day":"2024-02-29"}' }], tools).ok);
});
