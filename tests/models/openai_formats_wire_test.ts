/**
 * An OpenAI-compatible server that answers a `format: date` field with a date that does not exist: the game
 * never sees it. The backend sends the problem back and takes the next answer; a server that never gives a
 * real date fails the turn.
 */
import assert from "node:assert/strict";
import type { JsonObject } from "../../src/protocol/json.ts";
import { completion, json, MockServer, toolCall } from "./openai_mock_server.ts";
import { Wire } from "./openai_wire.ts";

const FESTIVAL = {
  type: "object",
  properties: { when: { type: "string", format: "date" }, contact: { type: "string", format: "email" } },
  required: ["when", "contact"],
};

async function respond(
  server: MockServer,
  params: JsonObject = {},
): Promise<{ wire: Wire; response: JsonObject }> {
  const wire = new Wire();
  await wire.openaiSession(server.baseURL, params);
  wire.send({
    id: 2,
    method: "session/respond",
    params: { session: "s", prompt: "When is the festival?", schema: FESTIVAL },
  });
  return { wire, response: await wire.response(2) };
}

Deno.test("openai formats: a bad date answer is retried and the real date reaches the game", async () => {
  const server = new MockServer([
    () => json(completion('{"when":"2024-02-30","contact":"mayor@town.example"}')),
    () => json(completion('{"when":"2024-02-29","contact":"mayor@town.example"}')),
  ]);
  const { wire, response } = await respond(server);
  try {
    assert.ok("result" in response, JSON.stringify(response));
    const result = response.result as JsonObject;
    assert.deepEqual(result.structured, { when: "2024-02-29", contact: "mayor@town.example" });
    assert.equal(server.chatBodies.length, 2);
    // The retry tells the server what was wrong.
    const retry = (server.chatBodies[1] as { messages: JsonObject[] }).messages.at(-1)!;
    assert.match(String(retry.content), /\/when must match format "date"/);
  } finally {
    await wire.engine.shutdown();
    await server.close();
  }
});

Deno.test("openai formats: a server that never answers a real date fails the turn", async () => {
  const server = new MockServer(() =>
    json(completion('{"when":"next tuesday","contact":"mayor@town.example"}'))
  );
  const { wire, response } = await respond(server);
  try {
    const error = response.error as JsonObject;
    assert.ok(error !== undefined, JSON.stringify(response));
    assert.equal((error.data as JsonObject).code, "generation_failed");
    assert.match(String(error.message), /\/when must match format "date"/);
    // The session and the bridge go on: a turn without the schema is answered.
    wire.send({ id: 3, method: "session/respond", params: { session: "s", prompt: "And the contact?" } });
    const next = await wire.response(3);
    assert.ok("result" in next, JSON.stringify(next));
  } finally {
    await wire.engine.shutdown();
    await server.close();
  }
});

Deno.test("openai formats: a tool call with a bad email is retried before the game is asked to run it", async () => {
  const server = new MockServer([
    () => json(completion(null, { toolCalls: [toolCall("c1", "notify", '{"to":"mayor at town"}')] })),
    () => json(completion(null, { toolCalls: [toolCall("c2", "notify", '{"to":"mayor@town.example"}')] })),
    () => json(completion("Sent.")),
  ]);
  const wire = new Wire();
  try {
    await wire.openaiSession(server.baseURL, {
      tools: [{
        name: "notify",
        description: "Mails someone.",
        parameters: {
          type: "object",
          properties: { to: { type: "string", format: "email" } },
          required: ["to"],
        },
      }],
      options: { toolChoice: "required" },
    });
    wire.send({ id: 2, method: "session/respond", params: { session: "s", prompt: "Tell the mayor." } });
    const call = await wire.waitFor((m) => m.method === "tool/call");
    assert.deepEqual(((call.params as JsonObject).call as JsonObject).arguments, {
      to: "mayor@town.example",
    });
    wire.send({ id: call.id as string, result: { output: "ok" } });
    const response = await wire.response(2);
    assert.equal((response.result as JsonObject).text, "Sent.");
    assert.equal(
      wire.messages.filter((m) => m.method === "tool/call").length,
      1,
      "the bad call never reached the game",
    );
  } finally {
    await wire.engine.shutdown();
    await server.close();
  }
});
