/**
 * Core methods: `initialize`, `ping`, `model/availability`, `schema/validate`, `tools/validate`, `shutdown`.
 * @module
 */
import { BridgeError } from "../protocol/errors.ts";
import type { JsonObject, JsonValue } from "../protocol/json.ts";
import type { ModelAvailability } from "../models/language_model.ts";
import { PROTOCOL_VERSION, SERVER_INFO } from "../protocol/version.ts";
import type { BridgeExtension, ExtensionHost, MethodRegistry } from "../engine/extension.ts";
import type { HandlerContext } from "../engine/context.ts";
import { convertForParam, parseToolDefinitions } from "../agent/tool_definitions.ts";
import { freeFormWarnings } from "../schema/free_form.ts";

/** The availability object in the spec's key order. */
export function availabilityJson(a: ModelAvailability): JsonObject {
  const out: JsonObject = { available: a.available };
  if (!a.available) out.reason = a.reason ?? "unknown";
  out.contextSize = a.contextSize;
  if (a.variant !== undefined) out.variant = a.variant;
  out.supportedLanguages = [...a.supportedLanguages].sort();
  if (a.detail !== undefined) out.detail = a.detail;
  return out;
}

/**
 * The availability `initialize` reports: at once when the system model knows it without waiting (no plugin,
 * or the plugin's last answer), so its response comes before the output of later requests, as for
 * `session/create`; else after a check. Never throws.
 */
function initialAvailability(
  host: Pick<ExtensionHost, "systemModel">,
): JsonObject | Promise<JsonObject> {
  try {
    const known = host.systemModel().availabilityNow?.();
    if (known !== undefined) return availabilityJson(known);
  } catch {
    // Counted as unknown by the check below, with the error as the detail.
  }
  return systemAvailability(host);
}

/** Availability of the bridge's system model, freshly checked (never throws). */
export async function systemAvailability(host: Pick<ExtensionHost, "systemModel">): Promise<JsonObject> {
  try {
    return availabilityJson(await host.systemModel().availability());
  } catch (error) {
    return availabilityJson({
      available: false,
      reason: "unknown",
      contextSize: 4096,
      supportedLanguages: [],
      detail: error instanceof Error ? error.message : String(error),
    });
  }
}

/**
 * The core methods.
 *
 * @example
 * ```ts
 * import { BridgeEngine } from "../composition.ts";
 * const engine = new BridgeEngine();
 * await engine.call("ping"); // {}
 * ```
 */
export class CoreMethods implements BridgeExtension {
  /** The `client` object of the last `initialize` (null before one). */
  client: JsonValue = null;

  /** Registers the core methods. */
  register(registry: MethodRegistry, host: ExtensionHost): void {
    registry.register("initialize", (r) => this.#initialize(r, host, registry));
    registry.register("ping", () => ({}));
    registry.register("model/availability", () => systemAvailability(host));
    registry.register("schema/validate", (r) => this.#schemaValidate(r));
    registry.register("tools/validate", (r) => this.#toolsValidate(r));
    registry.register("shutdown", () => host.shutdown().then(() => ({})));
  }

  #initialize(
    r: HandlerContext,
    host: ExtensionHost,
    registry: MethodRegistry,
  ): JsonValue | Promise<JsonValue> {
    const p = r.params;
    const client = p.optionalObject("client");
    const version = p.optionalString("protocolVersion");
    if (version !== undefined && version.split(".")[0] !== PROTOCOL_VERSION.split(".")[0]) {
      throw BridgeError.invalidParams(
        `Unsupported protocol version '${version}'; this bridge speaks ${PROTOCOL_VERSION}.`,
      );
    }
    if (client !== undefined) this.client = client;
    const config = host.settings;
    const capabilities: JsonObject = {
      methods: registry.names(),
      notifications: [...host.notificationMethods],
      clientRequests: ["tool/call"],
      streaming: true,
      clientTools: true,
      structuredOutput: true,
      models: config.allowsScriptedModels ? ["system", "scripted"] : ["system"],
      maxSessions: config.maxSessions,
      batch: false,
    };
    const result = (model: JsonObject): JsonObject => ({
      protocolVersion: PROTOCOL_VERSION,
      server: { name: SERVER_INFO.name, version: SERVER_INFO.version },
      capabilities,
      model,
    });
    const model = initialAvailability(host);
    return model instanceof Promise ? model.then(result) : result(model);
  }

  #schemaValidate(r: HandlerContext): JsonValue {
    r.params.expectKeys(["schema", "name"]);
    const schema = r.params.value("schema");
    const name = r.params.optionalString("name") ?? "Response";
    const conversion = convertForParam(schema, { rootName: name, path: "schema" });
    // No model runs here: objects without properties are warned about as the on-device model generates them.
    const freeForm = freeFormWarnings(conversion.freeForm, { plainObjects: true });
    return { warnings: [...conversion.warnings, ...freeForm], generationSchema: conversion.generationSchema };
  }

  #toolsValidate(r: HandlerContext): JsonValue {
    r.params.expectKeys(["tools"]);
    const parsed = parseToolDefinitions(r.params.array("tools"), { path: "tools", defaultTimeoutMs: null });
    const tools = parsed.tools.map((t) => {
      const prefix = `${t.name}: `;
      return {
        name: t.name,
        warnings: parsed.warnings.filter((w) =>
          w.startsWith(prefix) && !w.endsWith("may not know when to call it.")
        )
          .map((w) => w.slice(prefix.length)),
        generationSchema: t.generationSchema,
      };
    });
    return { tools, warnings: parsed.warnings };
  }
}
