/**
 * Where the plugin library is looked for. Pure decisions (no I/O of its own beyond what the injected probes
 * do), so the rules are testable on any OS.
 *
 * Order: `OAM_FM_LIBRARY` (any OS; if set, nothing else is tried), then — on Apple silicon macOS only —
 * next to the executable, the SwiftPM release output and the SwiftPM debug output.
 * @module
 */

/** The library file name the SwiftPM product produces. */
export const PLUGIN_FILE_NAME = "libOAMFoundationModels.dylib";
/** The environment variable that names the library explicitly. */
export const LIBRARY_ENV = "OAM_FM_LIBRARY";

/** Where a candidate came from. */
export type LibrarySource = "option" | "env" | "executable" | "swiftpm-release" | "swiftpm-debug";

/** A path to try. */
export interface LibraryCandidate {
  /** File path to dlopen. */
  path: string;
  /** Which rule produced it. */
  source: LibrarySource;
}

/** Environment probes (injectable for tests). */
export interface LocateEnvironment {
  /** Reads an environment variable; may throw without permission (treated as absent). */
  env: (name: string) => string | undefined;
  /** `Deno.build.os`. */
  os: string;
  /** `Deno.build.arch`. */
  arch: string;
  /** The executable's path; may throw without `--allow-read` (treated as unknown). */
  execPath: () => string;
  /** URL of this module (the SwiftPM outputs are resolved relative to it). */
  moduleUrl: string;
}

/** True on the only platform the on-device model can exist on. */
export function isEligiblePlatform(os: string, arch: string): boolean {
  return os === "darwin" && arch === "aarch64";
}

/** Reads an environment variable, treating any failure (e.g. missing `--allow-env`) as absent. */
export function safeEnv(read: (name: string) => string | undefined, name: string): string | undefined {
  try {
    const value = read(name);
    return value === undefined || value === "" ? undefined : value;
  } catch {
    return undefined;
  }
}

function dirname(path: string): string {
  const i = path.lastIndexOf("/");
  return i <= 0 ? "/" : path.slice(0, i);
}

function fileUrlToPath(url: string): string | undefined {
  try {
    const u = new URL(url);
    if (u.protocol !== "file:") return undefined;
    return decodeURIComponent(u.pathname);
  } catch {
    return undefined;
  }
}

/**
 * The candidates to try, in order. `explicitPath` (the `libraryPath` option) wins over everything; then
 * `OAM_FM_LIBRARY`; both are exclusive (a failure to load them is reported, not followed by a search).
 */
export function libraryCandidates(probe: LocateEnvironment, explicitPath?: string): LibraryCandidate[] {
  if (explicitPath) return [{ path: explicitPath, source: "option" }];
  const fromEnv = safeEnv(probe.env, LIBRARY_ENV);
  if (fromEnv) return [{ path: fromEnv, source: "env" }];
  if (!isEligiblePlatform(probe.os, probe.arch)) return [];
  const out: LibraryCandidate[] = [];
  try {
    out.push({ path: `${dirname(probe.execPath())}/${PLUGIN_FILE_NAME}`, source: "executable" });
  } catch {
    // no --allow-read: skip the executable's directory
  }
  for (const [config, source] of [["release", "swiftpm-release"], ["debug", "swiftpm-debug"]] as const) {
    const path = fileUrlToPath(
      new URL(`../swift/.build/${config}/${PLUGIN_FILE_NAME}`, probe.moduleUrl).href,
    );
    if (path) out.push({ path, source });
  }
  return out;
}

/**
 * True when `descriptor` is already granted. Checked before every access so that a missing permission means
 * "absent" instead of an interactive prompt (stdin may be the protocol stream).
 */
export function granted(descriptor: Deno.PermissionDescriptor): boolean {
  try {
    return Deno.permissions.querySync(descriptor).state === "granted";
  } catch {
    return false;
  }
}

/** The real environment of this process. */
export function denoEnvironment(env?: (name: string) => string | undefined): LocateEnvironment {
  return {
    env: env ?? ((name) => granted({ name: "env", variable: name }) ? Deno.env.get(name) : undefined),
    os: Deno.build.os,
    arch: Deno.build.arch,
    execPath: () => {
      if (!granted({ name: "read" })) throw new Error("Deno.execPath() needs --allow-read.");
      return Deno.execPath();
    },
    moduleUrl: import.meta.url,
  };
}

/** True when `path` names an existing file (false on any error, including missing permission). */
export function fileExists(path: string): boolean {
  if (!granted({ name: "read", path })) return false;
  try {
    return Deno.statSync(path).isFile;
  } catch {
    return false;
  }
}
