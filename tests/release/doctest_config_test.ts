/**
 * The JSDoc examples are type-checked under deno.doctest.json: deno.json's configuration without
 * noUnusedLocals and noUnusedParameters (`deno test --doc` imports every export of a module into each of its
 * examples, so those two would fail every example). Everything else must stay the same, so the examples are
 * checked as strictly as the code.
 */
import assert from "node:assert/strict";

const ROOT = new URL("../../", import.meta.url);
const read = (name: string) => JSON.parse(Deno.readTextFileSync(new URL(name, ROOT)));

Deno.test("deno.doctest.json is deno.json's name, exports, imports, unstable flags and compiler options minus the unused-name checks", () => {
  const main = read("deno.json");
  const doc = read("deno.doctest.json");
  // The name and exports let examples import the package by name (`@open-apple-models/bridge/engine`).
  assert.deepEqual([doc.name, doc.exports], [main.name, main.exports]);
  assert.deepEqual(doc.imports, main.imports);
  assert.deepEqual(doc.unstable, main.unstable);
  const { noUnusedLocals, noUnusedParameters, ...strict } = main.compilerOptions;
  assert.deepEqual([noUnusedLocals, noUnusedParameters], [true, true]);
  assert.deepEqual(doc.compilerOptions, strict);
});

Deno.test("the test task type-checks the JSDoc examples and runs them (tests/docs/); test:doc and check do too", () => {
  const tasks = read("deno.json").tasks as Record<string, string>;
  const roots = "mod.ts engine.ts cli.ts src/ ffi/";
  assert.ok(
    tasks.test.includes(`deno test --doc --no-run --config deno.doctest.json ${roots} && `),
    tasks.test,
  );
  assert.match(tasks.test, /&& DENO_JOBS=4 deno test --allow-all --parallel$/);
  assert.ok(Deno.statSync(new URL("tests/docs/examples_test.ts", ROOT)).isFile);
  assert.match(
    tasks["test:doc"],
    /deno test --doc .*--config deno\.doctest\.json .*mod\.ts engine\.ts cli\.ts src\/ ffi\//,
  );
  assert.ok(
    tasks.check.includes(`deno test --doc --no-run --config deno.doctest.json ${roots}`),
    tasks.check,
  );
});
