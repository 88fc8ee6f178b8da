import assert from "node:assert/strict";
import { sanitizeTypeName, toolArgumentsTypeName, TypeNameRegistry } from "../../src/schema/names.ts";
import { toolArgumentsTypeName as reexported } from "../../src/schema/mod.ts";

Deno.test("names: tool argument type names are PascalCase + Arguments", () => {
  assert.equal(toolArgumentsTypeName("open_gate"), "OpenGateArguments");
  assert.equal(toolArgumentsTypeName("read_world_state"), "ReadWorldStateArguments");
  assert.equal(toolArgumentsTypeName("get-weather.v2"), "GetWeatherV2Arguments");
  assert.equal(toolArgumentsTypeName("lookupNPC"), "LookupNPCArguments");
  assert.equal(toolArgumentsTypeName("3d_move"), "_3dMoveArguments");
  assert.equal(toolArgumentsTypeName("__"), "Arguments");
  assert.equal(reexported, toolArgumentsTypeName);
});

Deno.test("names: sanitising", () => {
  assert.equal(sanitizeTypeName("Pet"), "Pet");
  assert.equal(sanitizeTypeName("my-pet.v2"), "my_pet_v2");
  assert.equal(sanitizeTypeName("Café"), "Caf_");
  assert.equal(sanitizeTypeName("9lives"), "_9lives");
  assert.equal(sanitizeTypeName(""), "_");
  assert.equal(sanitizeTypeName("__proto__"), "__proto__");
});

Deno.test("names: de-duplication with numeric suffixes", () => {
  const names = new TypeNameRegistry();
  assert.equal(names.allocate("Pet"), "Pet");
  assert.equal(names.allocate("Pet"), "Pet2");
  assert.equal(names.allocate("Pet!"), "Pet_");
  assert.equal(names.allocate("Pet"), "Pet3");
  assert.equal(names.allocate("Pet2"), "Pet22");
});
