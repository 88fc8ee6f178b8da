/**
 * A tool whose parameters hold an object without properties is warned about in the words of the model that
 * calls it, also where the tools are read before the model (npc/create, content/generate): "is generated as
 * {}" for the scripted model, nothing for an openai model (which gets the schema as written), in the place the
 * tools' warnings always had.
 */
import assert from "node:assert/strict";
import { scripted, WireClient } from "../helpers/wire.ts";
import type { JsonObject } from "../../src/protocol/json.ts";

const STATS = {
  name: "set_stats",
  description: "Sets stats.",
  parameters: {
    type: "object",
    properties: { stats: { type: "object", additionalProperties: { type: "number" } } },
  },
};
const SCRIPTED_WARNING = "set_stats: #/properties/stats: free-form object (additionalProperties without " +
  "properties) is generated as {}; list the properties it should have";
const OPENAI = { type: "openai", baseURL: "http://127.0.0.1:9/v1", model: "m" };

Deno.test("npc/create and npc/update: tool parameter warnings are worded for the NPC's model", async () => {
  const c = new WireClient();
  const created = await c.call("npc/create", {
    npc: "gorm",
    persona: { name: "Gorm" },
    tools: [STATS, { name: "look" }],
    model: scripted(),
  });
  assert.deepEqual(created.warnings, [
    SCRIPTED_WARNING,
    "look: no description; the model may not know when to call it.",
  ]);
  const updated = await c.call("npc/update", { npc: "gorm", tools: [STATS] });
  assert.deepEqual(updated.warnings, [SCRIPTED_WARNING]);
  const remote = await c.call("npc/create", {
    npc: "mira",
    persona: { name: "Mira" },
    tools: [STATS],
    model: OPENAI,
  });
  assert.deepEqual(remote.warnings, []);
  await c.close();
});

Deno.test("content/generate: tool parameter warnings are worded for its model, after the schema's", async () => {
  const c = new WireClient();
  const schema = { type: "object", properties: { name: { type: "string" }, extra: { type: "object" } } };
  const r = await c.call("content/generate", {
    prompt: "A sword.",
    schema,
    tools: [STATS],
    model: scripted({ json: { name: "Oakcleaver", extra: {} } }),
  }) as JsonObject;
  assert.deepEqual(r.warnings, [
    "#/properties/extra: object without 'properties' is generated as {}; list the properties it should have",
    SCRIPTED_WARNING,
  ]);
  await c.close();
});

Deno.test("decision/decide and decision/decideMany: tool parameter warnings are worded for the decision's model", async () => {
  const c = new WireClient();
  const step = { json: { reasoning: "Tired.", choice: "greet", confidence: 60 } };
  const decided = await c.call("decision/decide", {
    situation: "A stranger walks in.",
    options: ["greet", "ignore"],
    tools: [STATS],
    model: scripted(step),
  });
  assert.deepEqual(decided.warnings, [SCRIPTED_WARNING]);
  const many = await c.call("decision/decideMany", {
    requests: [
      { situation: "A stranger walks in.", options: ["greet", "ignore"], tools: [STATS] },
      { situation: "Still there.", options: ["wait"], tools: [STATS] },
    ],
    model: scripted(step),
  });
  assert.deepEqual(many.warnings, [`requests[0]: ${SCRIPTED_WARNING}`, `requests[1]: ${SCRIPTED_WARNING}`]);
  await c.close();
});
