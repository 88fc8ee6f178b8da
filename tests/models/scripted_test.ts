/**
 * The scripted model's template placeholders (§10) over the wire: `{toolOutput}` is the latest tool output of
 * the turn, `{toolOutputs}` all outputs of the turn (one per line, none from earlier turns), `{prompt}` the
 * turn's prompt.
 */
import assert from "node:assert/strict";
import { scripted, WireClient } from "../helpers/wire.ts";
import { tool } from "../helpers/messages.ts";
import type { JsonObject } from "../../src/protocol/json.ts";

const TEMPLATE = "prompt={prompt} latest={toolOutput} all={toolOutputs}";

Deno.test("scripted templates: {toolOutput} is the latest output of this turn, {toolOutputs} only this turn's", async () => {
  const c = new WireClient();
  await c.call("session/create", {
    session: "s",
    tools: [tool("look")],
    model: scripted(
      // turn 1: two tool rounds, then the template
      { toolCalls: [{ name: "look", arguments: {} }] },
      { toolCalls: [{ name: "look", arguments: {} }] },
      { template: TEMPLATE },
      // turn 2: one tool round, then the template
      { toolCalls: [{ name: "look", arguments: {} }] },
      { template: TEMPLATE },
      // turn 3: no tool round
      { template: TEMPLATE },
    ),
  });

  c.request("session/respond", { session: "s", prompt: "first" }, 1);
  assert.equal((await c.toolCall(1)).id, "t-1");
  c.reply("t-1", { output: "round one" });
  assert.equal((await c.toolCall(2)).id, "t-2");
  c.reply("t-2", { output: { round: 2 } });
  const first = (await c.response(1)).result as JsonObject;
  assert.equal(first.text, 'prompt=first latest={"round":2} all=round one\n{"round":2}');

  c.request("session/respond", { session: "s", prompt: "second" }, 2);
  assert.equal((await c.toolCall(3)).id, "t-3");
  c.reply("t-3", { output: "only this", isError: true });
  const second = (await c.response(2)).result as JsonObject;
  assert.equal(second.text, "prompt=second latest=Error: only this all=Error: only this");

  c.request("session/respond", { session: "s", prompt: "third" }, 3);
  const third = (await c.response(3)).result as JsonObject;
  assert.equal(third.text, "prompt=third latest= all=");
  await c.close();
});
