/**
 * `GET /health` (model availability, open without an API key), `GET /v1/models` and `GET /v1/models/{id}`
 * (aliases listed with their `parent`).
 * @module
 */
import type { JsonObject } from "../protocol/json.ts";
import type { LanguageModel, ModelAvailability } from "../models/language_model.ts";
import { errorResponse, jsonResponse } from "./http_response.ts";
import { OpenAIError } from "./openai_error.ts";
import type { ServeConfiguration } from "./server_config.ts";

async function availabilityOf(model: LanguageModel): Promise<ModelAvailability> {
  try {
    return await model.availability();
  } catch (error) {
    return {
      available: false,
      reason: "unknown",
      contextSize: 0,
      supportedLanguages: [],
      detail: error instanceof Error ? error.message : String(error),
    };
  }
}

/** What `GET /health` reports besides the models: the server's load and whether it is stopping. */
export interface HealthCounts {
  /** Completions holding a slot. */
  activeRequests: number;
  /** Completions waiting for a slot. */
  queuedRequests: number;
  /** Open `/rpc` WebSocket connections. */
  rpcConnections: number;
  /** True once the server has begun to stop. */
  stopping: boolean;
}

/**
 * `GET /health`: 200 `ok`; 503 `unavailable` with the default model's reason; 503 `stopping` (reason
 * `server_shutting_down`) once the server has begun to stop, so a load balancer stops routing to it.
 */
export async function health(config: ServeConfiguration, counts: HealthCounts): Promise<Response> {
  const models: JsonObject = {};
  let defaultStatus: ModelAvailability | null = null;
  for (const name of [...config.models.keys()].sort()) {
    const status = await availabilityOf(config.models.get(name)!);
    models[name] = status.available ? "available" : `unavailable: ${status.reason ?? "unknown"}`;
    if (name === config.defaultModel) defaultStatus = status;
  }
  const available = defaultStatus?.available === true;
  const ok = available && !counts.stopping;
  const body: JsonObject = {
    status: counts.stopping ? "stopping" : available ? "ok" : "unavailable",
    default_model: config.defaultModel,
    models,
    active_requests: counts.activeRequests,
    queued_requests: counts.queuedRequests,
    rpc_connections: counts.rpcConnections,
  };
  if (counts.stopping) body.reason = "server_shutting_down";
  else if (!available) body.reason = defaultStatus?.reason ?? "no_default_model";
  return jsonResponse(body, { status: ok ? 200 : 503 });
}

function modelObject(config: ServeConfiguration, created: number, id: string, parent?: string): JsonObject {
  const model = config.models.get(parent ?? id);
  const out: JsonObject = {
    id,
    object: "model",
    created,
    owned_by: model?.kind === "system" ? "apple" : "open-apple-models",
  };
  if (parent !== undefined) out.parent = parent;
  return out;
}

/** `GET /v1/models`. */
export function listModels(config: ServeConfiguration, created: number): Response {
  const data = [...config.models.keys()].sort().map((id) => modelObject(config, created, id));
  for (const alias of [...config.modelAliases.keys()].sort()) {
    if (!config.models.has(alias)) {
      data.push(modelObject(config, created, alias, config.modelAliases.get(alias)));
    }
  }
  return jsonResponse({ object: "list", data });
}

/** `GET /v1/models/{id}`. */
export function retrieveModel(id: string, server: { config: ServeConfiguration; created: number }): Response {
  const { config, created } = server;
  if (config.models.has(id)) return jsonResponse(modelObject(config, created, id));
  const target = config.modelAliases.get(id);
  if (target !== undefined && config.models.has(target)) {
    return jsonResponse(modelObject(config, created, id, target));
  }
  return errorResponse(modelNotFound(config, id));
}

/**
 * 404 `model_not_found` for a model id the server does not serve: its message lists the ids it serves and,
 * for an id code written for OpenAI names (`gpt-4o-mini`), the `--model-alias` that serves it unchanged.
 */
export function modelNotFound(config: ServeConfiguration, id: string | null): OpenAIError {
  const available = [...config.models.keys(), ...config.modelAliases.keys()].sort().join(", ");
  const alias = id !== null && /^[A-Za-z0-9._:-]{1,128}$/.test(id)
    ? ` To answer it with the server's model, start the server with --model-alias ${id}=${config.defaultModel}.`
    : "";
  return new OpenAIError({
    status: 404,
    message: `The model '${id}' does not exist. Available models: ${available}.${alias}`,
    type: "invalid_request_error",
    param: "model",
    code: "model_not_found",
  });
}
