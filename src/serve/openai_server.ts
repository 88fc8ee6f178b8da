/**
 * The OpenAI-compatible server (`oam serve`): Chat Completions with real tool calls over HTTP, the model list,
 * a health check, and the bridge protocol over WebSocket at `/rpc`, on Deno's built-in HTTP server.
 *
 * Endpoints: `POST /v1/chat/completions` (also `/chat/completions`), `GET|HEAD /v1/models` (`/models`),
 * `GET /v1/models/{id}`, `GET /health` (also `/healthz`, `/v1/health`; open without an API key), `GET /rpc`
 * (WebSocket), and CORS preflight (`OPTIONS`). Every request is screened before any work: the Host it is
 * addressed to (on a loopback or Unix-socket listener), its Origin, its route and method, its API key and
 * its content type.
 * @module
 */
import { errorOf, errorResponse, plainResponse } from "./http_response.ts";
import { chatCompletions, type ChatContext } from "./chat_endpoint.ts";
import type { CompletionRun } from "./completion_run.ts";
import {
  bearerToken,
  checkApiKey,
  checkHost,
  checkOrigin,
  corsHeaders,
  isLoopbackAddress,
  originAllowed,
} from "./http_guard.ts";
import { ConcurrencyLimiter } from "./limiter.ts";
import { health, listModels, retrieveModel } from "./model_endpoints.ts";
import { OpenAIError } from "./openai_error.ts";
import { settledWithin } from "../util/sleep.ts";
import { RpcEndpoint } from "./rpc_endpoint.ts";
import { configurationProblem, resolveServeConfiguration, type ServeConfiguration } from "./server_config.ts";

/** How a request reached the server. */
export type RequestTransport = "tcp" | "unix" | "direct";

/** Bound on the wait for connections to finish when the server stops (ms). */
export const STOP_GRACE_MS = 5000;

const CHAT_PATHS = new Set(["/v1/chat/completions", "/chat/completions"]);
const MODELS_PATHS = new Set(["/v1/models", "/models"]);
const HEALTH_PATHS = new Set(["/health", "/healthz", "/v1/health"]);
const MODEL_PATH = /^\/(?:v1\/)?models\/(.+)$/;

/** A request on its way through the routes. */
interface Route {
  request: Request;
  url: URL;
  transport: RequestTransport;
  /** The URL's path without trailing slashes. */
  path: string;
  method: string;
}

/** `path` without trailing slashes (`/` stays). */
/**
 * The reason of a refusal the browser page never gets to read, to put in the log: any refused WebSocket
 * upgrade (a browser only says "Unexpected response code"), and a refusal of a disallowed origin (no CORS
 * grant, so the page cannot read its body). Null for anything else.
 */
function unreadRefusal(request: Request, response: Response, allowedOrigins: string[]): string | null {
  const error = errorOf(response);
  if (error === null) return null;
  const upgrade = (request.headers.get("upgrade") ?? "").toLowerCase() === "websocket";
  const origin = request.headers.get("origin");
  if (upgrade || (origin !== null && !originAllowed(origin, allowedOrigins))) return error.message;
  return null;
}

function trimTrailingSlashes(path: string): string {
  while (path.length > 1 && path.endsWith("/")) path = path.slice(0, -1);
  return path;
}

/** `text` percent-decoded, or as it is when it is not valid percent-encoding. */
function decodedOrAsIs(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

function isRead(method: string): boolean {
  return method === "GET" || method === "HEAD";
}

function methodNotAllowed(method: string, path: string, allow: string): Response {
  return errorResponse(
    new OpenAIError({
      status: 405,
      message: `Method ${method} is not allowed for ${path}; use ${allow}.`,
      type: "invalid_request_error",
      code: "method_not_allowed",
    }),
    { allow },
  );
}

function unsupportedMediaType(): OpenAIError {
  return new OpenAIError({
    status: 415,
    message: "Content-Type must be application/json: send the header 'Content-Type: application/json' " +
      "(curl: -H 'Content-Type: application/json').",
    type: "invalid_request_error",
    code: "unsupported_media_type",
  });
}

/** A printable rendering of a request path for logs (control and bidi characters percent-encoded). */
function printable(text: string): string {
  return text.replace(
    /[\p{Cc}\u200e\u200f\u202a-\u202e\u2066-\u2069]/gu,
    (c) => `%${c.charCodeAt(0).toString(16).padStart(2, "0").toUpperCase()}`,
  );
}

/** What the access log says of a request whose client closed the connection before its answer. */
const CLIENT_GONE_LOG = "no answer: the client closed the connection; its generation was cancelled";

/**
 * The rest of an access log line after the status: ` (stream)` for an event stream, and for an error answer
 * its code and the request field at fault (` invalid_value (messages[0].role)`), which the developer of a
 * client that shows no error body can then read in the server's log.
 */
function answered(response: Response, error: OpenAIError | null): string {
  if (error === null) {
    return response.headers.get("content-type")?.startsWith("text/event-stream") ? " (stream)" : "";
  }
  const code = error.code === null ? "" : ` ${printable(error.code)}`;
  return error.param === null ? code : `${code} (${printable(error.param)})`;
}

/**
 * The server.
 *
 * @example
 * ```ts
 * import { OpenAIServer } from "./openai_server.ts";
 * import { ScriptedModel } from "../models/scripted.ts";
 * const server = new OpenAIServer({
 *   port: 0,
 *   models: new Map([["system", new ScriptedModel({ steps: [{ text: "Hello!" }] })]]),
 * });
 * await server.start();
 * // POST http://127.0.0.1:<server.port>/v1/chat/completions
 * await server.stop();
 * ```
 */
export class OpenAIServer {
  /** The resolved settings. */
  readonly configuration: ServeConfiguration;
  readonly #limiter: ConcurrencyLimiter;
  readonly #runs = new Set<CompletionRun>();
  readonly #rpc: RpcEndpoint | null;
  readonly #created = Math.floor(Date.now() / 1000);
  readonly #tcpLoopback: boolean;
  readonly #servers: Deno.HttpServer[] = [];
  readonly #hardStop = new AbortController();
  /** Aborted when the server begins to stop: bodies still arriving are refused then. */
  readonly #stopRequested = new AbortController();
  #port: number | null = null;
  #stopping: Promise<void> | null = null;
  #resolveStopped!: () => void;
  /** Resolves once the server has stopped. */
  readonly stopped: Promise<void> = new Promise((resolve) => this.#resolveStopped = resolve);

  /** A server with `config` (defaults filled in). Throws when the configuration cannot work. */
  constructor(config: Partial<ServeConfiguration>) {
    this.configuration = resolveServeConfiguration(config);
    const problem = configurationProblem(this.configuration);
    if (problem !== null) throw new Error(problem);
    this.#limiter = new ConcurrencyLimiter(
      this.configuration.maxConcurrentRequests,
      this.configuration.maxQueuedRequests,
    );
    this.#rpc = this.configuration.rpc
      ? new RpcEndpoint(this.configuration.rpc, this.configuration.logger)
      : null;
    this.#tcpLoopback = isLoopbackAddress(this.configuration.host);
  }

  /** The bound TCP port once started (useful with port 0), else null. */
  get port(): number | null {
    return this.#port;
  }

  /** Completions holding a slot. */
  get activeRequests(): number {
    return this.#limiter.active;
  }

  /** Completions waiting for a slot. */
  get queuedRequests(): number {
    return this.#limiter.queued;
  }

  /** Resolves when no completion runs or waits (the slots of finished and cancelled ones are free). */
  idle(): Promise<void> {
    return this.#limiter.idle();
  }

  /** Open `/rpc` connections. */
  get rpcConnections(): number {
    return this.#rpc?.connections ?? 0;
  }

  /** Starts listening on the TCP port and/or the Unix socket. */
  async start(): Promise<void> {
    const config = this.configuration;
    const signal = this.#hardStop.signal;
    const onError = (error: unknown) => {
      config.logger.error(`Request failed: ${error instanceof Error ? error.message : String(error)}`);
      return errorResponse(OpenAIError.server("The server failed to handle the request."));
    };
    try {
      if (config.port !== null) {
        const server = Deno.serve(
          { hostname: config.host, port: config.port, signal, onListen: () => {}, onError },
          (request) => this.handle(request, "tcp"),
        );
        this.#servers.push(server);
        this.#port = server.addr.port;
      }
      if (config.socketPath !== null) {
        await this.#prepareSocketPath(config.socketPath);
        const server = Deno.serve(
          { path: config.socketPath, signal, onListen: () => {}, onError },
          (request) => this.handle(request, "unix"),
        );
        this.#servers.push(server);
        await Deno.chmod(config.socketPath, 0o600);
      }
    } catch (error) {
      this.#hardStop.abort();
      throw error;
    }
  }

  /** Refuses to replace anything but a stale socket at `path`. */
  async #prepareSocketPath(path: string): Promise<void> {
    let info: Deno.FileInfo;
    try {
      info = await Deno.lstat(path);
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) return;
      throw error;
    }
    if (!info.isSocket) throw new Error(`${path} exists and is not a socket; refusing to replace it.`);
    await Deno.remove(path);
  }

  /**
   * Stops: new requests are refused, completions in flight are cancelled (streams end with an error event),
   * bridge connections are shut down, then the listeners close (forcibly after {@link STOP_GRACE_MS}).
   */
  stop(): Promise<void> {
    this.#stopping ??= this.#stop();
    return this.#stopping;
  }

  async #stop(): Promise<void> {
    const shuttingDown = OpenAIError.shuttingDown(503);
    this.#stopRequested.abort();
    for (const run of [...this.#runs]) run.cancel(shuttingDown);
    await this.#rpc?.stop();
    const closed = await settledWithin(Promise.all(this.#servers.map((s) => s.shutdown())), {
      ms: STOP_GRACE_MS,
    });
    if (!closed) {
      // Connections that would not finish: close them. A connection whose client never finishes its request
      // body keeps shutdown() waiting, and then Deno's own abort listener throws BadResource (reported as
      // uncaught, it would end the process): that is swallowed, and the wait for it is bounded too.
      const swallow = (event: ErrorEvent) => {
        if (event.error instanceof Deno.errors.BadResource) event.preventDefault();
      };
      globalThis.addEventListener("error", swallow);
      try {
        this.#hardStop.abort();
      } catch {
        // the listeners closed meanwhile
      } finally {
        globalThis.removeEventListener("error", swallow);
      }
      await settledWithin(Promise.allSettled(this.#servers.map((s) => s.finished)), { ms: STOP_GRACE_MS });
    }
    if (this.configuration.socketPath !== null) {
      await Deno.remove(this.configuration.socketPath).catch(() => {});
    }
    this.#port = null;
    this.#resolveStopped();
  }

  /**
   * Serves one request (also without sockets: `transport` `"direct"` skips the Host check and cannot open
   * WebSockets).
   */
  async handle(request: Request, transport: RequestTransport = "direct"): Promise<Response> {
    const started = performance.now();
    const url = new URL(request.url);
    const origin = request.headers.get("origin");
    let response: Response;
    try {
      response = await this.#route(request, url, transport);
    } catch (error) {
      if (!(error instanceof OpenAIError)) {
        this.configuration.logger.error(
          `${request.method} ${printable(url.pathname)} failed: ${
            error instanceof Error ? error.message : String(error)
          }`,
        );
      }
      response = errorResponse(
        error instanceof OpenAIError ? error : OpenAIError.server("The server failed to handle the request."),
      );
    }
    if (response.status !== 101) {
      for (const [k, v] of Object.entries(corsHeaders(origin, this.configuration.allowedOrigins))) {
        response.headers.set(k, v);
      }
    }
    const ms = Math.round(performance.now() - started);
    const error = errorOf(response);
    // A client that went away before its answer got none: its 500 'cancelled' is no failure of the server.
    const gone = request.signal.aborted && error?.code === "cancelled";
    const line = `${request.method} ${printable(url.pathname)} → ${
      gone ? CLIENT_GONE_LOG : `${response.status}${answered(response, error)}`
    } ${ms}ms`;
    const unread = unreadRefusal(request, response, this.configuration.allowedOrigins);
    // A 503 from /health is its answer, not a failure: 'stopping' while the server stops (after the stop signal),
    // 'unavailable' while the model cannot run (warned about at start, and each completion refused is a warning).
    // A load balancer probes it every second or so, so as a warning it would bury the warnings that matter.
    const healthAnswer = response.status === 503 && HEALTH_PATHS.has(trimTrailingSlashes(url.pathname));
    // The reason may quote what the client sent (its Origin, its Host): printable, so a header cannot bring
    // terminal escapes (C1 controls in obs-text) or bidi overrides into the log.
    if (unread) this.configuration.logger.warning(`${line}: ${printable(unread)}`);
    else if (response.status >= 500 && !healthAnswer && !gone) this.configuration.logger.warning(line);
    else this.configuration.logger.info(line);
    return response;
  }

  /** The response of a request that passed the address screen: its route, its method, its key. */
  #route(request: Request, url: URL, transport: RequestTransport): Response | Promise<Response> {
    const refused = this.#screenAddress(request, url, transport);
    if (refused) return refused;
    if (request.method === "OPTIONS") return this.#preflight(request);
    const path = trimTrailingSlashes(url.pathname);
    const route: Route = { request, url, transport, path, method: request.method };
    if (HEALTH_PATHS.has(path)) return this.#health(route);
    if (MODELS_PATHS.has(path)) return this.#modelList(route);
    if (CHAT_PATHS.has(path)) return this.#chat(route);
    if (path === "/rpc" && this.#rpc !== null) return this.#rpcUpgrade(route, this.#rpc);
    const page = isRead(route.method) ? this.configuration.pages?.serve(path, request) : null;
    if (page) return page;
    const model = MODEL_PATH.exec(path);
    if (model) return this.#model(route, model[1]);
    return this.#unknownUrl(route);
  }

  /**
   * Refuses a request addressed to a Host this listener does not serve (on a loopback or Unix-socket
   * listener, or with allowed hosts), or coming from a browser Origin that is not allowed; null to go on.
   */
  #screenAddress(request: Request, url: URL, transport: RequestTransport): Response | null {
    const config = this.configuration;
    const hostChecked = transport === "unix" ||
      (transport === "tcp" && (this.#tcpLoopback || config.allowedHosts.length > 0));
    if (hostChecked) {
      const bad = checkHost(request.headers.get("host"), config.allowedHosts);
      if (bad) return errorResponse(bad);
    }
    const origin = request.headers.get("origin");
    // A served page talks to its own origin (a Host that passed the check above) without a CORS grant.
    const sameOrigin = hostChecked && !config.allowedHosts.includes("*") && config.pages !== null &&
      origin === url.origin;
    const badOrigin = sameOrigin ? null : checkOrigin(origin, config.allowedOrigins);
    return badOrigin ? errorResponse(badOrigin) : null;
  }

  /** Null when the request's bearer token is the API key (or none is required), else why not. */
  #keyProblem(request: Request): OpenAIError | null {
    return checkApiKey(bearerToken(request.headers.get("authorization")), {
      apiKey: this.configuration.apiKey,
    });
  }

  /** Open without an API key; 503 `stopping` once the server has begun to stop. */
  #health(route: Route): Response | Promise<Response> {
    if (!isRead(route.method)) return methodNotAllowed(route.method, route.path, "GET, HEAD");
    return health(this.configuration, {
      activeRequests: this.#limiter.active,
      queuedRequests: this.#limiter.queued,
      rpcConnections: this.rpcConnections,
      stopping: this.#stopping !== null,
    });
  }

  #modelList(route: Route): Response {
    if (!isRead(route.method)) return methodNotAllowed(route.method, route.path, "GET, HEAD");
    return this.#authenticated(
      this.#keyProblem(route.request),
      () => listModels(this.configuration, this.#created),
    );
  }

  #model(route: Route, encodedId: string): Response {
    if (!isRead(route.method)) return methodNotAllowed(route.method, route.path, "GET, HEAD");
    return this.#authenticated(
      this.#keyProblem(route.request),
      () => retrieveModel(decodedOrAsIs(encodedId), { config: this.configuration, created: this.#created }),
    );
  }

  #chat(route: Route): Response | Promise<Response> {
    const { request, method, path } = route;
    if (method !== "POST") return methodNotAllowed(method, path, "POST");
    const denied = this.#keyProblem(request);
    if (denied) return this.#unauthorized(denied);
    const type = (request.headers.get("content-type") ?? "").split(";")[0].trim().toLowerCase();
    if (type !== "application/json") return errorResponse(unsupportedMediaType());
    if (this.#stopping) return errorResponse(OpenAIError.shuttingDown(500));
    const context: ChatContext = {
      config: this.configuration,
      limiter: this.#limiter,
      runs: this.#runs,
      stopping: this.#stopRequested.signal,
    };
    return chatCompletions(request, {
      ...context,
      clientGone: request.signal,
      logAs: `${request.method} ${printable(route.url.pathname)}`,
    });
  }

  #rpcUpgrade(route: Route, rpc: RpcEndpoint): Response {
    const { request, method, path } = route;
    if (method !== "GET") return methodNotAllowed(method, path, "GET");
    // Browsers cannot set headers on a WebSocket: the key may also come as ?api_key=.
    const token = bearerToken(request.headers.get("authorization")) ||
      (route.url.searchParams.get("api_key") ?? "");
    const denied = checkApiKey(token, { apiKey: this.configuration.apiKey, via: "websocket" });
    if (denied) return this.#unauthorized(denied);
    if (this.#stopping) return errorResponse(OpenAIError.shuttingDown(500));
    if (route.transport === "direct") {
      throw OpenAIError.invalidRequest(
        "WebSocket connections need a listening server.",
        null,
        "upgrade_required",
      );
    }
    return rpc.upgrade(request);
  }

  #unknownUrl(route: Route): Response {
    const rpc = this.#rpc ? ", GET /rpc (WebSocket)" : "";
    return errorResponse(
      new OpenAIError({
        status: 404,
        message:
          `Unknown request URL: ${route.method} ${route.path}. Supported: POST /v1/chat/completions, GET /v1/models, GET /health${rpc}.`,
        type: "invalid_request_error",
        code: "unknown_url",
      }),
    );
  }

  #authenticated(denied: OpenAIError | null, serve: () => Response): Response {
    return denied ? this.#unauthorized(denied) : serve();
  }

  #unauthorized(error: OpenAIError): Response {
    return errorResponse(error, { "www-authenticate": "Bearer" });
  }

  #preflight(request: Request): Response {
    const headers: Record<string, string> = { allow: "GET, POST, OPTIONS" };
    if (request.headers.get("origin") !== null) {
      headers["access-control-allow-methods"] = "GET, POST, OPTIONS";
      headers["access-control-allow-headers"] = request.headers.get("access-control-request-headers") ??
        "Authorization, Content-Type";
      headers["access-control-max-age"] = "600";
    }
    return plainResponse(null, { status: 204, headers });
  }
}
