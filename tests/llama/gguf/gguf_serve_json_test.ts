/**
 * `oam serve` on the in-process GGUF backend with the fixture model: `response_format: json_object` gives a
 * JSON object (the model answers this question in prose otherwise), and a json_schema answer streams as it is
 * generated, and an object the schema leaves open (`{"type": "object"}` as a member) is written with members.
 * Runs with OAM_GGUF_TESTS=1 (`deno task test:gguf`).
 */
import assert from "node:assert/strict";
import { GGUF_ENABLED } from "./fixture.ts";
import { withFixtureServer } from "./serve_fixture.ts";
import { checkJsonObject, checkSchemaStreams } from "../serve_cut_checks.ts";

Deno.test({
  name:
    "gguf serve: json_object gives a JSON object; json_schema streams as it is generated; an open member gets members",
  ignore: !GGUF_ENABLED,
  // node-llama-cpp's native addon keeps async work Deno's sanitizers cannot attribute to a test.
  sanitizeOps: false,
  sanitizeResources: false,
  async fn(t) {
    await withFixtureServer(async (base) => {
      await t.step("json_object, not streamed and streamed", () => checkJsonObject(base));
      await t.step("json_schema streamed in deltas", () => checkSchemaStreams(base));
      await t.step("a member of any object is written with members, not as {}", () => checkOpenMember(base));
    });
  },
});

/** A member `{"type": "object"}` is any object: the model writes members into it (greedy, so always the same). */
async function checkOpenMember(base: string): Promise<void> {
  const schema = {
    type: "object",
    properties: { city: { type: "string" }, details: { type: "object" } },
    required: ["city", "details"],
  };
  const response = await fetch(`${base}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      messages: [{ role: "user", content: "What is the weather in Oslo?" }],
      temperature: 0,
      max_completion_tokens: 120,
      response_format: { type: "json_schema", json_schema: { name: "weather", schema } },
    }),
  });
  const body = await response.json();
  assert.equal(response.status, 200, JSON.stringify(body));
  assert.equal(body.choices[0].finish_reason, "stop", JSON.stringify(body));
  const value = JSON.parse(body.choices[0].message.content);
  assert.deepEqual(Object.keys(value), ["city", "details"]);
  const details = value.details;
  assert.ok(
    typeof details === "object" && details !== null && !Array.isArray(details),
    JSON.stringify(value),
  );
  assert.ok(Object.keys(details).length > 0, `details is ${JSON.stringify(details)}`);
}
