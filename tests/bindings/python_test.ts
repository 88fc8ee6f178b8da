/**
 * Runs the Python client's unittest suite (bindings/python/test_bridge.py) against the real bridge process.
 */
import assert from "node:assert/strict";
import { assertSucceeded, bridgeEnv, onPath, REPO_ROOT, run } from "./toolchain.ts";

const hasPython = onPath("python3");

Deno.test({
  name: hasPython
    ? "bindings/python: unittest suite passes against the bridge"
    : "bindings/python: SKIPPED (python3 missing)",
  ignore: !hasPython,
  sanitizeResources: false,
  async fn() {
    const result = await run("python3", ["-B", `${REPO_ROOT}/bindings/python/test_bridge.py`], {
      env: { ...bridgeEnv(), PYTHONDONTWRITEBYTECODE: "1" },
      timeoutMs: 180_000, // a hang guard: under a loaded parallel run the suite has taken over 60 s
    });
    assertSucceeded(result, "python3 test_bridge.py");
    assert.match(result.stderr, /\nOK\b/);
    assert.doesNotMatch(result.stderr, /skipped/);
  },
});
