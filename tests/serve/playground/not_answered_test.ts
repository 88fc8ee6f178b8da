/**
 * What the playground says about a client tool call the bridge stopped waiting for, from the abort reason
 * the typed client really gets: a timeout's `tool/cancel` reason is the tool output the model got
 * ("Error: Tool 'check_stock' timed out after …"), shown as that error output without the raw prefix; a
 * cancelled turn says so; anything else is shown as it is.
 */
import assert from "node:assert/strict";
import { Bridge, BridgeError } from "../../../mod.ts";
import { notAnswered } from "../../../src/serve/playground/page/values.ts";

/** An NPC whose one client tool never answers: `reason` settles with the abort reason its handler got. */
async function waitingNpc(bridge: Bridge, timeoutSeconds: number) {
  let aborted!: (reason: unknown) => void;
  const reason = new Promise<unknown>((resolve) => aborted = resolve);
  let called!: () => void;
  const calling = new Promise<void>((resolve) => called = resolve);
  const stock = bridge.tool(
    { name: "check_stock", description: "Stock.", timeoutSeconds },
    (_args, { signal }) =>
      new Promise((_resolve, reject) => {
        called();
        signal.addEventListener("abort", () => {
          aborted(signal.reason);
          reject(signal.reason);
        });
      }),
  );
  const npc = await bridge.createNpc({ name: "Mira" }, {
    tools: [stock],
    options: { replyFormat: "text" },
    model: {
      type: "scripted",
      steps: [{ toolCalls: [{ name: "check_stock", arguments: { item: "ale" } }] }, { text: "[sad] None." }],
    },
  });
  return { npc, reason, calling };
}

Deno.test("a call left to time out: the model got an error output, shown without the raw 'Error: ' prefix", async () => {
  await using bridge = await Bridge.open({ onWarning: () => {} });
  const { npc, reason } = await waitingNpc(bridge, 0.05);
  const reply = await npc.talk("Any ale?");
  assert.equal(reply.line, "None.");
  const got = await reason;
  assert.ok(got instanceof BridgeError);
  assert.equal(got.message, "Error: Tool 'check_stock' timed out after 50ms.", "the reason on the wire");
  assert.deepEqual(notAnswered(got), {
    status: "not answered: the model got an error output instead",
    output: "Tool 'check_stock' timed out after 50ms.",
  });
});

Deno.test("a call whose turn was cancelled: says the turn was cancelled", async () => {
  await using bridge = await Bridge.open({ onWarning: () => {} });
  const { npc, reason, calling } = await waitingNpc(bridge, 0);
  const turn = npc.talk("Any ale?");
  await calling;
  await npc.cancel();
  await assert.rejects(turn, (e: unknown) => e instanceof BridgeError && e.dataCode === "cancelled");
  assert.deepEqual(notAnswered(await reason), {
    status: "not answered: the turn was cancelled",
    output: null,
  });
});

Deno.test("a call whose turn the bridge cancelled by itself (the designer did not): says the bridge cancelled it", async () => {
  await using bridge = await Bridge.open({ onWarning: () => {} });
  const { npc, reason, calling } = await waitingNpc(bridge, 0);
  const turn = npc.talk("Any ale?");
  await calling;
  await npc.cancel();
  await assert.rejects(turn, (e: unknown) => e instanceof BridgeError && e.dataCode === "cancelled");
  assert.deepEqual(notAnswered(await reason, false), {
    status: "not answered: the bridge cancelled the turn",
    output: null,
  });
});

Deno.test("a closed connection (shut_down): the call went with the bridge, and the row says so", () => {
  assert.deepEqual(notAnswered(BridgeError.of("shut_down", "The bridge was closed.")), {
    status: "not answered: the bridge went away, and the call with it",
    output: null,
  });
});

Deno.test("any other reason (a bridge that gave none) is shown as it is", () => {
  assert.deepEqual(notAnswered(BridgeError.cancelled("The bridge no longer needs this result.")), {
    status: "not answered: the bridge no longer needs it (The bridge no longer needs this result.)",
    output: null,
  });
  // Only a tool/cancel reason (a cancelled error) is read as the model's output.
  assert.deepEqual(notAnswered(new Error("Error: something")), {
    status: "not answered: the bridge no longer needs it (Error: something)",
    output: null,
  });
});
