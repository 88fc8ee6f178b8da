/**
 * Release readiness (issue #7): `deno publish --dry-run --allow-dirty` succeeds (no slow types) and the
 * published files leave out tests, benchmarks, examples, bindings, the Swift package and native code.
 */
import assert from "node:assert/strict";
import { dryRun } from "./published_files.ts";

const ROOT = new URL("../../", import.meta.url);

const excludes =
  (JSON.parse(Deno.readTextFileSync(new URL("deno.json", ROOT))).publish?.exclude ?? []) as string[];

Deno.test("deno publish --dry-run passes and publishes no tests, examples, bindings or native code", async () => {
  const r = await dryRun();
  assert.equal(r.code, 0, r.text);
  assert.match(r.text, /Success.*Dry run complete/);
  assert.ok(r.files.includes("mod.ts") && r.files.includes("cli.ts"), r.text);
  assert.ok(r.files.includes("src/engine/engine.ts"));
  const forbidden = r.files.filter((f) =>
    /^(tests|bench|examples|bindings|swift|node_modules|\.ci|\.build)\//.test(f) ||
    /\.(c|so|dylib|o)$/.test(f)
  );
  assert.deepEqual(forbidden, []);
});

Deno.test({
  name: "scripts/ (fuzz, soak, llama build) and C headers are not published",
  // Active once deno.json's publish.exclude lists "scripts/" (the scripts import tests/, which is excluded).
  ignore: !excludes.includes("scripts/"),
  fn: async () => {
    const r = await dryRun();
    assert.deepEqual(r.files.filter((f) => f.startsWith("scripts/") || f.endsWith(".h")), []);
  },
});

Deno.test("the playground ships as its bundle only, and a worktree's .git file is not published", async () => {
  const r = await dryRun();
  assert.equal(r.code, 0, r.text);
  // The page is served from assets.generated.ts; its sources (page/*.ts, index.html, playground.css) only
  // build that bundle (scripts/build_playground.ts).
  assert.ok(r.files.includes("src/serve/playground/assets.generated.ts"), r.text);
  assert.deepEqual(
    r.files.filter((f) =>
      f.startsWith("src/serve/playground/") &&
      !/^src\/serve\/playground\/(assets\.generated|site)\.ts$/.test(f)
    ),
    [],
  );
  // In a git worktree `.git` is a file naming the main repository's absolute path.
  assert.deepEqual(r.files.filter((f) => f === ".git" || f.startsWith(".git/")), []);
});
