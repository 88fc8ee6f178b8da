/**
 * The network string formats of JSON Schema: `hostname` (RFC 1123 labels), `ipv4` (a dotted quad without
 * leading zeros), `ipv6` (RFC 4291: full, `::`-compressed, IPv4-suffixed; no zone), `email` (RFC 5321: a
 * dot-atom or quoted local part, a host name or an address literal), `uri` (an absolute RFC 3986 URI, ASCII
 * only) and `uuid` (RFC 4122's 8-4-4-4-12 hex digits, any version).
 * @module
 */

const LABEL = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/;

/**
 * Whether `text` is a host name: dot-separated labels of letters, digits and inner hyphens, up to 63
 * characters each and 253 in all (a final dot, the root, is allowed).
 *
 * @example
 * ```ts
 * import { isHostname } from "./format_names.ts";
 * isHostname("xn--4gbwdl.example"); // true
 * isHostname("exa_mple.com"); // false
 * ```
 */
export function isHostname(text: string): boolean {
  const name = text.endsWith(".") ? text.slice(0, -1) : text;
  if (name.length === 0 || name.length > 253) return false;
  return name.split(".").every((label) => LABEL.test(label));
}

/**
 * Whether `text` is an IPv4 address: four decimal numbers 0-255, no leading zeros.
 *
 * @example
 * ```ts
 * import { isIpv4 } from "./format_names.ts";
 * isIpv4("192.168.0.1"); // true
 * isIpv4("192.168.0.01"); // false
 * ```
 */
export function isIpv4(text: string): boolean {
  const parts = text.split(".");
  return parts.length === 4 &&
    parts.every((part) => /^(?:0|[1-9][0-9]{0,2})$/.test(part) && Number(part) <= 255);
}

const GROUP = /^[0-9A-Fa-f]{1,4}$/;

/**
 * Whether `text` is an IPv6 address: eight groups of 1-4 hex digits, one `::` standing for one or more
 * groups of zeros, the last two groups optionally an IPv4 address.
 *
 * @example
 * ```ts
 * import { isIpv6 } from "./format_names.ts";
 * isIpv6("2001:db8::7"); // true
 * isIpv6("::ffff:192.168.0.1"); // true
 * isIpv6("1::2::3"); // false
 * ```
 */
export function isIpv6(text: string): boolean {
  const halves = text.split("::");
  if (halves.length > 2) return false;
  const groups = halves.map((half) => half === "" ? [] : half.split(":"));
  const all = groups.flat();
  let count = all.length;
  const last = all.at(-1);
  if (last !== undefined && last.includes(".")) {
    if (!isIpv4(last)) return false;
    all.pop();
    count += 1;
  }
  if (!all.every((group) => GROUP.test(group))) return false;
  return halves.length === 2 ? count <= 7 : count === 8;
}

/** RFC 5322 atext: the characters of a dot-atom's atoms. */
const DOT_ATOM = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*$/;
/** A quoted local part: printable ASCII, `"` and `\` escaped. */
const QUOTED = /^"(?:[\x20\x21\x23-\x5B\x5D-\x7E]|\\[\x20-\x7E])*"$/;

/**
 * Whether `text` is an email address: a local part (a dot-atom or a quoted string, up to 64 characters), `@`,
 * and a host name or an address literal (`[127.0.0.1]`, `[IPv6:::1]`).
 *
 * @example
 * ```ts
 * import { isEmail } from "./format_names.ts";
 * isEmail("joe.bloggs@example.com"); // true
 * isEmail('"joe bloggs"@[IPv6:::1]'); // true
 * isEmail("joe..bloggs@example.com"); // false
 * ```
 */
export function isEmail(text: string): boolean {
  if (text.length > 254) return false;
  const at = text.lastIndexOf("@");
  if (at < 1) return false;
  const local = text.slice(0, at);
  const domain = text.slice(at + 1);
  if (local.length > 64 || !(DOT_ATOM.test(local) || QUOTED.test(local))) return false;
  if (domain.startsWith("[") && domain.endsWith("]")) {
    const literal = domain.slice(1, -1);
    return literal.startsWith("IPv6:") ? isIpv6(literal.slice(5)) : isIpv4(literal);
  }
  return !domain.endsWith(".") && isHostname(domain);
}

/** RFC 3986 Appendix B: scheme, authority, path, query, fragment. */
const URI = /^([^:/?#]+):(?:\/\/([^/?#]*))?([^?#]*)(?:\?([^#]*))?(?:#(.*))?$/;
const SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*$/;
const PCT = "%[0-9A-Fa-f]{2}";
const UNRESERVED_SUB = "A-Za-z0-9\\-._~!$&'()*+,;=";
const USERINFO = new RegExp(`^(?:[${UNRESERVED_SUB}:]|${PCT})*$`);
const REG_NAME = new RegExp(`^(?:[${UNRESERVED_SUB}]|${PCT})*$`);
const PATH = new RegExp(`^(?:[${UNRESERVED_SUB}:@/]|${PCT})*$`);
const QUERY = new RegExp(`^(?:[${UNRESERVED_SUB}:@/?]|${PCT})*$`);

/** An authority: `userinfo@`, a host (a name, an IPv4 address, `[IPv6]`), `:port`. */
function isAuthority(authority: string): boolean {
  const at = authority.lastIndexOf("@");
  if (at >= 0 && !USERINFO.test(authority.slice(0, at))) return false;
  let host = authority.slice(at + 1);
  const port = /:([0-9]*)$/.exec(host.startsWith("[") ? host.slice(host.indexOf("]") + 1) : host);
  if (port !== null) host = host.slice(0, host.length - port[0].length);
  else if (/:/.test(host.startsWith("[") ? host.slice(host.indexOf("]") + 1) : host)) return false;
  if (host.startsWith("[")) return host.endsWith("]") && isIpv6(host.slice(1, -1));
  return REG_NAME.test(host);
}

/**
 * Whether `text` is an absolute URI (RFC 3986): a scheme, then characters URIs allow, each `%` starting an
 * escape of two hex digits; an IPv6 host is bracketed.
 *
 * @example
 * ```ts
 * import { isUri } from "./format_names.ts";
 * isUri("https://example.com:8080/a?b=c#d"); // true
 * isUri("urn:isbn:0451450523"); // true
 * isUri("//example.com/a"); // false: relative
 * isUri("http://example.com/a b"); // false
 * ```
 */
export function isUri(text: string): boolean {
  const match = URI.exec(text);
  if (match === null) return false;
  const [, scheme, authority, path, query, fragment] = match;
  if (!SCHEME.test(scheme)) return false;
  if (authority !== undefined && !isAuthority(authority)) return false;
  if (!PATH.test(path)) return false;
  return (query === undefined || QUERY.test(query)) && (fragment === undefined || QUERY.test(fragment));
}

/**
 * Whether `text` is a UUID: 8-4-4-4-12 hex digits (either case).
 *
 * @example
 * ```ts
 * import { isUuid } from "./format_names.ts";
 * isUuid("2eb8aa08-aa98-11ea-b4aa-73b441d16380"); // true
 * isUuid("2eb8aa08aa9811eab4aa73b441d16380"); // false
 * ```
 */
export function isUuid(text: string): boolean {
  return /^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}$/.test(text);
}
