/** The version the bridge reports is the package's (deno.json), and the playground page does not bundle deno.json. */
import assert from "node:assert/strict";
import { SERVER_INFO } from "../../src/protocol/version.ts";
import packageInfo from "../../deno.json" with { type: "json" };
import { PLAYGROUND_JS } from "../../src/serve/playground/assets.generated.ts";

Deno.test("SERVER_INFO.version is deno.json's version (change both when releasing)", () => {
  assert.equal(SERVER_INFO.version, packageInfo.version);
});

Deno.test("the playground bundle carries no deno.json (its tasks would make the assets stale on every task edit)", () => {
  assert.ok(!PLAYGROUND_JS.includes('"test:slow"'));
  assert.ok(!PLAYGROUND_JS.includes("compilerOptions"));
});
