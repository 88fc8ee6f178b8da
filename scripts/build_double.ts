/**
 * `deno task build:double` (the first step of `deno task test`): builds the C test double of the
 * FoundationModels plugin, `ffi/fm_double.c`, with gcc. Without gcc it says so in one line and exits 1,
 * before any test runs.
 *
 * Usage: deno run --allow-run --allow-read --allow-write --allow-env scripts/build_double.ts [output]
 * (default output: .build/libfm_double.so)
 * @module
 */

/** The one line printed when gcc is missing. */
export const GCC_MISSING =
  "deno task test needs gcc to build the FFI test double (ffi/fm_double.c); install " +
  "it (Debian/Ubuntu: apt-get install gcc; macOS: xcode-select --install) and run again.";

/** The gcc arguments that build the double at `output` from the repository at `root`. */
export function gccArgs(root: string, output: string): string[] {
  return [
    "-shared",
    "-fPIC",
    "-O2",
    "-pthread",
    "-Wall",
    "-Wl,-z,nodelete",
    "-o",
    output,
    `${root}ffi/fm_double.c`,
  ];
}

if (import.meta.main) {
  const root = new URL("../", import.meta.url).pathname;
  const output = Deno.args[0] ?? `${root}.build/libfm_double.so`;
  let status: Deno.CommandStatus;
  try {
    await Deno.mkdir(output.slice(0, output.lastIndexOf("/") + 1) || ".", { recursive: true });
    status = await new Deno.Command("gcc", { args: gccArgs(root, output), stdin: "null" }).spawn().status;
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
    Deno.stderr.writeSync(new TextEncoder().encode(`${GCC_MISSING}\n`));
    Deno.exit(1);
  }
  Deno.exit(status.code);
}
