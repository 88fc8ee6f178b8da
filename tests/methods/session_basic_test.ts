import assert from "node:assert/strict";
import { scripted, WireClient } from "../helpers/wire.ts";

Deno.test("pipelined create + respond with a client tool: every message in order", async () => {
  const c = new WireClient();
  c.request("session/create", {
    session: "guard",
    instructions: "You are a guard.",
    tools: [{
      name: "open_gate",
      description: "Open a gate.",
      parameters: { type: "object", properties: { gate: { type: "string" } }, required: ["gate"] },
    }],
    options: { toolChoice: "required" },
    model: scripted({ toolCalls: [{ name: "open_gate", arguments: { gate: "north" } }] }, {
      template: "Gate: {toolOutput}",
    }),
  }, 2);
  c.request("session/respond", { session: "guard", prompt: "Open the north gate.", stream: true }, 3);
  const call = await c.toolCall(1);
  assert.equal(call.id, "t-1");
  c.reply("t-1", { output: { opened: false } });
  const response = await c.response(3);
  const result = response.result as Record<string, unknown>;
  assert.equal(result.text, 'Gate: {"opened":false}');
  assert.deepEqual(c.messages.map(WireClient.kind), [
    "response",
    "event:modelStep",
    "event:toolCallStarted",
    "tool/call",
    "event:toolCallCompleted",
    "event:modelStep",
    "event:text",
    "event:text",
    "event:text",
    "response",
  ]);
  await c.close();
});
