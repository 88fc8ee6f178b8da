/**
 * A long game compiles a new schema for nearly every decision and generation (option ids and field names
 * change). The validators must not keep every schema compiled before them: these tests count the compiled
 * schemas held by the ajv instances that compiled them.
 */
import assert from "node:assert/strict";
import { Ajv } from "../../src/schema/ajv.generated.js";
import type { JsonObject } from "../../src/protocol/json.ts";
import { compileValidator } from "../../src/schema/validate.ts";
import { validatorFor } from "../../src/models/openai_validate.ts";

const DISTINCT = 300;

/** A schema no other test compiles (its required field name is unique). */
function schema(tag: string, i: number): JsonObject {
  return {
    type: "object",
    properties: { [`${tag}${i}`]: { type: "string", pattern: "^[a-z]+$" }, n: { type: "integer" } },
    required: [`${tag}${i}`],
  };
}

/** Compiled schemas an ajv instance holds: its code scope keeps each compiled root schema. */
function heldSchemas(instance: Ajv): number {
  const scope = (instance as unknown as { scope: { get(): Record<string, unknown[]> } }).scope.get();
  return scope.schema?.length ?? 0;
}

/** Runs `body` while recording every ajv instance that compiles a schema; returns the most any holds. */
function mostHeld(body: () => void): number {
  const compile = Ajv.prototype.compile;
  const instances = new Set<Ajv>();
  Ajv.prototype.compile = function (this: Ajv, ...args: Parameters<typeof compile>) {
    instances.add(this);
    return compile.apply(this, args);
  } as typeof compile;
  try {
    body();
  } finally {
    Ajv.prototype.compile = compile;
  }
  assert.ok(instances.size > 0, "no schema was compiled");
  return Math.max(...[...instances].map(heldSchemas));
}

Deno.test("validator retention: compileValidator keeps no other schema alive after 300 distinct ones", () => {
  const held = mostHeld(() => {
    for (let i = 0; i < DISTINCT; i++) {
      const validate = compileValidator(schema("field", i));
      assert.equal(validate({ [`field${i}`]: "abc" }), null);
      assert.notEqual(validate({ [`field${i}`]: 3 }), null);
    }
  });
  assert.ok(held <= 2, `an ajv instance held ${held} compiled schemas`);
});

Deno.test("validator retention: the OpenAI backend's validators keep no other schema alive", () => {
  const held = mostHeld(() => {
    for (let i = 0; i < DISTINCT; i++) {
      const validate = validatorFor(schema("answer", i), "the response");
      assert.equal(validate({ [`answer${i}`]: "abc" }), true);
      assert.equal(validate({ [`answer${i}`]: 3 }), false);
    }
  });
  assert.ok(held <= 2, `an ajv instance held ${held} compiled schemas`);
});
