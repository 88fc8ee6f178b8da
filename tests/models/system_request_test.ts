/**
 * The history the system model sends to the plugin: a schema turn's prompt entry keeps the client's JSON
 * Schema in the transcript, and the plugin gets the generation schema for it (Apple's transcript decodes only
 * that dialect; a JSON Schema there was dropped and a rebuilt session lost the turn's response format).
 */
import assert from "node:assert/strict";
import type { ConversationEntry } from "../../src/protocol/transcript.ts";
import type { JsonObject } from "../../src/protocol/json.ts";
import { convertSchema } from "../../src/schema/convert.ts";
import { pluginHistory, stepRequestBody } from "../../src/models/system_request.ts";

const SCHEMA: JsonObject = {
  type: "object",
  properties: { choice: { type: "string", enum: ["flee", "fight"] }, confidence: { type: "integer" } },
  required: ["choice", "confidence"],
};

function history(): ConversationEntry[] {
  return [
    {
      id: "p1",
      role: "user",
      contents: [{ type: "text", id: "s1", text: "Decide." }],
      options: {},
      responseFormat: { name: "Decision", schema: SCHEMA },
    },
    {
      id: "r1",
      role: "response",
      contents: [{ type: "text", id: "s2", text: '{"choice":"flee","confidence":80}' }],
      assets: [],
    },
    { id: "p2", role: "user", contents: [{ type: "text", id: "s3", text: "And now?" }], options: {} },
  ] as unknown as ConversationEntry[];
}

Deno.test("plugin history: a prompt's response format carries the generation schema, nothing else changes", () => {
  const entries = history();
  const out = pluginHistory(entries) as JsonObject[];
  const expected = convertSchema(SCHEMA, "Decision").generationSchema;
  assert.deepEqual(out[0], {
    id: "p1",
    role: "user",
    contents: [{ type: "text", id: "s1", text: "Decide." }],
    options: {},
    responseFormat: { name: "Decision", schema: expected },
  });
  assert.ok(Array.isArray((expected as JsonObject)["x-order"]), "the FoundationModels dialect");
  assert.equal(out[1], entries[1] as unknown as JsonObject);
  assert.equal(out[2], entries[2] as unknown as JsonObject);
  // The conversation itself keeps the client's schema (session/transcript shows it; history restores it).
  assert.equal(entries[0].role === "user" && entries[0].responseFormat?.schema, SCHEMA);
});

Deno.test("plugin history: without response formats the same array goes out (no copy per step)", () => {
  const entries = history().slice(1);
  assert.equal(pluginHistory(entries), entries as unknown);
});

Deno.test("step body: the history sent with a step has the generation schema", () => {
  const body = stepRequestBody(
    {
      instructions: null,
      tools: [],
      toolCallingMode: "disallowed",
      history: history(),
      prompt: "",
      responseSchema: null,
      options: {},
      stream: false,
    } as unknown as Parameters<typeof stepRequestBody>[0],
  );
  const first = (body.history as JsonObject[])[0];
  assert.deepEqual(
    (first.responseFormat as JsonObject).schema,
    convertSchema(SCHEMA, "Decision").generationSchema,
  );
});
