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
