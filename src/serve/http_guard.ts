/**
 * The checks a request passes before any work: the Host it is addressed to (DNS-rebinding protection on a
 * loopback listener), its browser Origin, and its API key (constant-time comparison). Also the CORS headers
 * of an allowed origin.
 * @module
 */
import { OpenAIError } from "./openai_error.ts";

/** Host names every loopback listener serves. */
const LOOPBACK_NAMES = new Set(["localhost", "127.0.0.1", "[::1]"]);

/** True for a loopback listener address (`127.0.0.0/8`, `::1`, `localhost`). */
export function isLoopbackAddress(host: string): boolean {
  let name = host.toLowerCase();
  if (name.startsWith("[") && name.endsWith("]")) name = name.slice(1, -1);
  if (name === "localhost" || name === "::1" || name === "0:0:0:0:0:0:0:1") return true;
  if (/^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(name)) return true;
  return /^::ffff:127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(name);
}

/** A `Host` value without its port, lowercased (`[::1]:8080` → `[::1]`). */
export function hostName(host: string): string {
  const h = host.trim().toLowerCase();
  if (h.startsWith("[")) {
    const close = h.indexOf("]");
    return close === -1 ? h : h.slice(0, close + 1);
  }
  const colon = h.lastIndexOf(":");
  return colon === -1 ? h : h.slice(0, colon);
}

/**
 * Rejects a request addressed to a host other than the loopback names or `allowedHosts` (`*` accepts any):
 * a web page on another site must not reach a loopback server through a DNS name that resolves to it.
 */
export function checkHost(host: string | null, allowedHosts: string[]): OpenAIError | null {
  if (host === null || allowedHosts.includes("*")) return null;
  const name = hostName(host);
  if (LOOPBACK_NAMES.has(name) || isLoopbackAddress(name) || allowedHosts.includes(name)) return null;
  return new OpenAIError({
    status: 421,
    message: `This server does not serve host '${host}'. Use localhost or add the host to the allowed hosts.`,
    type: "invalid_request_error",
    code: "invalid_host",
  });
}

/** True when `origin` may call the server from a browser. */
export function originAllowed(origin: string, allowedOrigins: string[]): boolean {
  return allowedOrigins.includes("*") || allowedOrigins.includes(origin);
}

/** 403 for a browser origin that is not allowed. */
export function checkOrigin(origin: string | null, allowedOrigins: string[]): OpenAIError | null {
  if (origin === null || originAllowed(origin, allowedOrigins)) return null;
  // 'null' is what sandboxed frames, file:// pages and some redirects send: any site can make one, so it is
  // no page of yours to allow.
  const advice = origin === "null"
    ? "Sandboxed frames and local files send it, so any site can: serve the page from an http(s) origin and allow that one."
    : `Start the server with --allow-origin ${origin} to permit browser access.`;
  return new OpenAIError({
    status: 403,
    message: `Requests from origin '${origin}' are not allowed. ${advice}`,
    type: "invalid_request_error",
    code: "origin_not_allowed",
  });
}

const encoder = new TextEncoder();

/** Compares two strings in time that depends only on their lengths. */
export function constantTimeEquals(a: string, b: string): boolean {
  const x = encoder.encode(a);
  const y = encoder.encode(b);
  let difference = x.length === y.length ? 0 : 1;
  const n = Math.max(x.length, y.length);
  for (let i = 0; i < n; i++) difference |= (i < x.length ? x[i] : 0) ^ (i < y.length ? y[i] : 0);
  return difference === 0;
}

/** The bearer token of an `Authorization` header, or "". */
export function bearerToken(header: string | null): string {
  if (header === null) return "";
  const match = /^\s*bearer\s+(.*)$/i.exec(header);
  return match ? match[1].trim() : "";
}

/** How a request sends the key: a WebSocket from a page cannot set headers, so `/rpc` also reads `?api_key=`. */
const SEND_KEY = {
  http: "Send it as 'Authorization: Bearer <key>'.",
  websocket:
    "Send it in the URL as ?api_key=<key> (the typed client's WebSocketTransport option apiKey) or as " +
    "'Authorization: Bearer <key>'.",
} as const;

/** A wrong key: the client's user may not be who started the server, so say where its key is set. */
const INCORRECT_KEY =
  "Incorrect API key provided: send the key the server was started with (its --api-key or OAM_API_KEY).";

/**
 * 401 (with `WWW-Authenticate: Bearer`) unless `token` is the key; null when no key is required. A missing
 * key's message says how to send one over `access.via` (`websocket` for `/rpc`; default `http`).
 */
export function checkApiKey(
  token: string,
  access: { apiKey: string | null; via?: keyof typeof SEND_KEY },
): OpenAIError | null {
  const { apiKey, via = "http" } = access;
  if (apiKey === null) return null;
  if (token !== "" && constantTimeEquals(token, apiKey)) return null;
  return new OpenAIError({
    status: 401,
    message: token === "" ? `You didn't provide an API key. ${SEND_KEY[via]}` : INCORRECT_KEY,
    type: "invalid_request_error",
    code: "invalid_api_key",
  });
}

/**
 * CORS headers for a response to an allowed origin (none for requests without `Origin`). The exposed headers
 * are those an SDK in a page reads to decide on a retry: a browser hides the others.
 */
export function corsHeaders(origin: string | null, allowedOrigins: string[]): Record<string, string> {
  if (origin === null || !originAllowed(origin, allowedOrigins)) return {};
  return {
    "access-control-allow-origin": allowedOrigins.includes("*") ? "*" : origin,
    "vary": "Origin",
    "access-control-expose-headers": "Retry-After, x-should-retry",
  };
}
