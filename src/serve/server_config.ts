/**
 * Settings of the OpenAI-compatible server (`oam serve`) and their defaults.
 * @module
 */
import type { AgentTool } from "../agent/types.ts";
import type { BridgeConfiguration } from "../engine/configuration.ts";
import type { LanguageModel } from "../models/language_model.ts";
import { MAX_MESSAGE_BYTES } from "../protocol/codec.ts";
import { type Logger, silentLogger } from "../util/logger.ts";

/** The WebSocket bridge endpoint (`/rpc`). */
export interface RpcSettings {
  /** Configuration of each connection's BridgeEngine (the system model, tool timeout, limits, logger). */
  engine: Partial<BridgeConfiguration>;
  /** Open WebSocket connections at once (default 64); more get 503 `too_many_connections`. */
  maxConnections: number;
  /** Longest message (one text frame) in bytes (default 16 MiB); a longer one is answered with -32600. */
  maxMessageBytes: number;
}

/**
 * Web pages the server serves besides its API (the playground): GET and HEAD requests to a path they know.
 * A page's own origin may then open `/rpc` without `allowedOrigins` (same-origin requests only).
 */
export interface PageRoutes {
  /** The response for `path` (trailing slashes removed, `/` for the root), or null when it is not a page. */
  serve(path: string, request: Request): Response | null;
}

/** Everything the server needs; {@link resolveServeConfiguration} fills in the defaults. */
export interface ServeConfiguration {
  /** TCP address to bind (default `127.0.0.1`). */
  host: string;
  /** TCP port; 0 picks a free one; null listens on no TCP port (a Unix socket only). Default 1976. */
  port: number | null;
  /** Unix domain socket to listen on as well, or null. */
  socketPath: string | null;
  /** Served models by id (default: none; `oam serve` serves `system`). */
  models: Map<string, LanguageModel>;
  /** The model used when a request names none (default `system`). */
  defaultModel: string;
  /** Extra model ids mapped to served ones (`gpt-4o-mini` → `system`). */
  modelAliases: Map<string, string>;
  /** Tools the server runs itself (`local` execution); the client never sees their calls. */
  serverTools: AgentTool[];
  /** Instructions put before every request's system messages, or null. */
  serverInstructions: string | null;
  /** Required `Authorization: Bearer` key, or null for none. */
  apiKey: string | null;
  /** Browser origins allowed (CORS and WebSocket `Origin`); `*` allows any. */
  allowedOrigins: string[];
  /** Host names accepted besides the loopback names when bound to loopback (`*` accepts any). */
  allowedHosts: string[];
  /** Completions generated at once (default 4). */
  maxConcurrentRequests: number;
  /** Completions waiting for a slot (default 64); more get 429. */
  maxQueuedRequests: number;
  /** Time limit of a completion in ms, the arrival of its body and queueing included (default 120 000). */
  requestTimeoutMs: number;
  /** Largest request body in bytes (default 4 MiB); larger is 413. */
  maxRequestBodyBytes: number;
  /** Model steps that may call tools in one completion (default 4). */
  maxToolRounds: number;
  /** Tool calls in one completion (default 12). */
  maxToolCalls: number;
  /** The WebSocket bridge endpoint, or null to serve no `/rpc`. */
  rpc: RpcSettings | null;
  /** Web pages served besides the API (default none). */
  pages: PageRoutes | null;
  /** Access and error logs (never stdout). */
  logger: Logger;
}

/** Default TCP port (the reference's). */
export const DEFAULT_PORT = 1976;

/** Default values. */
export const SERVE_DEFAULTS = {
  host: "127.0.0.1",
  port: DEFAULT_PORT,
  defaultModel: "system",
  maxConcurrentRequests: 4,
  maxQueuedRequests: 64,
  requestTimeoutMs: 120_000,
  maxRequestBodyBytes: 4 * 1024 * 1024,
  maxToolRounds: 4,
  maxToolCalls: 12,
  rpcMaxConnections: 64,
  rpcMaxMessageBytes: MAX_MESSAGE_BYTES,
} as const;

/** Fills in defaults (`rpc` defaults to an endpoint with the default engine configuration). */
export function resolveServeConfiguration(config: Partial<ServeConfiguration>): ServeConfiguration {
  return {
    host: config.host ?? SERVE_DEFAULTS.host,
    port: config.port === undefined ? SERVE_DEFAULTS.port : config.port,
    socketPath: config.socketPath ?? null,
    models: config.models ?? new Map(),
    defaultModel: config.defaultModel ?? SERVE_DEFAULTS.defaultModel,
    modelAliases: config.modelAliases ?? new Map(),
    serverTools: config.serverTools ?? [],
    serverInstructions: config.serverInstructions ?? null,
    apiKey: config.apiKey === "" ? null : config.apiKey ?? null,
    allowedOrigins: config.allowedOrigins ?? [],
    allowedHosts: config.allowedHosts ?? [],
    maxConcurrentRequests: config.maxConcurrentRequests ?? SERVE_DEFAULTS.maxConcurrentRequests,
    maxQueuedRequests: config.maxQueuedRequests ?? SERVE_DEFAULTS.maxQueuedRequests,
    requestTimeoutMs: config.requestTimeoutMs ?? SERVE_DEFAULTS.requestTimeoutMs,
    maxRequestBodyBytes: config.maxRequestBodyBytes ?? SERVE_DEFAULTS.maxRequestBodyBytes,
    maxToolRounds: config.maxToolRounds ?? SERVE_DEFAULTS.maxToolRounds,
    maxToolCalls: config.maxToolCalls ?? SERVE_DEFAULTS.maxToolCalls,
    rpc: config.rpc === undefined
      ? {
        engine: {},
        maxConnections: SERVE_DEFAULTS.rpcMaxConnections,
        maxMessageBytes: SERVE_DEFAULTS.rpcMaxMessageBytes,
      }
      : config.rpc,
    pages: config.pages ?? null,
    logger: config.logger ?? silentLogger,
  };
}

/** Problems that keep a configuration from starting, or null. */
export function configurationProblem(config: ServeConfiguration): string | null {
  if (config.models.size === 0) return "Configure at least one model.";
  if (!config.models.has(config.defaultModel)) {
    return `The default model '${config.defaultModel}' is not among the served models.`;
  }
  for (const [alias, target] of config.modelAliases) {
    if (!config.models.has(target)) return `Model alias '${alias}' points to unknown model '${target}'.`;
  }
  for (const tool of config.serverTools) {
    if (tool.execution !== "local" || !tool.run) {
      return `Server tool '${tool.name}' has no handler; server tools run in the server.`;
    }
  }
  if (config.port === null && config.socketPath === null) {
    return "Nothing to listen on: set a port or a Unix socket path.";
  }
  if (config.port !== null && !(Number.isInteger(config.port) && config.port >= 0 && config.port <= 65535)) {
    return `The port must be an integer from 0 to 65535; got ${config.port}.`;
  }
  if (config.maxConcurrentRequests < 1) return "maxConcurrentRequests must be at least 1.";
  if (config.maxQueuedRequests < 0) return "maxQueuedRequests must be at least 0.";
  if (!(config.requestTimeoutMs > 0)) return "requestTimeoutMs must be positive.";
  return null;
}

/** Resolves a requested model id (an alias included) to a served one, or null. */
export function resolveModelId(config: ServeConfiguration, requested: string | null): string | null {
  const id = requested ?? config.defaultModel;
  if (config.models.has(id)) return id;
  const target = config.modelAliases.get(id);
  return target !== undefined && config.models.has(target) ? target : null;
}
