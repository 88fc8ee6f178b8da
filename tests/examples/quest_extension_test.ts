/**
 * docs/extending.md's method set (examples/quest_extension.ts): served in-process next to the standard
 * methods, called through the typed client with `bridge.request<T>`, its `quest/event`s seen by the call's
 * `onNotification` and by `bridge.onNotification`, its client tool answered by `bridge.tool`, its error a
 * BridgeError with the extension's code.
 */
import assert from "node:assert/strict";
import { BridgeEngine, standardExtensions } from "../../engine.ts";
import { Bridge, BridgeError, type JsonObject } from "../../mod.ts";
import { type Narration, QuestMethods } from "../../examples/quest_extension.ts";

Deno.test("a TypeScript method set, called through the typed client", async () => {
  await using bridge = await Bridge.open({
    engine: (send, onShutdown) =>
      new BridgeEngine({ extensions: [...standardExtensions(), new QuestMethods()], onShutdown }, send),
  });
  assert.ok(bridge.methods.includes("quest/narrate") && bridge.methods.includes("npc/talk"));
  assert.ok(bridge.server.capabilities.notifications.includes("quest/event"));
  const wheres: string[] = [];
  const look = bridge.tool({
    name: "look_around",
    description: "Describe a place.",
    parameters: { type: "object", properties: { where: { type: "string" } }, required: ["where"] },
  }, ({ where }, ctx) => {
    wheres.push(`${where} ${ctx.params.quest}`);
    return "cobwebs";
  });
  assert.deepEqual(
    await bridge.request("quest/create", {
      quest: "crypt",
      tools: [look.definition],
      model: {
        type: "scripted",
        steps: [
          { toolCalls: [{ name: "look_around", arguments: { where: "crypt" } }] },
          { template: "You see {toolOutput}." },
        ],
      },
    }),
    { quest: "crypt" },
  );
  const perCall: string[] = [];
  const everywhere: string[] = [];
  const stop = bridge.onNotification("quest/event", (params) => everywhere.push(String(params.quest)));
  const narration = await bridge.request<Narration>("quest/narrate", {
    quest: "crypt",
    text: "I enter.",
    stream: true,
  }, {
    onNotification: (method, params) => {
      const event = params.event as JsonObject;
      perCall.push(`${method} ${event.type}`);
    },
  });
  stop();
  assert.deepEqual(narration, { quest: "crypt", text: "You see cobwebs.", toolsUsed: ["look_around"] });
  assert.deepEqual(wheres, ["crypt crypt"]);
  assert.deepEqual(perCall.slice(0, 4), [
    "quest/event modelStep",
    "quest/event toolCallStarted",
    "quest/event toolCallCompleted",
    "quest/event modelStep",
  ]);
  assert.ok(perCall.slice(4).every((e) => e === "quest/event text") && perCall.length > 4);
  assert.equal(everywhere.length, perCall.length);
  await assert.rejects(bridge.request("quest/narrate", { quest: "tomb", text: "Hi." }), (e) => {
    assert.ok(e instanceof BridgeError);
    assert.deepEqual([e.code, e.dataCode, e.data], [-32090, "quest_not_found", { quest: "tomb" }]);
    return true;
  });
});

Deno.test("examples/quest_extension.ts runs", async () => {
  const out = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--quiet",
      "--no-prompt",
      new URL("../../examples/quest_extension.ts", import.meta.url).pathname,
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stdout = new TextDecoder().decode(out.stdout);
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
  assert.equal(
    stdout.trim().split("\n").at(-1),
    "You see cobwebs and an open coffin. Something stirs. (tools: look_around)",
  );
});
