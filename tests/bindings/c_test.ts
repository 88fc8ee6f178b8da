/**
 * Builds libopen_apple_models, its example and its test program with gcc, then runs them against the real
 * bridge process (`cli.ts stdio`, or OAM_BRIDGE_PATH). Set OAM_BINDINGS_VALGRIND=1 to also run the test
 * program under valgrind.
 */
import assert from "node:assert/strict";
import { assertSucceeded, bridgeEnv, BUILD_DIR, onPath, REPO_ROOT, run } from "./toolchain.ts";

const hasGcc = onPath("gcc");
const OUT = `${BUILD_DIR}/c`;
const SRC = `${REPO_ROOT}/bindings/c`;
const LIB_EXT = Deno.build.os === "darwin" ? "dylib" : "so";

async function build(): Promise<void> {
  await Deno.mkdir(OUT, { recursive: true });
  const warn = ["-Wall", "-Wextra", "-Werror"];
  assertSucceeded(
    await run("gcc", [
      "-shared",
      "-fPIC",
      "-O2",
      "-g",
      "-pthread",
      ...warn,
      "-fvisibility=hidden",
      "-o",
      `${OUT}/libopen_apple_models.${LIB_EXT}`,
      `${SRC}/open_apple_models.c`,
      `${SRC}/platform_posix.c`,
      "-lm",
    ]),
    "gcc (library)",
  );
  for (const program of ["example", "test_bridge"]) {
    assertSucceeded(
      await run("gcc", [
        "-O1",
        "-g",
        ...warn,
        `-I${SRC}`,
        "-o",
        `${OUT}/${program}`,
        `${SRC}/${program}.c`,
        `-L${OUT}`,
        "-lopen_apple_models",
        `-Wl,-rpath,${OUT}`,
        "-pthread",
      ]),
      `gcc (${program})`,
    );
  }
}

Deno.test({
  name: hasGcc
    ? "bindings/c: builds and passes its tests against the bridge"
    : "bindings/c: SKIPPED (gcc missing)",
  ignore: !hasGcc,
  sanitizeResources: false,
  async fn() {
    await build();
    const env = bridgeEnv();
    const example = await run(`${OUT}/example`, [], { env, timeoutMs: 30_000 });
    assertSucceeded(example, "example");
    assert.match(example.stdout, /portcullis chain is jammed/);
    const tests = await run(`${OUT}/test_bridge`, [], { env, timeoutMs: 30_000 });
    assertSucceeded(tests, "test_bridge");
    assert.match(tests.stdout, / 0 failures/);
    assert.doesNotMatch(tests.stdout, /SKIP/, "game methods are served, so no test may be skipped");
    if (Deno.env.get("OAM_BINDINGS_VALGRIND") === "1" && onPath("valgrind")) {
      const checked = await run("valgrind", [
        "--leak-check=full",
        "--errors-for-leak-kinds=definite,indirect,possible",
        "--error-exitcode=9",
        `${OUT}/test_bridge`,
      ], { env, timeoutMs: 120_000 });
      assertSucceeded(checked, "valgrind test_bridge");
    }
  },
});
