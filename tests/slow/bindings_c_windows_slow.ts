/**
 * The C client for Windows (slow: about 20 s of cross-compiling on a loaded machine). With MinGW-w64
 * (x86_64-w64-mingw32-gcc) under strict warnings: the DLL with platform_windows.c, example.exe against it,
 * example.exe with the sources compiled in under OAM_STATIC, and the platform test program with its echo
 * child. With Wine installed (not in CI), the platform test then runs under Wine; the bridge itself is not
 * run on Windows here.
 */
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { assertSucceeded, BUILD_DIR, onPath, run } from "../bindings/toolchain.ts";
import {
  buildCWindows,
  buildPlatformTest,
  hasMingw,
  MINGW_GCC,
  type PlatformTestBuild,
} from "../bindings/c_build.ts";

/** True when the file starts with the "MZ" of a Windows executable. */
async function isWindowsExecutable(path: string): Promise<boolean> {
  const bytes = await Deno.readFile(path);
  return bytes[0] === 0x4d && bytes[1] === 0x5a;
}

/** The Wine loader: `wine` on PATH, or Debian's wine64 package's loader (which it does not put on PATH). */
const wine: string | undefined = onPath("wine")
  ? "wine"
  : existsSync("/usr/lib/wine/wine64")
  ? "/usr/lib/wine/wine64"
  : undefined;

/** A Unix path as Wine's Z: drive sees it. */
function winePath(path: string): string {
  return `Z:${path.replaceAll("/", "\\")}`;
}

/** The Windows platform test, built once for both tests. */
let platformBuild: Promise<PlatformTestBuild> | undefined;
function buildWindowsPlatformTest(): Promise<PlatformTestBuild> {
  platformBuild ??= buildPlatformTest(`${BUILD_DIR}/c-windows-platform`, { windows: true });
  return platformBuild;
}

Deno.test({
  name: hasMingw
    ? "bindings/c for Windows: the DLL, example.exe (DLL and OAM_STATIC) and the platform test cross-compile with -Werror"
    : `bindings/c for Windows: SKIPPED (${MINGW_GCC} missing; apt-get install gcc-mingw-w64-x86-64-win32)`,
  ignore: !hasMingw,
  sanitizeResources: false,
  async fn() {
    const build = await buildCWindows();
    const platform = await buildWindowsPlatformTest();
    for (
      const file of [build.dll, build.example, build.exampleStatic, platform.testPlatform, platform.child]
    ) {
      assert.ok(await isWindowsExecutable(file), `${file} is not a Windows executable`);
    }
  },
});

Deno.test({
  name: hasMingw && wine
    ? "bindings/c for Windows: the platform test passes under Wine (platform_windows.c against the echo child)"
    : `bindings/c for Windows under Wine: SKIPPED (${!hasMingw ? `${MINGW_GCC}` : "wine"} missing)`,
  ignore: !hasMingw || !wine,
  sanitizeResources: false,
  async fn() {
    const platform = await buildWindowsPlatformTest();
    const env = {
      WINEPREFIX: Deno.env.get("WINEPREFIX") ?? `${BUILD_DIR}/wine-prefix`,
      WINEDEBUG: "-all",
      WINEPATH: winePath(platform.childDir), // prepended to the Windows PATH: the PATH search finds the child
    };
    const result = await run(wine!, [platform.testPlatform, winePath(platform.child), platform.childName], {
      env,
      cwd: BUILD_DIR,
      timeoutMs: 180_000, // the first run creates the Wine prefix
    });
    assertSucceeded(result, "test_platform.exe under Wine");
    assert.match(result.stdout, /^passed \d+ failed 0$/m);
    assert.doesNotMatch(result.stdout, /^FAIL/m);
    assert.match(result.stdout, /^ok strcmp\(description, "killed"\) == 0$/m, "platform_windows.c ran");
  },
});
