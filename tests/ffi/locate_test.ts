import assert from "node:assert/strict";
import {
  isEligiblePlatform,
  LIBRARY_ENV,
  libraryCandidates,
  type LocateEnvironment,
  PLUGIN_FILE_NAME,
  safeEnv,
} from "../../ffi/locate.ts";

function probe(overrides: Partial<LocateEnvironment> = {}): LocateEnvironment {
  return {
    env: () => undefined,
    os: "linux",
    arch: "x86_64",
    execPath: () => "/opt/deno/bin/deno",
    moduleUrl: "file:///repo/ffi/locate.ts",
    ...overrides,
  };
}

Deno.test("locate: only Apple silicon macOS is eligible", () => {
  assert.equal(isEligiblePlatform("darwin", "aarch64"), true);
  assert.equal(isEligiblePlatform("darwin", "x86_64"), false);
  assert.equal(isEligiblePlatform("linux", "aarch64"), false);
  assert.equal(isEligiblePlatform("windows", "x86_64"), false);
});

Deno.test("locate: nothing to try off Apple silicon macOS without OAM_FM_LIBRARY", () => {
  assert.deepEqual(libraryCandidates(probe()), []);
});

Deno.test("locate: OAM_FM_LIBRARY wins on any OS and is exclusive", () => {
  const env = (name: string) => name === LIBRARY_ENV ? "/opt/plugins/libx.so" : undefined;
  assert.deepEqual(libraryCandidates(probe({ env })), [{ path: "/opt/plugins/libx.so", source: "env" }]);
  assert.deepEqual(libraryCandidates(probe({ env, os: "darwin", arch: "aarch64" })), [
    { path: "/opt/plugins/libx.so", source: "env" },
  ]);
});

Deno.test("locate: an explicit path wins over OAM_FM_LIBRARY", () => {
  const env = () => "/opt/plugins/from-env.so";
  assert.deepEqual(libraryCandidates(probe({ env }), "/x/lib.so"), [{ path: "/x/lib.so", source: "option" }]);
});

Deno.test("locate: an empty OAM_FM_LIBRARY counts as unset", () => {
  assert.deepEqual(libraryCandidates(probe({ env: () => "" })), []);
});

Deno.test("locate: a throwing env reader (no --allow-env) counts as unset", () => {
  const env = () => {
    throw new Deno.errors.NotCapable("Requires env access");
  };
  assert.equal(safeEnv(env, LIBRARY_ENV), undefined);
  assert.deepEqual(libraryCandidates(probe({ env })), []);
});

Deno.test("locate: on Apple silicon macOS, executable dir then SwiftPM release and debug", () => {
  const found = libraryCandidates(probe({ os: "darwin", arch: "aarch64" }));
  assert.deepEqual(found, [
    { path: `/opt/deno/bin/${PLUGIN_FILE_NAME}`, source: "executable" },
    { path: `/repo/swift/.build/release/${PLUGIN_FILE_NAME}`, source: "swiftpm-release" },
    { path: `/repo/swift/.build/debug/${PLUGIN_FILE_NAME}`, source: "swiftpm-debug" },
  ]);
});

Deno.test("locate: no --allow-read for execPath skips the executable dir; remote modules skip SwiftPM", () => {
  const execPath = () => {
    throw new Deno.errors.NotCapable("Requires read access");
  };
  const found = libraryCandidates(probe({ os: "darwin", arch: "aarch64", execPath }));
  assert.deepEqual(found.map((c) => c.source), ["swiftpm-release", "swiftpm-debug"]);
  const remote = libraryCandidates(
    probe({ os: "darwin", arch: "aarch64", moduleUrl: "https://jsr.io/@x/y/ffi/locate.ts" }),
  );
  assert.deepEqual(remote.map((c) => c.source), ["executable"]);
});
