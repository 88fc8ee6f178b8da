/**
 * Configuration of the OpenAI-compatible model backend: the `{"type": "openai", …}` model parameter and the
 * host-level `--model openai:<baseURL>#<model>` flag.
 * @module
 */
import { BridgeError } from "../protocol/errors.ts";
import { compactJson, isJsonObject, type JsonObject, type JsonValue, ownValue } from "../protocol/json.ts";

/** Connection settings of an OpenAI-compatible Chat Completions server. */
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

function shown(value: JsonValue): string {
  const text = compactJson(value);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

/** Value of a member, `null` counting as absent (the bridge's parameter rule). */
function member(spec: JsonObject, key: string): JsonValue | undefined {
  const value = ownValue(spec, key);
  return value === null ? undefined : value;
}

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
 * import { parseOpenAIModelSpec } from "./openai_config.ts";
 * const config = parseOpenAIModelSpec({ type: "openai", baseURL: "http://127.0.0.1:8080/v1", model: "qwen" }, "model");
 * config.baseURL; // "http://127.0.0.1:8080/v1"
 * ```
 */
export function parseOpenAIModelSpec(spec: JsonObject, path: string): OpenAIModelConfig {
  if (!isJsonObject(spec)) throw BridgeError.invalidParams(`'${path}' must be an object.`);
  const at = (key: string) => `${path}.${key}`;

  const type = member(spec, "type");
  if (type !== undefined && type !== "openai") {
    throw BridgeError.invalidParams(`Parameter '${at("type")}' must be "openai"; got ${shown(type)}.`);
  }

  const baseURL = member(spec, "baseURL");
  if (baseURL === undefined) {
    throw BridgeError.invalidParams(`Missing required parameter '${at("baseURL")}'.`);
  }
  if (typeof baseURL !== "string") {
    throw BridgeError.invalidParams(`Parameter '${at("baseURL")}' must be a string; got ${shown(baseURL)}.`);
  }
  const normalised = normaliseBaseURL(baseURL.trim());
  if ("problem" in normalised) {
    throw BridgeError.invalidParams(
      `Parameter '${at("baseURL")}' ${normalised.problem}; got ${shown(baseURL)}.`,
    );
  }

  const model = member(spec, "model");
  if (model === undefined) throw BridgeError.invalidParams(`Missing required parameter '${at("model")}'.`);
  if (typeof model !== "string") {
    throw BridgeError.invalidParams(`Parameter '${at("model")}' must be a string; got ${shown(model)}.`);
  }
  if (model.trim() === "") throw BridgeError.invalidParams(`Parameter '${at("model")}' must not be empty.`);

  const config: OpenAIModelConfig = { baseURL: normalised.url, model };

  const apiKey = member(spec, "apiKey");
  if (apiKey !== undefined) {
    if (typeof apiKey !== "string") {
      throw BridgeError.invalidParams(`Parameter '${at("apiKey")}' must be a string; got ${shown(apiKey)}.`);
    }
    if (!isHeaderValue(apiKey)) {
      throw BridgeError.invalidParams(
        `Parameter '${at("apiKey")}' contains characters not allowed in a header.`,
      );
    }
    if (apiKey !== "") config.apiKey = apiKey;
  }

  const headers = member(spec, "headers");
  if (headers !== undefined) {
    if (!isJsonObject(headers)) {
      throw BridgeError.invalidParams(
        `Parameter '${at("headers")}' must be an object; got ${shown(headers)}.`,
      );
    }
    const entries: [string, string][] = [];
    for (const name of Object.keys(headers)) {
      const value = headers[name];
      const where = `${at("headers")}.${name}`;
      if (typeof value !== "string") {
        throw BridgeError.invalidParams(`Parameter '${where}' must be a string; got ${shown(value)}.`);
      }
      if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)) {
        throw BridgeError.invalidParams(`'${where}' is not a valid HTTP header name.`);
      }
      if (!isHeaderValue(value)) {
        throw BridgeError.invalidParams(`Parameter '${where}' contains characters not allowed in a header.`);
      }
      entries.push([name, value]);
    }
    // Object.fromEntries defines own data properties, so a `__proto__` header name stays a plain key.
    config.headers = Object.fromEntries(entries);
  }

  const timeout = member(spec, "timeoutSeconds");
  if (timeout !== undefined) {
    if (typeof timeout !== "number" || !Number.isFinite(timeout) || timeout < 0 || timeout > 86400) {
      throw BridgeError.invalidParams(
        `Parameter '${
          at("timeoutSeconds")
        }' must be a number of seconds from 0 to 86400 (0 means no limit); ` +
          `got ${shown(timeout)}.`,
      );
    }
    config.timeoutMs = Math.round(timeout * 1000);
  }
  return config;
}

/** Warnings for members of an `openai` model parameter that {@link parseOpenAIModelSpec} ignores. */
export function openAIModelSpecWarnings(spec: JsonObject, path: string): string[] {
  return Object.keys(spec).filter((key) => !KNOWN_KEYS.includes(key)).map((key) =>
    `Unknown parameter '${path}.${key}' was ignored.`
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
 * import { parseOpenAIModelFlag } from "./openai_config.ts";
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
