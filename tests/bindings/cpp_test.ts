/**
 * The C client from C++: `open_apple_models.h` included by C++17 and C++20 code built with strict warnings
 * (`-Wall -Wextra -Wpedantic -Werror`; also `-fno-exceptions -fno-rtti`, Unreal's defaults), the C++ example
 * (RAII handle, a queue the reader-thread callback fills, a game tick that drains it and answers the
 * tool/call) run against the real bridge. The slow tier builds the library's sources as C++ (all, or one of
 * the two) and runs the C++ example under ThreadSanitizer.
 */
import { assertSucceeded, bridgeEnv, run } from "./toolchain.ts";
import { assertExampleCppRan, buildC, buildCppExample, hasGcc, hasGxx } from "./c_build.ts";

const hasBoth = hasGcc && hasGxx;

Deno.test({
  name: hasBoth
    ? "bindings/c from C++: the header and example_cpp.cpp build with g++ -std=c++17/c++20 strict (also without exceptions and RTTI); the example answers its tool/call on the game thread"
    : "bindings/c from C++: SKIPPED (gcc or g++ missing)",
  ignore: !hasBoth,
  sanitizeResources: false,
  async fn() {
    const build = await buildC({ dir: "c-for-cpp" }); // c_test.ts builds "c" in parallel
    const cpp17 = await buildCppExample(build.dir, { std: "c++17" });
    await buildCppExample(build.dir, { std: "c++20" });
    const noExceptions = await buildCppExample(build.dir, { std: "c++20", unrealDefaults: true });
    const example = await run(cpp17, [], { env: bridgeEnv(), timeoutMs: 60_000 });
    assertSucceeded(example, "example_cpp");
    assertExampleCppRan(example.stdout);
    const unreal = await run(noExceptions, [], { env: bridgeEnv(), timeoutMs: 60_000 });
    assertSucceeded(unreal, "example_cpp (-fno-exceptions -fno-rtti)");
    assertExampleCppRan(unreal.stdout);
  },
});
