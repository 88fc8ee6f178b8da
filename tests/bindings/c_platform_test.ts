/**
 * The C client's OS layer (platform.h, here platform_posix.c) against a small echo child: argument passing
 * (spaces, quotes, backslashes, UTF-8, empty), a program path with a space, PATH search, reads and writes,
 * waking a blocked reader, ending input with a timeout, a write stuck until the child is killed, exit
 * statuses, environment variables read as UTF-8. The same test program runs with platform_windows.c under Wine
 * in tests/slow/bindings_c_windows_slow.ts.
 */
import assert from "node:assert/strict";
import { assertSucceeded, BUILD_DIR, run } from "./toolchain.ts";
import { buildPlatformTest, hasGcc } from "./c_build.ts";

Deno.test({
  name: hasGcc
    ? "bindings/c platform layer (POSIX): test_platform passes against the echo child"
    : "bindings/c platform layer (POSIX): SKIPPED (gcc missing)",
  ignore: !hasGcc,
  sanitizeResources: false,
  async fn() {
    const build = await buildPlatformTest(`${BUILD_DIR}/c-platform`);
    const result = await run(build.testPlatform, [build.child, build.childName], {
      env: { PATH: `${build.childDir}:${Deno.env.get("PATH") ?? ""}` },
      cwd: "/",
      timeoutMs: 60_000,
    });
    assertSucceeded(result, "test_platform");
    assert.match(result.stdout, /^passed \d+ failed 0$/m);
    assert.doesNotMatch(result.stdout, /^FAIL/m);
  },
});
