/**
 * §11 extension API: a quest extension like the spec's example (quest/create, quest/narrate deferred with
 * drive → quest/event notifications and client tools via tool/call), listed in initialize; engine.call
 * in-process with and without an id; runtime registration and overriding built-ins.
 */
import assert from "node:assert/strict";
import { scripted, WireClient } from "../helpers/wire.ts";
import type { JsonObject, JsonValue } from "../../src/protocol/json.ts";
import { BridgeError } from "../../src/protocol/errors.ts";
import { Agent } from "../../src/agent/agent.ts";
import { DEFAULT_POLICY, type ToolPolicy } from "../../src/agent/types.ts";
import type { BridgeExtension, MethodRegistry } from "../../src/engine/extension.ts";
import { parseToolDefinitions } from "../../src/agent/tool_definitions.ts";
import { turnResultJson } from "../../src/agent/result_json.ts";
import { GameExtension } from "../../src/game/game_extension.ts";
import { BridgeEngine } from "../../src/composition.ts";
import { type Logger, silentLogger } from "../../src/util/logger.ts";

/** The §11 example: a quest narrator. */
class QuestMethods implements BridgeExtension {
  readonly notificationMethods = ["quest/event"];
  readonly quests = new Map<string, Agent>();
  shutDown = false;

  register(registry: MethodRegistry): void {
    registry.register("quest/create", (request) => {
      const id = request.params.string("quest");
      const tools = request.params.has("tools")
        ? parseToolDefinitions(request.params.get("tools"), { path: "tools", defaultTimeoutMs: 60_000 }).tools
        : [];
      const model = request.createModel(request.parseModel(request.params.get("model")));
      const agent = new Agent({
        model,
        instructions: request.params.optionalString("instructions") ?? null,
        tools,
      });
      this.quests.set(id, agent);
      return { quest: id };
    });
    registry.register("quest/narrate", (request) => {
      const id = request.params.string("quest");
      const agent = this.quests.get(id);
      if (!agent) throw new BridgeError(-32090, "quest_not_found", `No quest '${id}'.`, { quest: id });
      const text = request.params.string("text");
      const stream = request.params.optionalBool("stream") ?? false;
      const policy: ToolPolicy = { ...DEFAULT_POLICY, choice: agent.tools.length > 0 ? "required" : "auto" };
      return request.drive(
        (sink) => agent.runTurn({ prompt: text, schema: null, policy, stream }, sink, request.signal),
        { stream, context: { quest: id }, eventMethod: "quest/event" },
      ).then((result) => ({ quest: id, ...turnResultJson(result) }));
    });
  }

  shutdown(): void {
    this.shutDown = true;
    this.quests.clear();
  }
}

function kind(m: JsonObject): string {
  if (m.method === "quest/event") return `quest:${((m.params as JsonObject).event as JsonObject).type}`;
  return WireClient.kind(m);
}

const LOOK = {
  name: "look_around",
  description: "Describe the room.",
  parameters: { type: "object", properties: { where: { type: "string" } } },
};

Deno.test("a quest extension is listed in initialize next to the game methods", async () => {
  const quests = new QuestMethods();
  const c = new WireClient({ extensions: [new GameExtension(), quests] });
  const caps = (await c.call("initialize")).capabilities as JsonObject;
  const methods = caps.methods as string[];
  assert.ok(methods.includes("quest/create") && methods.includes("quest/narrate"));
  assert.deepEqual(methods, [...methods].sort());
  assert.deepEqual(caps.notifications, [
    "session/event",
    "tool/cancel",
    "npc/event",
    "world/changed",
    "quest/event",
  ]);
  await c.close();
  assert.equal(quests.shutDown, true);
  assert.equal(quests.quests.size, 0);
});

Deno.test("quest/narrate: deferred, streams quest/event, client tools via tool/call with {quest, requestId, call}", async () => {
  const c = new WireClient({ extensions: [new QuestMethods()] });
  c.request("quest/create", {
    quest: "q1",
    instructions: "Narrate.",
    tools: [LOOK],
    model: scripted({ toolCalls: [{ name: "look_around", arguments: { where: "crypt" } }] }, {
      template: "You see {toolOutput}.",
    }),
  }, 1);
  c.request("quest/narrate", { quest: "q1", text: "Enter the crypt.", stream: true }, 2);
  c.request("ping", {}, 3); // not blocked by the deferred narration
  const call = await c.toolCall(1);
  assert.deepEqual(call.params, {
    quest: "q1",
    requestId: 2,
    call: {
      id: ((call.params as JsonObject).call as JsonObject).id,
      name: "look_around",
      arguments: { where: "crypt" },
    },
  });
  c.reply(call.id, { output: "bones" });
  const r = await c.response(2);
  // the turn starts inside the handler: the scripted model answers at once, so the turn runs up to its
  // client tool call before the ping is even read; the ping is answered while the tool call waits
  assert.deepEqual(c.messages.map(kind), [
    "response",
    "quest:modelStep",
    "quest:toolCallStarted",
    "tool/call",
    "response",
    "quest:toolCallCompleted",
    "quest:modelStep",
    "quest:text",
    "quest:text",
    "quest:text",
    "response",
  ]);
  assert.deepEqual(c.messages.filter((m) => !("method" in m)).map((m) => m.id), [1, 3, 2]);
  for (const m of c.messages.filter((m) => m.method === "quest/event")) {
    assert.deepEqual(Object.keys(m.params as JsonObject), ["quest", "requestId", "event"]);
    assert.equal((m.params as JsonObject).quest, "q1");
    assert.equal((m.params as JsonObject).requestId, 2);
  }
  const result = r.result as JsonObject;
  assert.deepEqual(Object.keys(result), ["quest", "text", "toolCalls", "usage", "steps"]);
  assert.equal(result.text, "You see bones.");
  assert.deepEqual((result.steps as JsonObject[]).map((s) => s.toolCallingMode), ["required", "allowed"]);
  await c.close();
});

Deno.test("quest errors: custom codes pass through, parameter errors are -32602", async () => {
  const c = new WireClient({ extensions: [new QuestMethods()] });
  c.request("quest/narrate", { quest: "nope", text: "x" }, 1);
  c.request("quest/create", {}, 2);
  c.request("quest/create", { quest: "q", model: { type: "frob" } }, 3);
  assert.deepEqual((await c.response(1)).error, {
    code: -32090,
    message: "No quest 'nope'.",
    data: { code: "quest_not_found", quest: "nope" },
  });
  assert.deepEqual((await c.response(2)).error, {
    code: -32602,
    message: "Missing required parameter 'quest'.",
    data: { code: "invalid_params" },
  });
  assert.equal(((await c.response(3)).error as JsonObject).code, -32602);
  await c.close();
});

Deno.test("engine.call in-process: with an id it is the requestId; without one a local-<n> id is used", async () => {
  const c = new WireClient({ extensions: [new QuestMethods()] });
  const engine = c.engine;
  assert.deepEqual(
    await engine.call("quest/create", {
      quest: "q",
      tools: [LOOK],
      model: scripted({ toolCalls: [{ name: "look_around" }] }, { template: "A: {toolOutput}" }, {
        toolCalls: [{ name: "look_around" }],
      }, { template: "B: {toolOutput}" }),
    }),
    { quest: "q" },
  );
  const first = engine.call("quest/narrate", { quest: "q", text: "one", stream: true }, 42);
  const call1 = await c.toolCall(1);
  assert.equal((call1.params as JsonObject).requestId, 42);
  c.reply(call1.id, { output: "a door" });
  const r1 = await first as JsonObject;
  assert.equal(r1.text, "A: a door");
  const second = engine.call("quest/narrate", { quest: "q", text: "two", stream: true });
  const call2 = await c.toolCall(2);
  const local = (call2.params as JsonObject).requestId as string;
  assert.match(local, /^local-\d+$/);
  c.reply(call2.id, { output: "a key" });
  assert.equal(((await second) as JsonObject).text, "B: a key");
  // results are returned directly, never sent as responses
  assert.deepEqual(c.messages.filter((m) => !("method" in m)), []);
  const events = c.messages.filter((m) => m.method === "quest/event");
  assert.deepEqual(
    [...new Set(events.map((m) => (m.params as JsonObject).requestId as JsonValue))],
    [42, local],
  );
  // errors reject with a BridgeError
  await assert.rejects(engine.call("quest/narrate", { quest: "zz", text: "x" }), (e: unknown) => {
    assert.ok(e instanceof BridgeError);
    assert.deepEqual(e.toJson(), {
      code: -32090,
      message: "No quest 'zz'.",
      data: { code: "quest_not_found", quest: "zz" },
    });
    return true;
  });
  await assert.rejects(
    engine.call("nope/nope"),
    (e: unknown) => e instanceof BridgeError && e.code === -32601,
  );
  // a session turn in-process: session/event carries the id too
  await engine.call("session/create", { session: "s", model: scripted({ text: "hi", chunks: 1 }) });
  assert.equal(
    ((await engine.call(
      "session/respond",
      { session: "s", prompt: "x", stream: true },
      "in-proc",
    )) as JsonObject).text,
    "hi",
  );
  const sessionEvents = c.messages.filter((m) => m.method === "session/event");
  assert.ok(sessionEvents.length > 0);
  for (const m of sessionEvents) assert.equal((m.params as JsonObject).requestId, "in-proc");
  await c.close();
});

Deno.test("engine.register adds methods at runtime; an extension may override a built-in", async () => {
  const override: BridgeExtension = {
    register(registry) {
      registry.register("ping", () => ({ pong: true }));
    },
  };
  const c = new WireClient({ extensions: [override], logger: silentLogger }); // "boom" is on purpose
  c.engine.register("custom/echo", (request) => ({ echo: request.params.get("value") ?? null }));
  c.engine.register("custom/fail", () => {
    throw new Error("boom");
  });
  c.engine.register("custom/reject", () => Promise.reject(BridgeError.of("busy", "Later.")));
  c.request("ping", {}, 1);
  c.request("custom/echo", { value: [1, "two"] }, 2);
  c.request("custom/fail", {}, 3);
  c.request("custom/reject", {}, 4);
  assert.deepEqual((await c.response(1)).result, { pong: true });
  assert.deepEqual((await c.response(2)).result, { echo: [1, "two"] });
  // A plain Error from a handler is a bug, not a model failure (issue 19: was -32012 generation_failed).
  assert.deepEqual((await c.response(3)).error, {
    code: -32603,
    message: "boom",
    data: { code: "internal_error" },
  });
  assert.deepEqual((await c.response(4)).error, { code: -32010, message: "Later.", data: { code: "busy" } });
  const methods = (await c.call("initialize")).capabilities as JsonObject;
  assert.ok((methods.methods as string[]).includes("custom/echo"));
  await c.close();
});

Deno.test("an extension that registers a method twice is refused when the engine is built, naming it and the method", async () => {
  class Quests implements BridgeExtension {
    register(registry: MethodRegistry): void {
      registry.register("quest/create", () => ({ first: true }));
      registry.register("quest/create", () => ({ second: true }));
    }
  }
  assert.throws(() => new BridgeEngine({ extensions: [new Quests()] }), {
    name: "TypeError",
    message:
      "The extension Quests registers the method 'quest/create' twice; its first handler would never run.",
  });
  const literal: BridgeExtension = {
    register(registry) {
      registry.register("quest/list", () => []);
      registry.register("quest/list", () => []);
    },
  };
  assert.throws(() => new BridgeEngine({ extensions: [literal] }), {
    message: "The extension registers the method 'quest/list' twice; its first handler would never run.",
  });
  // Runtime registration still replaces (engine.register), and two method sets may each register a name.
  const engine = new BridgeEngine({ extensions: [] });
  engine.register("quest/list", () => []);
  engine.register("quest/list", () => ["replaced"]);
  assert.deepEqual(await engine.call("quest/list"), ["replaced"]);
});

Deno.test("overriding a built-in or an earlier extension's method works and is logged at info, naming who is replaced", async () => {
  const logs: string[] = [];
  const logger: Logger = {
    debug: () => {},
    info: (m) => logs.push(`info: ${m}`),
    warning: (m) => logs.push(`warning: ${m}`),
    error: (m) => logs.push(`error: ${m}`),
  };
  class PingOverride implements BridgeExtension {
    register(registry: MethodRegistry): void {
      registry.register("ping", () => ({ pong: true }));
      registry.register("npc/list", () => ({ npcs: ["mine"] }));
    }
  }
  const c = new WireClient({ extensions: [new GameExtension(), new PingOverride()], logger });
  assert.deepEqual(logs, [
    "info: The extension PingOverride replaces the method 'ping' of the built-in method set CoreMethods.",
    "info: The extension PingOverride replaces the method 'npc/list' of the extension GameExtension.",
  ]);
  c.request("ping", {}, 1);
  c.request("npc/list", {}, 2);
  assert.deepEqual(await c.response(1), { jsonrpc: "2.0", id: 1, result: { pong: true } });
  assert.deepEqual(await c.response(2), { jsonrpc: "2.0", id: 2, result: { npcs: ["mine"] } });
  await c.close();
});

Deno.test("an extension error with a protocol code or outside -32057…-32099 is answered -32603 naming the rule, with the stack of where it was made in the log", async () => {
  const logs: string[] = [];
  const logger: Logger = { debug: () => {}, info: () => {}, warning: () => {}, error: (m) => logs.push(m) };
  class Colliding implements BridgeExtension {
    register(registry: MethodRegistry): void {
      // -32050 is npc_not_found to every client; -32000 is outside the range left to extensions.
      registry.register("quest/find", () => {
        throw new BridgeError(-32050, "quest_not_found", "No quest 'crypt'.");
      });
      registry.register(
        "quest/gate",
        () => Promise.reject(new BridgeError(-32000, "gate_offline", "Offline.")),
      );
    }
  }
  const c = new WireClient({ extensions: [new Colliding()], logger });
  c.request("quest/find", {}, 1);
  c.request("quest/gate", {}, 2);
  assert.deepEqual((await c.response(1)).error, {
    code: -32603,
    message:
      "BridgeError code -32050 ('quest_not_found') is the protocol's 'npc_not_found' (PROTOCOL.md §8). " +
      "An extension's own codes are -32057…-32099.",
    data: { code: "internal_error" },
  });
  assert.deepEqual((await c.response(2)).error, {
    code: -32603,
    message: "BridgeError code -32000 ('gate_offline') is outside -32057…-32099, the codes PROTOCOL.md §8 " +
      "leaves to extensions.",
    data: { code: "internal_error" },
  });
  assert.equal(logs.length, 2);
  assert.match(
    logs[0],
    /^Internal error in 'quest\/find' \(the handler's error code breaks PROTOCOL\.md §8; fix it where the error is made\): TypeError: BridgeError code -32050 .*\n +at .*extension_test\.ts/s,
  );
  // The bridge goes on serving.
  c.request("ping", {}, 3);
  assert.deepEqual(await c.response(3), { jsonrpc: "2.0", id: 3, result: {} });
  await c.close();
});

Deno.test("an extension error whose data has a 'code' member is answered -32603 naming it: it would replace data.code on the wire", async () => {
  const logs: string[] = [];
  const logger: Logger = { debug: () => {}, info: () => {}, warning: () => {}, error: (m) => logs.push(m) };
  const shop: BridgeExtension = {
    register(registry) {
      // An item's code in the error's data: on the wire it would be data.code, and a client routing by
      // data.code would see "iron_sword" where "item_sold_out" was meant.
      registry.register("shop/buy", () => {
        throw new BridgeError(-32091, "item_sold_out", "Sold out.", { code: "iron_sword" });
      });
    },
  };
  const c = new WireClient({ extensions: [shop], logger });
  c.request("shop/buy", {}, 1);
  assert.deepEqual((await c.response(1)).error, {
    code: -32603,
    message: "BridgeError data has a member 'code' (\"iron_sword\"), which would replace its data.code " +
      "'item_sold_out' on the wire; give that member another name.",
    data: { code: "internal_error" },
  });
  assert.equal(logs.length, 1);
  assert.match(logs[0], /^Internal error in 'shop\/buy' .*\n +at .*extension_test\.ts/s);
  // The bridge goes on serving.
  c.request("ping", {}, 2);
  assert.deepEqual(await c.response(2), { jsonrpc: "2.0", id: 2, result: {} });
  await c.close();
});
