/**
 * `GET /health` (model availability, open without an API key), `GET /v1/models` and `GET /v1/models/{id}`
 * (aliases listed with their `parent`).
 * @module
 */
import type { JsonObject } from "../protocol/json.ts";
import type { LanguageModel, ModelAvailability } from "../models/language_model.ts";
import { errorResponse, jsonResponse } from "./http_response.ts";
import type { ConcurrencyLimiter } from "./limiter.ts";
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

/** `GET /health`: 200 `ok`, or 503 `unavailable` with the default model's reason. */
export async function health(config: ServeConfiguration, limiter: ConcurrencyLimiter): Promise<Response> {
  const models: JsonObject = {};
  let defaultStatus: ModelAvailability | null = null;
  for (const name of [...config.models.keys()].sort()) {
    const status = await availabilityOf(config.models.get(name)!);
    models[name] = status.available ? "available" : `unavailable: ${status.reason ?? "unknown"}`;
    if (name === config.defaultModel) defaultStatus = status;
  }
  const available = defaultStatus?.available === true;
  const body: JsonObject = {
    status: available ? "ok" : "unavailable",
    default_model: config.defaultModel,
    models,
    active_requests: limiter.active,
    queued_requests: limiter.queued,
  };
  if (!available) body.reason = defaultStatus?.reason ?? "no_default_model";
  return jsonResponse(body, { status: available ? 200 : 503 });
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
  return errorResponse(
    new OpenAIError({
      status: 404,
      message: `The model '${id}' does not exist.`,
      type: "invalid_request_error",
      param: "model",
      code: "model_not_found",
    }),
  );
}
