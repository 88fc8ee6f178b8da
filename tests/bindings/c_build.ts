/**
 * Builds libopen_apple_models, its example and its test program with gcc: plain (`-O2`), or with
 * ThreadSanitizer (`-fsanitize=thread`, library and programs alike) into a directory of its own.
 */
import assert from "node:assert/strict";
import { assertSucceeded, BUILD_DIR, onPath, REPO_ROOT, run } from "./toolchain.ts";

/** True when gcc is on PATH. */
export const hasGcc: boolean = onPath("gcc");

/** Sources of the C binding. */
export const C_SOURCES: string = `${REPO_ROOT}/bindings/c`;

const LIB_EXT = Deno.build.os === "darwin" ? "dylib" : "so";

/** What {@link buildC} produced. */
export interface CBuild {
  /** The output directory. */
  dir: string;
  /** Path of the example program. */
  example: string;
  /** Path of the test program (`test_bridge [group…]`). */
  testBridge: string;
}

/** The warnings every C build here fails on. */
const C_STRICT = ["-Wall", "-Wextra", "-Werror"];

/**
 * Builds the library, `example` and `test_bridge`; `sanitizer: "thread"` builds everything with TSan. `dir`
 * names the output directory under .build/bindings (test files that run in parallel each need their own);
 * `defines` (`NAME=value`) are passed to the library's and the programs' builds as `-D`.
 */
export async function buildC(
  options: { sanitizer?: "thread"; dir?: string; defines?: string[] } = {},
): Promise<CBuild> {
  const dir = `${BUILD_DIR}/${options.dir ?? (options.sanitizer ? "c-tsan" : "c")}`;
  await Deno.mkdir(dir, { recursive: true });
  const sanitize = options.sanitizer ? [`-fsanitize=${options.sanitizer}`] : [];
  const defines = (options.defines ?? []).map((define) => `-D${define}`);
  assertSucceeded(
    await run("gcc", [
      "-shared",
      "-fPIC",
      options.sanitizer ? "-O1" : "-O2",
      "-g",
      "-pthread",
      ...C_STRICT,
      ...sanitize,
      "-fvisibility=hidden",
      ...defines,
      "-o",
      `${dir}/libopen_apple_models.${LIB_EXT}`,
      `${C_SOURCES}/open_apple_models.c`,
      `${C_SOURCES}/platform_posix.c`,
      "-lm",
    ]),
    "gcc (library)",
  );
  for (const program of ["example", "test_bridge"]) {
    await buildCProgram(dir, program, { flags: [...sanitize, ...defines], label: `gcc (${program})` });
  }
  return { dir, example: `${dir}/example`, testBridge: `${dir}/test_bridge` };
}

/** Builds the C program `<program>.c` with gcc into `dir`, against the library built there. */
async function buildCProgram(dir: string, program: string, options: { flags: string[]; label: string }) {
  assertSucceeded(
    await run("gcc", [
      "-O1",
      "-g",
      ...C_STRICT,
      ...options.flags,
      `-I${C_SOURCES}`,
      "-o",
      `${dir}/${program}`,
      `${C_SOURCES}/${program}.c`,
      `-L${dir}`,
      "-lopen_apple_models",
      `-Wl,-rpath,${dir}`,
      "-pthread",
    ]),
    options.label,
  );
}

/** True when g++ is on PATH. */
export const hasGxx: boolean = onPath("g++");

/** The flags a strict C++ project (an Unreal module, say) builds with. */
export const STRICT_CXX: string[] = ["-Wall", "-Wextra", "-Wpedantic", "-Werror"];

/**
 * Builds `example_cpp.cpp` with g++ (`-std=<std>` and {@link STRICT_CXX}; `unrealDefaults` adds
 * `-fno-exceptions -fno-rtti`, as Unreal modules build by default) against the library in `libDir` (from
 * {@link buildC} or {@link buildCAsCpp}); returns the program's path.
 */
export async function buildCppExample(
  libDir: string,
  options: { std?: "c++17" | "c++20"; sanitizer?: "thread"; unrealDefaults?: boolean } = {},
): Promise<string> {
  const std = options.std ?? "c++17";
  const program = `${libDir}/example_cpp_${std.replaceAll("+", "x")}${
    options.unrealDefaults ? "_noexc" : ""
  }`;
  assertSucceeded(
    await run("g++", [
      `-std=${std}`,
      "-O1",
      "-g",
      ...STRICT_CXX,
      ...(options.unrealDefaults ? ["-fno-exceptions", "-fno-rtti"] : []),
      ...(options.sanitizer ? [`-fsanitize=${options.sanitizer}`] : []),
      `-I${C_SOURCES}`,
      "-o",
      program,
      `${C_SOURCES}/example_cpp.cpp`,
      `-L${libDir}`,
      "-lopen_apple_models",
      `-Wl,-rpath,${libDir}`,
      "-pthread",
    ]),
    `g++ -std=${std} (example_cpp)`,
  );
  return program;
}

/** The library's two source files. */
export type CSource = "open_apple_models.c" | "platform_posix.c";

/**
 * Builds the library with the sources in `asCpp` compiled as C++ (`g++ -x c++ -std=c++17` with
 * {@link STRICT_CXX}, as when a project renames them to .cpp) and the others as C, linked with no undefined
 * symbol left, and `example` (and with `testBridge`, `test_bridge`) (C, gcc) against it.
 */
export async function buildCAsCpp(
  asCpp: CSource[] = ["open_apple_models.c", "platform_posix.c"],
  options: { testBridge?: boolean } = {},
): Promise<CBuild> {
  const dir = `${BUILD_DIR}/c-as-cpp${asCpp.length === 1 ? `-${asCpp[0].replace(".c", "")}` : ""}`;
  await Deno.mkdir(dir, { recursive: true });
  const objects: string[] = [];
  for (const source of ["open_apple_models.c", "platform_posix.c"] as const) {
    const object = `${dir}/${source.replace(".c", ".o")}`;
    const cpp = asCpp.includes(source);
    assertSucceeded(
      await run(cpp ? "g++" : "gcc", [
        ...(cpp ? ["-x", "c++", "-std=c++17", ...STRICT_CXX] : C_STRICT),
        "-c",
        "-fPIC",
        "-O2",
        "-g",
        "-pthread",
        "-fvisibility=hidden",
        "-o",
        object,
        `${C_SOURCES}/${source}`,
      ]),
      `${cpp ? "g++ (as C++)" : "gcc"} ${source}`,
    );
    objects.push(object);
  }
  assertSucceeded(
    await run("g++", [
      "-shared",
      "-pthread",
      Deno.build.os === "darwin" ? "-Wl,-undefined,error" : "-Wl,--no-undefined",
      "-o",
      `${dir}/libopen_apple_models.${LIB_EXT}`,
      ...objects,
      "-lm",
    ]),
    `g++ (link the library, ${asCpp.join(" and ")} as C++)`,
  );
  for (const program of options.testBridge ? ["example", "test_bridge"] : ["example"]) {
    await buildCProgram(dir, program, {
      flags: [],
      label: `gcc (${program}, against the library built as C++)`,
    });
  }
  return { dir, example: `${dir}/example`, testBridge: `${dir}/test_bridge` };
}

/** Checks the output of example_cpp: the tool/call was answered on the game thread, the turn finished. */
export function assertExampleCppRan(stdout: string): void {
  assert.match(stdout, /^ {2}\[game thread: yes\] "open_gate"\(\{"gate":"north"\}\)$/m);
  assert.match(stdout, /^respond: \{"jsonrpc":"2.0","id":2,"result":.*portcullis chain is jammed/m);
  assert.match(stdout, /^ok$/m);
}

/** The MinGW-w64 cross compiler for 64-bit Windows (Debian: `apt-get install gcc-mingw-w64-x86-64-win32`). */
export const MINGW_GCC = "x86_64-w64-mingw32-gcc";

/** True when {@link MINGW_GCC} is on PATH. */
export const hasMingw: boolean = onPath(MINGW_GCC);

/** What {@link buildPlatformTest} produced. */
export interface PlatformTestBuild {
  /** The test program (`test_platform <child path> <child name on PATH>`). */
  testPlatform: string;
  /** Directory (its name has a space) of the echo child. */
  childDir: string;
  /** Path of the echo child. */
  child: string;
  /** Name to find the echo child on PATH with (no extension, also on Windows). */
  childName: string;
}

/**
 * Builds test_platform.c with the OS layer and the echo child it starts into `dir` (the child in a
 * subdirectory whose name has a space): with gcc and platform_posix.c, or with `windows: true`, with
 * {@link MINGW_GCC} and platform_windows.c (`.exe` files).
 */
export async function buildPlatformTest(
  dir: string,
  options: { windows?: boolean } = {},
): Promise<PlatformTestBuild> {
  const windows = options.windows ?? false;
  const cc = windows ? MINGW_GCC : "gcc";
  const exe = windows ? ".exe" : "";
  const childDir = `${dir}/dir with space`;
  await Deno.mkdir(childDir, { recursive: true });
  const testPlatform = `${dir}/test_platform${exe}`;
  const child = `${childDir}/oam_echo_child${exe}`;
  assertSucceeded(
    await run(cc, [
      "-std=c99",
      "-O1",
      ...C_STRICT,
      ...(windows ? [] : ["-pthread"]),
      "-o",
      testPlatform,
      `${C_SOURCES}/test_platform.c`,
      `${C_SOURCES}/platform_${windows ? "windows" : "posix"}.c`,
    ]),
    `${cc} (test_platform)`,
  );
  assertSucceeded(
    await run(cc, [
      "-std=c99",
      ...C_STRICT,
      "-o",
      child,
      `${C_SOURCES}/test_echo_child.c`,
      ...(windows ? ["-lshell32"] : []),
    ]),
    `${cc} (test_echo_child)`,
  );
  return { testPlatform, childDir, child, childName: "oam_echo_child" };
}

/** What {@link buildCWindows} produced (Windows executables, not run here). */
export interface CWindowsBuild {
  dir: string;
  /** open_apple_models.dll, with its import library libopen_apple_models.dll.a next to it. */
  dll: string;
  /** example.exe linked to the DLL. */
  example: string;
  /** example.exe with the sources compiled in (OAM_STATIC), as in a game module. */
  exampleStatic: string;
}

/**
 * Cross-compiles the library for 64-bit Windows with {@link MINGW_GCC} and strict warnings: the DLL (C99)
 * and example.exe against it, and example.exe with the sources compiled straight in under `-DOAM_STATIC`
 * (C11).
 */
export async function buildCWindows(): Promise<CWindowsBuild> {
  const dir = `${BUILD_DIR}/c-windows`;
  await Deno.mkdir(dir, { recursive: true });
  const sources = [`${C_SOURCES}/open_apple_models.c`, `${C_SOURCES}/platform_windows.c`];
  const dll = `${dir}/open_apple_models.dll`;
  assertSucceeded(
    await run(MINGW_GCC, [
      "-std=c99",
      "-O2",
      ...C_STRICT,
      "-shared",
      "-o",
      dll,
      ...sources,
      `-Wl,--out-implib,${dir}/libopen_apple_models.dll.a`,
    ]),
    `${MINGW_GCC} (open_apple_models.dll)`,
  );
  const example = `${dir}/example.exe`;
  assertSucceeded(
    await run(MINGW_GCC, [
      "-std=c99",
      "-O1",
      ...C_STRICT,
      `-I${C_SOURCES}`,
      "-o",
      example,
      `${C_SOURCES}/example.c`,
      `-L${dir}`,
      "-lopen_apple_models",
    ]),
    `${MINGW_GCC} (example.exe against the DLL)`,
  );
  const exampleStatic = `${dir}/example_static.exe`;
  assertSucceeded(
    await run(MINGW_GCC, [
      "-std=c11",
      "-O1",
      ...C_STRICT,
      "-DOAM_STATIC",
      "-o",
      exampleStatic,
      `${C_SOURCES}/example.c`,
      ...sources,
    ]),
    `${MINGW_GCC} -DOAM_STATIC (example.exe with the sources compiled in)`,
  );
  return { dir, dll, example, exampleStatic };
}
