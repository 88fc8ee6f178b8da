/**
 * Configuration of the OpenAI-compatible model backend: the `{"type": "openai", …}` model parameter and the
 * host-level `--model openai:<baseURL>#<model>` flag.
 * @module
 */
import { BridgeError } from "../protocol/errors.ts";
import { isJsonObject, type JsonObject, type JsonValue, presentValue } from "../protocol/json.ts";
import { Params, showValue, unknownParameter } from "../protocol/params.ts";

/**
 * Connection settings of an OpenAI-compatible Chat Completions server.
 *
 * @example
 * ```ts
 * import { createOpenAIModel, type OpenAIModelConfig } from "@open-apple-models/bridge/engine";
 * const config: OpenAIModelConfig = { baseURL: "http://127.0.0.1:8080/v1", model: "qwen2.5-7b-instruct" };
 * const model = createOpenAIModel(config); // nothing is sent until its first step
 * ```
 */
export interface OpenAIModelConfig {
  /** Base URL of the API including its version path, e.g. `http://127.0.0.1:8080/v1` (no trailing slash). */
  baseURL: string;
  /** Model id sent as `model` in every request. */
  model: string;
  /** Sent as `Authorization: Bearer <apiKey>` when present. */
  apiKey?: string;
  /** Extra HTTP headers sent with every request (applied before `Authorization`). */
  headers?: Record<string, string>;
  /**
   * Inactivity timeout in milliseconds: the longest wait for the response headers and between two streamed
   * chunks (default {@link DEFAULT_OPENAI_TIMEOUT_MS}; `0` = none).
   */
  timeoutMs?: number;
}

/** Default inactivity timeout of a request (2 minutes). */
export const DEFAULT_OPENAI_TIMEOUT_MS = 120_000;

const KNOWN_KEYS = ["type", "baseURL", "model", "apiKey", "headers", "timeoutSeconds"];

/**
 * Normalises and checks a base URL: `http:` or `https:`, no credentials, query or fragment; the trailing
 * slash is removed. Returns an error phrase instead of throwing.
 */
function normaliseBaseURL(text: string): { url: string } | { problem: string } {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return { problem: "must be an absolute http(s) URL" };
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return { problem: "must be an http(s) URL" };
  if (url.username !== "" || url.password !== "") {
    return { problem: "must not contain credentials (use 'apiKey' or 'headers')" };
  }
  if (url.search !== "" || url.hash !== "" || text.includes("#")) {
    return { problem: "must not contain a query or fragment" };
  }
  return { url: url.href.replace(/\/+$/, "") };
}

/**
 * Validates a `{"type": "openai", "baseURL", "model", "apiKey"?, "headers"?, "timeoutSeconds"?}` model
 * parameter. `path` is the parameter's name in messages (e.g. `model` → `'model.baseURL'`). Members whose
 * value is `null` count as absent; unknown members are ignored (see {@link openAIModelSpecWarnings}).
 *
 * @throws {BridgeError} `invalid_params` naming the offending member.
 * @example
 * ```ts
 * import { parseOpenAIModelSpec } from "@open-apple-models/bridge/engine";
 * const config = parseOpenAIModelSpec({ type: "openai", baseURL: "http://127.0.0.1:8080/v1", model: "qwen" }, "model");
 * config.baseURL; // "http://127.0.0.1:8080/v1"
 * ```
 */
export function parseOpenAIModelSpec(spec: JsonObject, path: string): OpenAIModelConfig {
  if (!isJsonObject(spec)) throw BridgeError.invalidParams(`'${path}' must be an object.`);
  const at: MemberPath = (key) => `${path}.${key}`;
  checkType(spec, at);
  // Members are checked in this order, so the first bad one is the one named.
  const config: OpenAIModelConfig = { baseURL: parseBaseURL(spec, at), model: parseModelId(spec, at) };
  const apiKey = parseApiKey(spec, at);
  if (apiKey !== undefined) config.apiKey = apiKey;
  const headers = parseHeaders(spec, at);
  if (headers !== undefined) config.headers = headers;
  const timeoutMs = parseTimeoutMs(spec, at);
  if (timeoutMs !== undefined) config.timeoutMs = timeoutMs;
  return config;
}

/** Names a member of the parameter in messages: `baseURL` → `model.baseURL`. */
type MemberPath = (key: string) => string;

function notAString(where: string, value: JsonValue): BridgeError {
  return BridgeError.invalidParams(`Parameter '${where}' must be a string; got ${showValue(value)}.`);
}

function checkType(spec: JsonObject, at: MemberPath): void {
  const type = presentValue(spec, "type");
  if (type !== undefined && type !== "openai") {
    throw BridgeError.invalidParams(`Parameter '${at("type")}' must be "openai"; got ${showValue(type)}.`);
  }
}

function requiredString(spec: JsonObject, key: string, at: MemberPath): string {
  const value = presentValue(spec, key);
  if (value === undefined) {
    // The spec's unknown keys are warnings of a request that now fails: the error names them.
    const p = new Params(spec, at(""));
    p.expectKeys(KNOWN_KEYS);
    throw p.missingParameter(key);
  }
  if (typeof value !== "string") throw notAString(at(key), value);
  return value;
}

/** `baseURL`, trimmed and normalised (see {@link normaliseBaseURL}). */
function parseBaseURL(spec: JsonObject, at: MemberPath): string {
  const baseURL = requiredString(spec, "baseURL", at);
  const normalised = normaliseBaseURL(baseURL.trim());
  if ("problem" in normalised) {
    throw BridgeError.invalidParams(
      `Parameter '${at("baseURL")}' ${normalised.problem}; got ${showValue(baseURL)}.`,
    );
  }
  return normalised.url;
}

/** `model`, sent as given (not trimmed), but not blank. */
function parseModelId(spec: JsonObject, at: MemberPath): string {
  const model = requiredString(spec, "model", at);
  if (model.trim() === "") throw BridgeError.invalidParams(`Parameter '${at("model")}' must not be empty.`);
  return model;
}

/** `apiKey`; an empty key is no key. */
function parseApiKey(spec: JsonObject, at: MemberPath): string | undefined {
  const apiKey = presentValue(spec, "apiKey");
  if (apiKey === undefined) return undefined;
  if (typeof apiKey !== "string") throw notAString(at("apiKey"), apiKey);
  if (!isHeaderValue(apiKey)) {
    throw BridgeError.invalidParams(
      `Parameter '${at("apiKey")}' contains characters not allowed in a header.`,
    );
  }
  return apiKey === "" ? undefined : apiKey;
}

/** `headers`, each checked in the order sent. */
function parseHeaders(spec: JsonObject, at: MemberPath): Record<string, string> | undefined {
  const headers = presentValue(spec, "headers");
  if (headers === undefined) return undefined;
  if (!isJsonObject(headers)) {
    throw BridgeError.invalidParams(
      `Parameter '${at("headers")}' must be an object; got ${showValue(headers)}.`,
    );
  }
  const entries = Object.keys(headers).map((name): [string, string] => [
    name,
    checkHeader(name, headers[name], `${at("headers")}.${name}`),
  ]);
  // Object.fromEntries defines own data properties, so a `__proto__` header name stays a plain key.
  return Object.fromEntries(entries);
}

/** Returns the header's value once its type, name and value are valid. */
function checkHeader(name: string, value: JsonValue, where: string): string {
  if (typeof value !== "string") throw notAString(where, value);
  if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)) {
    throw BridgeError.invalidParams(`'${where}' is not a valid HTTP header name.`);
  }
  if (!isHeaderValue(value)) {
    throw BridgeError.invalidParams(`Parameter '${where}' contains characters not allowed in a header.`);
  }
  return value;
}

/**
 * `timeoutSeconds` in whole milliseconds (`0` = no limit). A positive time rounds to at least 1 ms: rounded to
 * 0 it would mean no limit, the opposite of what a tiny timeout asks for.
 */
function parseTimeoutMs(spec: JsonObject, at: MemberPath): number | undefined {
  const timeout = presentValue(spec, "timeoutSeconds");
  if (timeout === undefined) return undefined;
  if (typeof timeout !== "number" || !Number.isFinite(timeout) || timeout < 0 || timeout > 86400) {
    throw BridgeError.invalidParams(
      `Parameter '${at("timeoutSeconds")}' must be a number of seconds from 0 to 86400 (0 means no limit); ` +
        `got ${showValue(timeout)}.`,
    );
  }
  return timeout === 0 ? 0 : Math.max(1, Math.round(timeout * 1000));
}

/** Warnings for members of an `openai` model parameter that {@link parseOpenAIModelSpec} ignores. */
export function openAIModelSpecWarnings(spec: JsonObject, path: string): string[] {
  return Object.keys(spec).filter((key) => !KNOWN_KEYS.includes(key)).map((key) =>
    unknownParameter({ name: `${path}.${key}`, key }, KNOWN_KEYS)
  );
}

function isHeaderValue(value: string): boolean {
  // Visible ASCII, space and tab; no CR/LF (header injection) and no other control characters.
  return /^[\t\x20-\x7e\x80-\xff]*$/.test(value);
}

/**
 * Parses the host-level flag value `openai:<baseURL>#<model>`, e.g.
 * `openai:http://127.0.0.1:8080/v1#qwen2.5`. The model id is everything after the first `#`.
 *
 * @throws {Error} with a message explaining the expected form.
 * @example
 * ```ts
 * import { parseOpenAIModelFlag } from "@open-apple-models/bridge/engine";
 * const { baseURL, model } = parseOpenAIModelFlag("openai:http://127.0.0.1:8080/v1#tiny");
 * ```
 */
export function parseOpenAIModelFlag(flag: string): OpenAIModelConfig {
  const usage = "expected openai:<baseURL>#<model>, e.g. openai:http://127.0.0.1:8080/v1#my-model";
  if (!flag.startsWith("openai:")) throw new Error(`Invalid --model value '${flag}': ${usage}.`);
  const rest = flag.slice("openai:".length);
  const hash = rest.indexOf("#");
  if (hash < 0) throw new Error(`Invalid --model value '${flag}': missing '#<model>'; ${usage}.`);
  const base = rest.slice(0, hash).trim();
  const model = rest.slice(hash + 1).trim();
  if (base === "") throw new Error(`Invalid --model value '${flag}': missing base URL; ${usage}.`);
  if (model === "") throw new Error(`Invalid --model value '${flag}': missing model id after '#'; ${usage}.`);
  const normalised = normaliseBaseURL(base);
  if ("problem" in normalised) {
    throw new Error(`Invalid --model value '${flag}': the base URL ${normalised.problem}; ${usage}.`);
  }
  return { baseURL: normalised.url, model };
}
