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

/**
 * Builds the library, `example` and `test_bridge`; `sanitizer: "thread"` builds everything with TSan. `dir`
 * names the output directory under .build/bindings (test files that run in parallel each need their own).
 */
export async function buildC(options: { sanitizer?: "thread"; dir?: string } = {}): Promise<CBuild> {
  const dir = `${BUILD_DIR}/${options.dir ?? (options.sanitizer ? "c-tsan" : "c")}`;
  await Deno.mkdir(dir, { recursive: true });
  const warn = ["-Wall", "-Wextra", "-Werror"];
  const sanitize = options.sanitizer ? [`-fsanitize=${options.sanitizer}`] : [];
  assertSucceeded(
    await run("gcc", [
      "-shared",
      "-fPIC",
      options.sanitizer ? "-O1" : "-O2",
      "-g",
      "-pthread",
      ...warn,
      ...sanitize,
      "-fvisibility=hidden",
      "-o",
      `${dir}/libopen_apple_models.${LIB_EXT}`,
      `${C_SOURCES}/open_apple_models.c`,
      `${C_SOURCES}/platform_posix.c`,
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
        ...sanitize,
        `-I${C_SOURCES}`,
        "-o",
        `${dir}/${program}`,
        `${C_SOURCES}/${program}.c`,
        `-L${dir}`,
        "-lopen_apple_models",
        `-Wl,-rpath,${dir}`,
        "-pthread",
      ]),
      `gcc (${program})`,
    );
  }
  return { dir, example: `${dir}/example`, testBridge: `${dir}/test_bridge` };
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
        ...(cpp ? ["-x", "c++", "-std=c++17", ...STRICT_CXX] : ["-Wall", "-Wextra", "-Werror"]),
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
    assertSucceeded(
      await run("gcc", [
        "-O1",
        "-g",
        "-Wall",
        "-Wextra",
        "-Werror",
        `-I${C_SOURCES}`,
        "-o",
        `${dir}/${program}`,
        `${C_SOURCES}/${program}.c`,
        `-L${dir}`,
        "-lopen_apple_models",
        `-Wl,-rpath,${dir}`,
        "-pthread",
      ]),
      `gcc (${program}, against the library built as C++)`,
    );
  }
  return { dir, example: `${dir}/example`, testBridge: `${dir}/test_bridge` };
}

/** Checks the output of example_cpp: the tool/call was answered on the game thread, the turn finished. */
export function assertExampleCppRan(stdout: string): void {
  assert.match(stdout, /^ {2}\[game thread: yes\] "open_gate"\(\{"gate":"north"\}\)$/m);
  assert.match(stdout, /^respond: \{"jsonrpc":"2.0","id":2,"result":.*portcullis chain is jammed/m);
  assert.match(stdout, /^ok$/m);
}
