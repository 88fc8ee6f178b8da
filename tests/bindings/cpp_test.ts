/**
 * The C client from C++: `open_apple_models.h` included by C++17 and C++20 code built with strict warnings
 * (`-Wall -Wextra -Wpedantic -Werror`; also `-fno-exceptions -fno-rtti`, Unreal's defaults), the C++ example
 * (RAII handle, a queue the reader-thread callback fills, a game tick that drains it and answers the
 * tool/call) run against the real bridge, and the library's sources compiled as C++. The slow tier runs the C++ example under
 * ThreadSanitizer.
 */
import assert from "node:assert/strict";
import { assertSucceeded, bridgeEnv, run } from "./toolchain.ts";
import { buildC, buildCAsCpp, buildCppExample, type CSource, hasGcc, hasGxx } from "./c_build.ts";

const hasBoth = hasGcc && hasGxx;

/** Checks the output of example_cpp: the tool/call was answered on the game thread, the turn finished. */
function assertExampleCppRan(stdout: string): void {
  assert.match(stdout, /^ {2}\[game thread: yes\] "open_gate"\(\{"gate":"north"\}\)$/m);
  assert.match(stdout, /^respond: \{"jsonrpc":"2.0","id":2,"result":.*portcullis chain is jammed/m);
  assert.match(stdout, /^ok$/m);
}

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

Deno.test({
  name: hasBoth
    ? "bindings/c compiled as C++: the sources build with g++ -x c++ strict, also one as C++ and the other as C; C and C++ programs link to them and run"
    : "bindings/c compiled as C++: SKIPPED (gcc or g++ missing)",
  ignore: !hasBoth,
  sanitizeResources: false,
  async fn() {
    const env = bridgeEnv();
    const allCpp = await buildCAsCpp();
    const cpp = await run(await buildCppExample(allCpp.dir), [], { env, timeoutMs: 60_000 });
    assertSucceeded(cpp, "example_cpp against the library built as C++");
    assertExampleCppRan(cpp.stdout);
    const both: CSource[] = ["open_apple_models.c", "platform_posix.c"];
    for (const asCpp of [both, ["open_apple_models.c"], ["platform_posix.c"]] as CSource[][]) {
      const build = asCpp === both ? allCpp : await buildCAsCpp(asCpp);
      const example = await run(build.example, [], { env, timeoutMs: 60_000 });
      assertSucceeded(example, `example (C) against the library with ${asCpp.join(" and ")} built as C++`);
      assert.match(example.stdout, /portcullis chain is jammed/);
    }
  },
});
