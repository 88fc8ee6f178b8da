/**
 * Diamond-shaped `$ref` graphs for the schema converter (tests/schema/convert_adversarial_test.ts and
 * tests/slow/intake_slow.ts): each level refers to the next twice, so a converter that expands every path
 * does 2^levels work.
 */
import type { JsonObject } from "../../src/protocol/json.ts";

/** `$defs` with `all0`, `any0` and `arr0` at the top of `levels` levels of diamonds. */
export function diamonds(levels: number): JsonObject {
  const defs: JsonObject = {};
  for (let i = 0; i < levels; i++) {
    defs[`all${i}`] = { allOf: [{ $ref: `#/$defs/all${i + 1}` }, { $ref: `#/$defs/all${i + 1}` }] };
    defs[`any${i}`] = {
      anyOf: [{ $ref: `#/$defs/any${i + 1}` }, { $ref: `#/$defs/any${i + 1}` }, { type: "integer" }],
    };
    defs[`arr${i}`] = {
      type: "object",
      properties: { a: { $ref: `#/$defs/arr${i + 1}` }, b: { $ref: `#/$defs/arr${i + 1}` } },
    };
  }
  defs[`all${levels}`] = { type: "object", properties: { x: { type: "string" } } };
  defs[`any${levels}`] = { type: "string" };
  defs[`arr${levels}`] = { type: "string" };
  return defs;
}
