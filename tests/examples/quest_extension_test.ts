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
    { quest: "crypt", warnings: [] },
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
  assert.deepEqual(narration, {
    quest: "crypt",
    text: "You see cobwebs.",
    toolsUsed: ["look_around"],
    warnings: [],
  });
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

/** A bridge in this process serving the standard methods and the quest methods. */
function questBridge(
  options: { onWarning?: (warning: string, method: string) => void } = {},
): Promise<Bridge> {
  return Bridge.open({
    engine: (send, onShutdown) =>
      new BridgeEngine({ extensions: [...standardExtensions(), new QuestMethods()], onShutdown }, send),
    ...options,
  });
}

/** What a call settles with: its error, or its result when it did not fail (never rejects). */
function outcome(call: Promise<unknown>): Promise<unknown> {
  return call.then((value) => value, (error: unknown) => error);
}

/** The BridgeError of an outcome (failing the test, with what came instead, when it is none). */
async function errorOf(settled: Promise<unknown>): Promise<BridgeError> {
  const value = await settled;
  assert.ok(value instanceof BridgeError, `no BridgeError but ${JSON.stringify(value)}`);
  return value;
}

Deno.test("two narrations of one quest sent together run one after the other, each answered", async () => {
  await using bridge = await questBridge();
  // The first step waits (the turn is still running when the second narration arrives), the second does not.
  const steps = [{ text: "The door creaks.", delayMs: 1 }, { text: "A bat flies out." }];
  await bridge.request("quest/create", { quest: "crypt", model: { type: "scripted", steps } });
  const narrations = await Promise.all([
    bridge.request<Narration>("quest/narrate", { quest: "crypt", text: "I open the door." }),
    bridge.request<Narration>("quest/narrate", { quest: "crypt", text: "I look inside." }),
  ]);
  assert.deepEqual(narrations.map((n) => n.text), ["The door creaks.", "A bat flies out."]);
});

Deno.test("quest/cancel stops the running narration at once (-32009) and the ones waiting behind it", async () => {
  await using bridge = await questBridge();
  const steps = [{ text: "A long tale.", delayMs: 600_000 }];
  await bridge.request("quest/create", { quest: "crypt", model: { type: "scripted", steps } });
  let started = () => {};
  const stepStarted = new Promise<void>((resolve) => started = resolve);
  const running = outcome(
    bridge.request("quest/narrate", { quest: "crypt", text: "Tell me.", stream: true }, {
      onNotification: () => started(),
    }),
  );
  const waiting = outcome(bridge.request("quest/narrate", { quest: "crypt", text: "And then?" }));
  await stepStarted; // the first turn's model step runs (and waits)
  assert.deepEqual(await bridge.request("quest/cancel", { quest: "crypt" }), { cancelled: 2 });
  const stopped = await errorOf(running);
  assert.deepEqual([stopped.code, stopped.message], [-32009, "The turn was cancelled."]);
  const dropped = await errorOf(waiting);
  assert.deepEqual([dropped.code, dropped.message], [
    -32009,
    "The request was cancelled before it started.",
  ]);
  // The typed client's onAbort, as docs/extending.md shows it: the call waits for the bridge's -32009.
  const abort = new AbortController();
  const aborted = outcome(bridge.request("quest/narrate", { quest: "crypt", text: "Go on." }, {
    signal: abort.signal,
    onAbort: () => bridge.notify("quest/cancel", { quest: "crypt" }),
  }));
  abort.abort();
  const abortedError = await errorOf(aborted);
  assert.deepEqual([abortedError.code, abortedError.dataCode], [-32009, "cancelled"]);
});

Deno.test("closing the bridge stops a running narration (the extension's shutdown cancels its queues)", async () => {
  const bridge = await questBridge();
  const steps = [{ text: "A long tale.", delayMs: 600_000 }];
  await bridge.request("quest/create", { quest: "crypt", model: { type: "scripted", steps } });
  const running = outcome(bridge.request("quest/narrate", { quest: "crypt", text: "Tell me." }));
  await bridge.close();
  assert.equal((await errorOf(running)).dataCode, "cancelled");
});

Deno.test("a client's misspelled parameter: the quest methods warn, and a missing one names the near miss", async () => {
  const warned: string[] = [];
  await using bridge = await questBridge({
    onWarning: (warning, method) => warned.push(`${method}: ${warning}`),
  });
  const created = await bridge.request<{ quest: string; warnings: string[] }>("quest/create", {
    quest: "crypt",
    instuctions: "Narrate in two sentences.",
    model: { type: "scripted", steps: [{ text: "Dust." }] },
  });
  assert.deepEqual(created, {
    quest: "crypt",
    warnings: ["Unknown parameter 'instuctions' was ignored (did you mean 'instructions'?)."],
  });
  // The typed client hands a result's warnings to onWarning (by default, stderr).
  assert.deepEqual(warned, ["quest/create: " + created.warnings[0]]);
  const missing = await errorOf(outcome(bridge.request("quest/narrate", { qeust: "crypt", text: "Hi." })));
  assert.deepEqual([missing.code, missing.message], [
    -32602,
    "Missing required parameter 'quest' (the unknown parameter 'qeust' (did you mean 'quest'?) was ignored).",
  ]);
  // The bridge goes on serving.
  assert.deepEqual(await bridge.request("ping", {}), {});
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
