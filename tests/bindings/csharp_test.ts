/**
 * Compiles the Unity C# core (bindings/unity/OpenAppleModels.cs) with Mono's mcs, runs its console tests against
 * the real bridge process, and runs the MonoBehaviour adapter (compiled against a UnityEngine stub) the way Unity
 * calls it.
 * Needs `apt-get install -y mono-mcs mono-runtime`.
 */
import assert from "node:assert/strict";
import { assertSucceeded, bridgeEnv, BUILD_DIR, onPath, REPO_ROOT, run } from "./toolchain.ts";

const hasMono = onPath("mcs") && onPath("mono");
const OUT = `${BUILD_DIR}/unity`;
const SRC = `${REPO_ROOT}/bindings/unity`;

Deno.test({
  name: hasMono
    ? "bindings/unity: C# core compiles with mcs and passes its tests against the bridge"
    : "bindings/unity: SKIPPED (mcs/mono missing: apt-get install -y mono-mcs mono-runtime)",
  ignore: !hasMono,
  sanitizeResources: false,
  async fn() {
    await Deno.mkdir(OUT, { recursive: true });
    assertSucceeded(
      await run("mcs", [
        "-warnaserror",
        `-out:${OUT}/OamBridgeTests.exe`,
        `${SRC}/OpenAppleModels.cs`,
        `${SRC}/tests/OamBridgeTests.cs`,
      ]),
      "mcs (tests)",
    );
    assertSucceeded(
      await run("mcs", [
        "-warnaserror",
        `-out:${OUT}/OamBridgeBehaviourTests.exe`,
        `${SRC}/OpenAppleModels.cs`,
        `${SRC}/OamBridgeBehaviour.cs`,
        `${SRC}/tests/UnityEngineStub.cs`,
        `${SRC}/tests/OamBridgeBehaviourTests.cs`,
      ]),
      "mcs (MonoBehaviour adapter)",
    );
    const result = await run("mono", [`${OUT}/OamBridgeTests.exe`], { env: bridgeEnv(), timeoutMs: 60_000 });
    assertSucceeded(result, "mono OamBridgeTests.exe");
    assert.match(result.stdout, / 0 failures/);
    const adapter = await run("mono", [`${OUT}/OamBridgeBehaviourTests.exe`], {
      env: bridgeEnv(),
      timeoutMs: 60_000,
    });
    assertSucceeded(adapter, "mono OamBridgeBehaviourTests.exe");
    assert.match(adapter.stdout, / 0 failures/);
  },
});
