/**
 * Builds libopen_apple_models, its example and its test program with gcc: plain (`-O2`), or with
 * ThreadSanitizer (`-fsanitize=thread`, library and programs alike) into a directory of its own.
 */
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

/** Builds the library, `example` and `test_bridge`; `sanitizer: "thread"` builds everything with TSan. */
export async function buildC(options: { sanitizer?: "thread" } = {}): Promise<CBuild> {
  const dir = `${BUILD_DIR}/${options.sanitizer ? "c-tsan" : "c"}`;
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
