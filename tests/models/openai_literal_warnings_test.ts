/**
 * The warnings an `openai` model gets for an integer `enum`, an `enum` or `const` of other values than strings,
 * and exclusive number bounds say what that backend does: the server gets the client's schema as written
 * (whether it holds the model to it depends on the server), and the backend's validation refuses a value
 * outside it and asks again. Each wording is checked against a fake OpenAI server that first answers such a
 * value: the game gets the warning, and then the schema's own value (a number stays a number), never the
 * refused one.
 */
import assert from "node:assert/strict";
import type { JsonObject, JsonValue } from "../../src/protocol/json.ts";
import { completion, json, MockServer, toolCall } from "./openai_mock_server.ts";
import { Wire } from "./openai_wire.ts";

interface Case {
  what: string;
  property: JsonObject;
  /** The first answer's value (refused), then the second's (taken). */
  refused: JsonValue;
  taken: JsonValue;
  warning: string;
}

const CASES: Case[] = [
  {
    what: "an integer enum",
    property: { enum: [1, 2, 3] },
    refused: 4,
    taken: 2,
    warning: "integer enum is sent to the server as written (not every server enforces it): an answer that " +
      "is not one of its values fails validation and is generated once more",
  },
  {
    what: "a boolean enum",
    property: { enum: [true, false] },
    refused: "true",
    taken: true,
    warning: "boolean enum is sent to the server as written (not every server enforces it): an answer that " +
      'is not one of its values (such as the string "true") fails validation and is generated once more',
  },
  {
    what: "a mixed-type enum",
    property: { enum: ["calm", 2, true] },
    refused: "2",
    taken: 2,
    warning: "mixed-type enum is sent to the server as written (not every server enforces it): an answer " +
      "that is not one of its values fails validation and is generated once more",
  },
  {
    what: "a non-string const",
    property: { const: 7 },
    refused: "7",
    taken: 7,
    warning: "non-string const 7 is sent to the server as written (not every server enforces it): an " +
      "answer with another value fails validation and is generated once more",
  },
  {
    what: "exclusive number bounds",
    property: { type: "number", exclusiveMinimum: 0, exclusiveMaximum: 1 },
    refused: 0,
    taken: 0.5,
    warning: "exclusive number bounds are sent to the server as written (not every server enforces them): " +
      "an answer on a bound fails validation and is generated once more",
  },
];

for (const c of CASES) {
  Deno.test(`openai literal warnings: ${c.what} in an answer is worded as the backend refuses it`, async () => {
    const server = new MockServer([
      () => json(completion(JSON.stringify({ value: c.refused }))),
      () => json(completion(JSON.stringify({ value: c.taken }))),
    ]);
    const wire = new Wire();
    try {
      await wire.openaiSession(server.baseURL);
      const schema = { type: "object", properties: { value: c.property }, required: ["value"] };
      wire.send({ id: 2, method: "session/respond", params: { session: "s", prompt: "Go.", schema } });
      const response = await wire.response(2);
      assert.ok("result" in response, JSON.stringify(response));
      const result = response.result as JsonObject;
      assert.deepEqual(result.warnings, [`#/properties/value: ${c.warning}`]);
      // What the warning says: the refused value is asked again, the schema's own value reaches the game.
      assert.equal(server.chatBodies.length, 2);
      assert.deepEqual(result.structured, { value: c.taken });
      // The server got the schema as written.
      const format = (server.chatBodies[0] as { response_format: { json_schema: { schema: JsonObject } } })
        .response_format;
      assert.deepEqual(format.json_schema.schema, schema);
    } finally {
      await wire.engine.shutdown();
      await server.close();
    }
  });
}

Deno.test("openai literal warnings: a tool's integer enum is worded for its arguments, and refused arguments never reach the game", async () => {
  const server = new MockServer([
    () => json(completion(null, { toolCalls: [toolCall("c1", "roll", '{"die":5}')] })),
    () => json(completion(null, { toolCalls: [toolCall("c2", "roll", '{"die":6}')] })),
    () => json(completion("Rolled.")),
  ]);
  const wire = new Wire();
  try {
    const created = await wire.openaiSession(server.baseURL, {
      tools: [{
        name: "roll",
        description: "Rolls a die.",
        parameters: { type: "object", properties: { die: { enum: [4, 6, 8] } }, required: ["die"] },
      }],
      options: { toolChoice: "required" },
    });
    assert.deepEqual(created.warnings, [
      "roll: #/properties/die: integer enum is sent to the server as written (not every server enforces it): " +
      "arguments that are not one of its values fail validation and are generated once more",
    ]);
    wire.send({ id: 2, method: "session/respond", params: { session: "s", prompt: "Roll." } });
    const call = await wire.waitFor((m) => m.method === "tool/call");
    assert.deepEqual(((call.params as JsonObject).call as JsonObject).arguments, { die: 6 });
    wire.send({ id: call.id as string, result: { output: "6" } });
    const response = await wire.response(2);
    assert.equal((response.result as JsonObject).text, "Rolled.");
    assert.equal(wire.messages.filter((m) => m.method === "tool/call").length, 1);
  } finally {
    await wire.engine.shutdown();
    await server.close();
  }
});
