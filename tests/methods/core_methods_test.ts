/**
 * §5 core methods over the wire: initialize, ping, model/availability, schema/validate, tools/validate and
 * shutdown.
 */
import assert from "node:assert/strict";
import { scripted, WireClient } from "../helpers/wire.ts";
import { invalidParams } from "../helpers/messages.ts";
import { withDeadline } from "../helpers/deadline.ts";
import type { JsonObject } from "../../src/protocol/json.ts";
import type { LanguageModel } from "../../src/models/language_model.ts";
import { UnavailableModel } from "../../src/models/unavailable.ts";
import type { BridgeExtension } from "../../src/engine/extension.ts";

const CORE_METHODS = [
  "initialize",
  "model/availability",
  "ping",
  "schema/validate",
  "session/cancel",
  "session/compact",
  "session/create",
  "session/delete",
  "session/list",
  "session/reset",
  "session/respond",
  "session/setContextNote",
  "session/setInstructions",
  "session/setTools",
  "session/transcript",
  "shutdown",
  "tools/validate",
];

function availableModel(languages: string[]): LanguageModel {
  return {
    kind: "system",
    contextSize: 8192,
    trimsHistory: true,
    availability: () =>
      Promise.resolve({
        available: true,
        contextSize: 8192,
        variant: "AFM 3 Core Advanced",
        supportedLanguages: languages,
      }),
    step: () => Promise.reject(new Error("not used")),
  };
}

Deno.test("initialize: result shape, sorted methods, notifications, models, maxSessions", async () => {
  const c = new WireClient({ systemModel: () => new UnavailableModel("model_not_ready") });
  c.request("initialize", { client: { name: "MyGame", version: "1.2" }, protocolVersion: "1.0" }, 1);
  const r = await c.response(1);
  const result = r.result as JsonObject;
  assert.deepEqual(Object.keys(result), ["protocolVersion", "server", "capabilities", "model"]);
  assert.equal(result.protocolVersion, "1.0");
  assert.deepEqual(result.server, { name: "open-apple-models", version: "0.1.0" });
  const caps = result.capabilities as JsonObject;
  assert.deepEqual(Object.keys(caps), [
    "methods",
    "notifications",
    "clientRequests",
    "streaming",
    "clientTools",
    "structuredOutput",
    "models",
    "maxSessions",
    "batch",
  ]);
  const methods = caps.methods as string[];
  assert.deepEqual(methods, [...methods].sort());
  for (const m of CORE_METHODS) assert.ok(methods.includes(m), m);
  assert.equal(new Set(methods).size, methods.length);
  const notifications = caps.notifications as string[];
  assert.deepEqual(notifications.slice(0, 2), ["session/event", "tool/cancel"]);
  assert.deepEqual(caps.clientRequests, ["tool/call"]);
  assert.equal(caps.streaming, true);
  assert.equal(caps.clientTools, true);
  assert.equal(caps.structuredOutput, true);
  assert.deepEqual(caps.models, ["system", "scripted"]);
  assert.equal(caps.maxSessions, 64);
  assert.equal(caps.batch, false);
  assert.deepEqual(result.model, {
    available: false,
    reason: "model_not_ready",
    contextSize: 4096,
    supportedLanguages: [],
  });
  assert.deepEqual(c.engine.client, { name: "MyGame", version: "1.2" });
  await c.close();
});

Deno.test("initialize lists the game methods when the standard extensions are loaded", async () => {
  const c = new WireClient();
  const caps = (await c.call("initialize")).capabilities as JsonObject;
  const methods = caps.methods as string[];
  const registered = c.engine.registry.names();
  assert.deepEqual(methods, registered);
  assert.deepEqual(methods, [...methods].sort());
  const game = methods.filter((m) => /^(npc|decision|world|content)\//.test(m));
  if (game.length > 0) {
    assert.ok((caps.notifications as string[]).includes("npc/event"));
  }
  assert.ok((caps.notifications as string[]).includes("world/changed"));
  await c.close();
});

Deno.test("initialize with an extension: its methods are sorted in, its notifications listed after the built-ins", async () => {
  const ext: BridgeExtension = {
    notificationMethods: ["quest/event"],
    register(registry) {
      registry.register("quest/create", () => ({}));
      registry.register("aaa/first", () => ({}));
      registry.register("zzz/last", () => ({}));
    },
  };
  const c = new WireClient({ extensions: [ext], allowsScriptedModels: false, maxSessions: 3 });
  const caps = (await c.call("initialize", {})).capabilities as JsonObject;
  assert.deepEqual(
    caps.methods,
    ["aaa/first", ...CORE_METHODS.slice(0, 15), "quest/create", ...CORE_METHODS.slice(15), "zzz/last"].sort(),
  );
  assert.deepEqual(caps.notifications, ["session/event", "tool/cancel", "quest/event"]);
  assert.deepEqual(caps.models, ["system"]);
  assert.equal(caps.maxSessions, 3);
  await c.close();
});

Deno.test("initialize: protocol version checks and param types", async () => {
  const c = new WireClient();
  c.request("initialize", { protocolVersion: "2.0" }, 1);
  c.request("initialize", { protocolVersion: "0.9" }, 2);
  c.request("initialize", { protocolVersion: 1 }, 3);
  c.request("initialize", { client: "MyGame" }, 4);
  c.request("initialize", { protocolVersion: "1.7", client: { name: "x" }, extra: true }, 5);
  assert.deepEqual(
    (await c.response(1)).error,
    invalidParams("Unsupported protocol version '2.0'; this bridge speaks 1.0."),
  );
  assert.deepEqual(
    (await c.response(2)).error,
    invalidParams("Unsupported protocol version '0.9'; this bridge speaks 1.0."),
  );
  assert.deepEqual(
    (await c.response(3)).error,
    invalidParams("Parameter 'protocolVersion' must be a string; got 1."),
  );
  assert.deepEqual(
    (await c.response(4)).error,
    invalidParams(`Parameter 'client' must be an object; got "MyGame".`),
  );
  assert.equal(((await c.response(5)).result as JsonObject).protocolVersion, "1.0");
  await c.close();
});

Deno.test("ping answers {} (also with params)", async () => {
  const c = new WireClient();
  c.request("ping", undefined, 1);
  c.request("ping", { anything: [1, 2] }, 2);
  await c.response(2);
  assert.deepEqual(c.lines, ['{"jsonrpc":"2.0","id":1,"result":{}}', '{"jsonrpc":"2.0","id":2,"result":{}}']);
  await c.close();
});

Deno.test("model/availability without a plugin: available false with a reason", async () => {
  const c = new WireClient();
  const r = await c.call("model/availability");
  assert.equal(r.available, false);
  assert.equal(typeof r.reason, "string");
  assert.deepEqual(Object.keys(r).slice(0, 3), ["available", "reason", "contextSize"]);
  assert.ok(Array.isArray(r.supportedLanguages));
  await c.close();
});

Deno.test("model/availability of an available model: key order and sorted languages", async () => {
  const c = new WireClient({ systemModel: () => availableModel(["en", "de", "da", "en-AU"]) });
  c.request("model/availability", {}, 1);
  await c.response(1);
  assert.equal(
    c.lines[0],
    '{"jsonrpc":"2.0","id":1,"result":{"available":true,"contextSize":8192,"variant":"AFM 3 Core Advanced","supportedLanguages":["da","de","en","en-AU"]}}',
  );
  const init = await c.call("initialize");
  assert.deepEqual(init.model, JSON.parse(c.lines[0]).result);
  await c.close();
});

Deno.test("model/availability of an unavailable model keeps the reason", async () => {
  const c = new WireClient({ systemModel: () => new UnavailableModel("apple_intelligence_not_enabled") });
  assert.deepEqual(await c.call("model/availability"), {
    available: false,
    reason: "apple_intelligence_not_enabled",
    contextSize: 4096,
    supportedLanguages: [],
  });
  await c.close();
});

Deno.test("schema/validate: warnings and generation schema; errors -32007 with path and schemaPath", async () => {
  const c = new WireClient();
  const schema = {
    type: "object",
    properties: { code: { type: "string", pattern: "^[A-Z]+$" }, n: { type: "integer" } },
    required: ["code"],
  };
  assert.deepEqual(await c.call("schema/validate", { schema }), {
    warnings: ["#/properties/code: pattern '^[A-Z]+$' is described to the model but not enforced"],
    generationSchema: {
      title: "Response",
      type: "object",
      properties: {
        code: { type: "string", description: "Must match the regular expression ^[A-Z]+$." },
        n: { type: "integer" },
      },
      required: ["code"],
      "x-order": ["code", "n"],
      additionalProperties: false,
    },
  });
  const named = await c.call("schema/validate", { schema: { type: "object", properties: {} }, name: "Loot" });
  assert.equal((named.generationSchema as JsonObject).title, "Loot");
  // No model runs here: an object without properties is warned about as the on-device model generates it.
  assert.deepEqual(named.warnings, [
    "#: object without 'properties': the on-device and scripted models generate it as {}; list the properties it " +
    "should have",
  ]);
  c.request("schema/validate", { schema: { type: "frob" } }, 1);
  c.request("schema/validate", {}, 2);
  c.request(
    "schema/validate",
    { schema: { type: "object", properties: { a: { $ref: "#/$defs/missing" } } } },
    3,
  );
  c.request("schema/validate", { schema: {}, name: 5 }, 4);
  assert.deepEqual((await c.response(1)).error, {
    code: -32007,
    message:
      "schema: unsupported type 'frob' (a type is one of object, array, string, integer, number, boolean, null) (at #)",
    data: { code: "invalid_schema", path: "schema", schemaPath: "#" },
  });
  assert.deepEqual((await c.response(2)).error, invalidParams("Missing required parameter 'schema'."));
  const e3 = (await c.response(3)).error as JsonObject;
  assert.equal(e3.code, -32007);
  assert.deepEqual(e3.data, { code: "invalid_schema", path: "schema", schemaPath: "#/properties/a" });
  assert.deepEqual((await c.response(4)).error, invalidParams("Parameter 'name' must be a string; got 5."));
  await c.close();
});

Deno.test("tools/validate: per-tool warnings unprefixed, top-level warnings prefixed, errors", async () => {
  const c = new WireClient();
  const r = await c.call("tools/validate", {
    tools: [
      { name: "a", parameters: { type: "object", properties: { code: { type: "string", pattern: "^x$" } } } },
      { type: "function", function: { name: "b", description: "B.", parameters: '{"type":"object"}' } },
    ],
  });
  assert.deepEqual(Object.keys(r), ["tools", "warnings"]);
  const tools = r.tools as JsonObject[];
  assert.deepEqual(tools.map((t) => Object.keys(t)), [["name", "warnings", "generationSchema"], [
    "name",
    "warnings",
    "generationSchema",
  ]]);
  assert.deepEqual(tools.map((t) => [t.name, t.warnings]), [
    ["a", ["#/properties/code: pattern '^x$' is described to the model but not enforced"]],
    ["b", []],
  ]);
  assert.equal((tools[0].generationSchema as JsonObject).title, "AArguments");
  assert.deepEqual(r.warnings, [
    "a: no description; the model may not know when to call it.",
    "a: #/properties/code: pattern '^x$' is described to the model but not enforced",
  ]);
  c.request("tools/validate", {}, 1);
  c.request("tools/validate", { tools: [{ name: "a" }, { name: "a" }] }, 2);
  c.request("tools/validate", { tools: [{ name: "x", parameters: { type: "frob" } }] }, 3);
  assert.deepEqual((await c.response(1)).error, invalidParams("Missing required parameter 'tools'."));
  assert.deepEqual(
    (await c.response(2)).error,
    invalidParams("'tools[1].name' must be unique: 'a' is also the name of 'tools[0]'."),
  );
  assert.deepEqual((await c.response(3)).error, {
    code: -32007,
    message:
      "tools[0].parameters: unsupported type 'frob' (a type is one of object, array, string, integer, number, boolean, null) (at #)",
    data: { code: "invalid_schema", path: "tools[0].parameters", schemaPath: "#" },
  });
  await c.close();
});

Deno.test("shutdown: cancelled requests are answered first, then {}; later requests fail with -32023", async () => {
  let hookSawResponse: boolean | null = null;
  const c: WireClient = new WireClient({
    onShutdown: () => hookSawResponse = c.messages.some((m) => m.id === 9 && "result" in m),
  });
  await c.call("session/create", { session: "A", model: scripted({ text: "x", delayMs: 60_000 }) });
  await c.call("session/create", {
    session: "B",
    tools: [{ name: "t", description: "T." }],
    model: scripted({ toolCalls: [{ name: "t" }] }, { text: "after" }),
  });
  c.request("session/respond", { session: "A", prompt: "wait", stream: true }, 1);
  c.request("session/respond", { session: "B", prompt: "call" }, 2);
  c.request("session/respond", { session: "A", prompt: "queued" }, 3);
  await c.toolCall(1);
  await c.waitFor((m) => m.method === "session/event");
  const before = c.messages.length;
  c.request("shutdown", {}, 9);
  await c.response(9); // (that it does not wait for the 2 s grace here is timed in tests/slow/timing_slow.ts)
  const after = c.messages.slice(before);
  const responses = after.filter((m) => !("method" in m));
  assert.deepEqual(responses.map((m) => m.id).slice(-1), [9]);
  assert.deepEqual(new Set(responses.map((m) => m.id)), new Set([1, 2, 3, 9]));
  for (const m of responses.slice(0, -1)) {
    assert.equal((m.error as JsonObject).code, -32009, JSON.stringify(m));
  }
  assert.deepEqual(responses.at(-1), { jsonrpc: "2.0", id: 9, result: {} });
  assert.equal(hookSawResponse, true);
  const n = c.messages.length;
  c.request("ping", {}, 10);
  c.request("session/list", {}, 11);
  c.request("shutdown", {}, 12);
  // every request after shutdown fails with -32023, also one whose method does not exist
  c.request("no/such_method", {}, 13);
  c.sendLine('{"jsonrpc":"2.0","method":"session/create","params":{}}');
  c.sendLine('{"jsonrpc":"2.0","method":"no/such_notification"}');
  const shutDown = { code: -32023, message: "The bridge has shut down.", data: { code: "shut_down" } };
  assert.deepEqual(c.messages.slice(n), [
    { jsonrpc: "2.0", id: 10, error: shutDown },
    { jsonrpc: "2.0", id: 11, error: shutDown },
    { jsonrpc: "2.0", id: 12, error: shutDown },
    { jsonrpc: "2.0", id: 13, error: shutDown },
  ]);
  assert.equal(c.engine.phase, "shut_down");
  // invalid input is still answered
  c.sendLine("{");
  assert.equal((c.messages.at(-1)!.error as JsonObject).code, -32700);
});

Deno.test("shutdown sent as a notification shuts down and still calls the host's onShutdown hook", async () => {
  let hooked = 0;
  let hookRan!: () => void;
  const hook = new Promise<void>((r) => hookRan = r);
  const c = new WireClient({
    onShutdown: () => {
      hooked++;
      hookRan();
    },
  });
  await c.call("session/create", { session: "A", model: scripted({ text: "x", delayMs: 60_000 }) });
  c.request("session/respond", { session: "A", prompt: "wait" }, 1);
  c.sendLine('{"jsonrpc":"2.0","method":"shutdown"}');
  assert.equal(c.engine.phase, "shut_down");
  assert.equal(((await c.response(1)).error as JsonObject).code, -32009);
  await withDeadline(hook, "the onShutdown hook");
  assert.equal(hooked, 1);
  // no response for the notification
  assert.deepEqual(c.messages.filter((m) => !("method" in m)).map((m) => m.id), [1000, 1]);
});
