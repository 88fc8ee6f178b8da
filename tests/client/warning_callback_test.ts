/**
 * A game's `onWarning` callback that throws: the call whose result carried the warning still resolves (a
 * created NPC's handle is not lost), and the callback's error goes to `onError` (default `reportError`), the
 * way a throwing notification listener's does.
 */
import assert from "node:assert/strict";
import { Bridge, type BridgeOptions } from "../../mod.ts";

function throwingWarnings(): { options: BridgeOptions; errors: Error[] } {
  const errors: Error[] = [];
  return {
    errors,
    options: {
      onWarning: (warning, method) => {
        throw new Error(`the game's logger failed on ${method}: ${warning}`);
      },
      onError: (error) => errors.push(error),
    },
  };
}

Deno.test("onWarning: a callback that throws does not lose the created NPC; onError gets its error", async () => {
  const { options, errors } = throwingWarnings();
  await using bridge = await Bridge.open(options);
  // An unknown persona key: the result warns "Unknown parameter 'persona.mood' was ignored."
  const persona = { name: "Mira", role: "the innkeeper", mood: "grumpy" } as { name: string };
  const mira = await bridge.createNpc(persona, { model: { type: "scripted", steps: [{ text: "Hi." }] } });
  assert.deepEqual((await bridge.listNpcs()).map((npc) => npc.npc), [mira.id]);
  assert.deepEqual(errors.map((e) => e.message), [
    "the game's logger failed on npc/create: Unknown parameter 'persona.mood' was ignored.",
  ]);
});

Deno.test("onWarning: a callback that throws does not lose the handle of a tool registered twice", async () => {
  const { options, errors } = throwingWarnings();
  await using bridge = await Bridge.open(options);
  const spec = { name: "look", description: "Looks around.", parameters: { type: "object" as const } };
  bridge.tool(spec, () => "a door");
  const tool = bridge.tool(spec, () => "a window");
  assert.equal(tool.name, "look");
  assert.equal(errors.length, 1);
  assert.match(
    errors[0].message,
    /the game's logger failed on bridge\.tool: Tool 'look' already had a handler/,
  );
});

Deno.test("onWarning: a callback that throws on a tool handler's bug leaves the model its error output", async () => {
  const { options, errors } = throwingWarnings();
  await using bridge = await Bridge.open(options);
  const look = bridge.tool(
    { name: "look", description: "Looks around.", parameters: { type: "object" } },
    () => {
      throw new TypeError("room is undefined");
    },
  );
  const session = await bridge.createSession({
    tools: [look],
    model: { type: "scripted", steps: [{ toolCalls: [{ name: "look", arguments: {} }] }, { text: "Done." }] },
  });
  const reply = await session.respond("Look.");
  assert.equal(reply.text, "Done.");
  assert.deepEqual(reply.toolCalls.map((r) => [r.output, r.isError]), [["room is undefined", true]]);
  assert.equal(errors.length, 1);
  assert.match(errors[0].message, /the game's logger failed on tool\/call: Tool 'look' threw a TypeError/);
});

/** Collects what reaches `reportError` (an uncaught error) while `body` runs, instead of ending the test. */
async function reported(body: () => Promise<void>): Promise<unknown[]> {
  const seen: unknown[] = [];
  const listener = (event: ErrorEvent) => {
    event.preventDefault();
    seen.push(event.error);
  };
  globalThis.addEventListener("error", listener);
  try {
    await body();
  } finally {
    globalThis.removeEventListener("error", listener);
  }
  return seen;
}

Deno.test("onError: one that throws while handling an onWarning error is reported once, and the call still resolves", async () => {
  const calls: string[] = [];
  const options: BridgeOptions = {
    onWarning: (warning) => {
      throw new Error(`logger failed: ${warning}`);
    },
    onError: (error) => {
      calls.push(error.message);
      throw new Error(`error logger failed: ${error.message}`);
    },
  };
  let created = "";
  const seen = await reported(async () => {
    await using bridge = await Bridge.open(options);
    const persona = { name: "Mira", mood: "grumpy" } as { name: string };
    created = (await bridge.createNpc(persona, { model: { type: "scripted", steps: [{ text: "Hi." }] } })).id;
  });
  assert.equal(created, "npc1");
  assert.deepEqual(calls, ["logger failed: Unknown parameter 'persona.mood' was ignored."]);
  assert.deepEqual(seen.map((e) => (e as Error).message), [
    "error logger failed: logger failed: Unknown parameter 'persona.mood' was ignored.",
  ]);
});

Deno.test("onError: one that throws while handling a listener's error is called once, its own error reported once", async () => {
  const calls: string[] = [];
  const seen = await reported(async () => {
    await using bridge = await Bridge.open({
      onError: (error) => {
        calls.push(error.message);
        throw new Error(`error logger failed: ${error.message}`);
      },
    });
    const heard = Promise.withResolvers<void>();
    bridge.onNotification("world/changed", () => {
      heard.resolve();
      throw new Error("listener failed");
    });
    const world = await bridge.createWorld({ gate: "shut" });
    await world.subscribe("gate", () => {});
    await world.set("gate", "open");
    await heard.promise;
    assert.equal(await world.get("gate"), "open"); // the client goes on
  });
  assert.deepEqual(calls, ["listener failed"]);
  assert.deepEqual(seen.map((e) => (e as Error).message), ["error logger failed: listener failed"]);
});
