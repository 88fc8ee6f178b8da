/**
 * Builds libopen_apple_models, its example and its test program with gcc, then runs them against the real
 * bridge process (`cli.ts stdio`, or OAM_BRIDGE_PATH). The slow tier (tests/slow/bindings_c_slow.ts) runs
 * the test program under valgrind and ThreadSanitizer and repeats the kill test.
 */
import assert from "node:assert/strict";
import { assertSucceeded, bridgeEnv, run } from "./toolchain.ts";
import { buildC, hasGcc } from "./c_build.ts";

Deno.test({
  name: hasGcc
    ? "bindings/c: builds and passes its tests against the bridge"
    : "bindings/c: SKIPPED (gcc missing)",
  ignore: !hasGcc,
  sanitizeResources: false,
  async fn() {
    const build = await buildC();
    const env = bridgeEnv();
    const example = await run(build.example, [], { env, timeoutMs: 30_000 });
    assertSucceeded(example, "example");
    assert.match(example.stdout, /portcullis chain is jammed/);
    const tests = await run(build.testBridge, [], { env, timeoutMs: 30_000 });
    assertSucceeded(tests, "test_bridge");
    assert.match(tests.stdout, /^10 groups, \d+ checks, 0 failures$/m);
    assert.doesNotMatch(tests.stdout, /SKIP/, "game methods are served, so no test may be skipped");
  },
});
