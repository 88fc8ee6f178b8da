/**
 * The C client's sources compiled as C++ (slow: three library builds): both renamed to `.cpp`, or only one of
 * them, under g++ strict warnings; the C++ and C examples link to each build and run against the bridge.
 */
import assert from "node:assert/strict";
import { assertSucceeded, bridgeEnv, run } from "../bindings/toolchain.ts";
import {
  assertExampleCppRan,
  buildCAsCpp,
  buildCppExample,
  type CSource,
  hasGcc,
  hasGxx,
} from "../bindings/c_build.ts";

const hasBoth = hasGcc && hasGxx;

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
