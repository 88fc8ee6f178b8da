/**
 * On the wire: a schema whose integer `enum` value or `const` is past the safe integers is answered with the
 * warnings that say so (not an error), and the bridge goes on serving.
 */
import assert from "node:assert/strict";
import { scripted, WireClient } from "../helpers/wire.ts";

Deno.test("session/respond: an integer enum value and a const past 2^53-1 are warnings, and the bridge serves on", async () => {
  const c = new WireClient();
  await c.call("session/create", { session: "s", model: scripted({ json: { n: 1 } }) });
  const schema = {
    type: "object",
    properties: { n: { type: "integer", enum: [1, 9007199254740993] }, c: { const: 1e300 } },
    required: ["n"],
  };
  const result = await c.call("session/respond", { session: "s", prompt: "Pick.", schema }) as {
    structured: unknown;
    warnings: string[];
  };
  assert.deepEqual(result.structured, { n: 1 });
  const unsafe = result.warnings.filter((w) => w.includes("past the largest safe integer (2^53-1)"));
  assert.deepEqual(unsafe.map((w) => w.slice(0, w.indexOf(" is past"))), [
    "#/properties/n: integer enum value 9007199254740992",
    "#/properties/c: integer const 1e+300",
  ]);
  assert.ok(
    result.warnings.includes(
      "#/properties/n: integer enum is enforced as a range 1...9007199254740991, clamped to the safe integers " +
        "(a value past them cannot be answered); exact values are described",
    ),
    result.warnings.join("\n"),
  );
  assert.deepEqual(await c.call("ping"), {});
  await c.close();
});
