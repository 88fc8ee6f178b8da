/**
 * The warning about an object without properties is true for the model it is shown for: the on-device and
 * scripted models generate it as {}, a llama model fills one that takes any members, an openai model gets
 * the schema as written; with no model known it says what the on-device and scripted models do.
 */
import assert from "node:assert/strict";
import { convertSchemaWithOpenObjects } from "../../src/schema/convert.ts";
import { freeFormWarnings } from "../../src/schema/free_form.ts";
import type { JsonValue } from "../../src/protocol/json.ts";

const SCHEMA: JsonValue = {
  type: "object",
  properties: {
    name: { type: "string" },
    stats: { type: "object" },
    extra: { type: "object", additionalProperties: true },
    counts: { type: "object", additionalProperties: { type: "integer" } },
    none: { type: "object", additionalProperties: false },
  },
};

function warnings(model: string | undefined, plainObjects = true): string[] {
  const { freeForm, warnings } = convertSchemaWithOpenObjects(SCHEMA, "Response");
  assert.deepEqual(warnings, []);
  return freeFormWarnings(freeForm, { model, plainObjects });
}

const LIST = "list the properties it should have";

Deno.test("free-form objects: the on-device and scripted models are told the object is generated as {}", () => {
  for (const model of ["system", "scripted", "scripted (OAM_SCRIPT)"]) {
    assert.deepEqual(warnings(model), [
      `#/properties/stats: object without 'properties' is generated as {}; ${LIST}`,
      `#/properties/extra: free-form object (additionalProperties without properties) is generated as {}; ${LIST}`,
      `#/properties/counts: free-form object (additionalProperties without properties) is generated as {}; ${LIST}`,
    ]);
  }
});

Deno.test("free-form objects: a llama model is warned only about the object it does not fill", () => {
  assert.deepEqual(warnings("llama"), [
    `#/properties/counts: free-form object (additionalProperties without properties) is generated as {}; ${LIST}`,
  ]);
});

Deno.test("free-form objects: an openai model, which gets the schema as written, is not warned", () => {
  assert.deepEqual(warnings("openai"), []);
});

Deno.test("free-form objects: with no model known (or a host's own), the warning says which models give {}", () => {
  const hedged = (path: string, what: string) =>
    `${path}: ${what}: the on-device and scripted models generate it as {}; ${LIST}`;
  const free = "free-form object (additionalProperties without properties)";
  for (const model of [undefined, "echo"]) {
    assert.deepEqual(warnings(model), [
      hedged("#/properties/stats", "object without 'properties'"),
      hedged("#/properties/extra", free),
      hedged("#/properties/counts", free),
    ]);
  }
  // A tool's parameters: `{"type": "object"}` is a tool without arguments, not a warning.
  assert.deepEqual(warnings(undefined, false), [
    hedged("#/properties/extra", free),
    hedged("#/properties/counts", free),
  ]);
});
