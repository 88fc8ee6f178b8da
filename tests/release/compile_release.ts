/**
 * `deno task compile` without its denort runtime (offline, or a bad `DENORT_BIN`) says what is missing
 * after Deno's own error: `DENORT_BIN`, and where a denort binary comes from. The offline case is made
 * deterministic with an empty Deno cache and an HTTPS proxy on a closed loopback port.
 */
import assert from "node:assert/strict";
import { denortAdvice } from "../../scripts/compile.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const SCRIPT = new URL("../../scripts/compile.ts", import.meta.url).pathname;

async function run(
  command: string[],
  env: Record<string, string>,
): Promise<{ code: number; stdout: string; stderr: string }> {
  const vars = Deno.env.toObject();
  delete vars.DENORT_BIN;
  const out = await new Deno.Command(Deno.execPath(), {
    args: command,
    cwd: ROOT,
    stdin: "null",
    clearEnv: true,
    env: { ...vars, NO_COLOR: "1", ...env },
  }).output();
  const decoder = new TextDecoder();
  return { code: out.code, stdout: decoder.decode(out.stdout), stderr: decoder.decode(out.stderr) };
}

function closedPort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}

const WHERE =
  `A denort binary is the denort-${Deno.build.target}.zip asset of the Deno v${Deno.version.deno} ` +
  `release (unzip it once and keep it); it must be the same version as the deno that compiles.`;

Deno.test("compile offline: after Deno's download error, what is missing and where denort comes from", async () => {
  const dir = await Deno.makeTempDir({ prefix: "oam-compile-" });
  try {
    await Deno.writeTextFile(`${dir}/hello.ts`, 'console.log("hi");\n');
    const r = await run(
      [
        "run",
        "--allow-run",
        "--allow-env=DENORT_BIN",
        "--allow-read",
        SCRIPT,
        "--output",
        `${dir}/hello`,
        `${dir}/hello.ts`,
      ],
      { DENO_DIR: `${dir}/cache`, HTTPS_PROXY: `http://127.0.0.1:${closedPort()}` },
    );
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /denort/, "Deno's own error is passed through");
    assert.ok(
      r.stderr.endsWith(
        `\ndeno compile could not get its runtime, denort (the error above): it downloads denort for Deno ` +
          `${Deno.version.deno} from Deno's release server, which needs the network. Offline, point DENORT_BIN ` +
          `at a denort binary and run again, e.g. DENORT_BIN=/path/to/denort deno task compile. ${WHERE}\n`,
      ),
      r.stderr,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("deno task compile with a DENORT_BIN that does not exist: names it", async () => {
  const r = await run(["task", "--quiet", "compile"], { DENORT_BIN: "/nonexistent/denort" });
  assert.notEqual(r.code, 0);
  assert.match(r.stderr, /Could not find denort at '\/nonexistent\/denort'/);
  assert.ok(
    r.stderr.endsWith(
      `\ndeno compile could not use DENORT_BIN=/nonexistent/denort (the error above): it must name a denort ` +
        `binary of Deno ${Deno.version.deno} for ${Deno.build.target}. ${WHERE}\n`,
    ),
    r.stderr,
  );
});

Deno.test("compile: other failures get no denort advice; the exit code is deno compile's", async () => {
  const r = await run(
    [
      "run",
      "--allow-run",
      "--allow-env=DENORT_BIN",
      "--allow-read",
      SCRIPT,
      "--output",
      "/nonexistent/x",
      "/nonexistent/missing.ts",
    ],
    {},
  );
  assert.equal(r.code, 1);
  assert.match(r.stderr, /missing\.ts/);
  assert.doesNotMatch(r.stderr, /DENORT_BIN/);
  assert.equal(denortAdvice("error: Module not found", undefined), null);
  assert.equal(denortAdvice("error: Module not found", "/x/denort"), null);
});

Deno.test("compile with DENORT_BIN naming the zip or another file that is no denort: says so after Deno's error", () => {
  // What deno compile prints when DENORT_BIN is a file it cannot use as its runtime (Linux; macOS says Mach-O).
  const stderr =
    "error: Writing deno compile executable to temporary file '.build/oam.tmp-1'\n\nCaused by:\n" +
    "    0: Writing binary bytes\n    1: Invalid object: Not an ELF file\n";
  const zip = `/dl/denort-${Deno.build.target}.zip`;
  assert.equal(
    denortAdvice(stderr, zip),
    `deno compile could not use DENORT_BIN=${zip} (the error above): it names the zip archive; unzip it and ` +
      `point DENORT_BIN at the denort file inside (e.g. DENORT_BIN=/dl/denort deno task compile). ${WHERE}`,
  );
  assert.equal(
    denortAdvice(stderr, "/dl/notes.txt"),
    `deno compile could not use DENORT_BIN=/dl/notes.txt (the error above): it must name a denort binary of ` +
      `Deno ${Deno.version.deno} for ${Deno.build.target}. ${WHERE}`,
  );
  // Without DENORT_BIN the same words are not about denort.
  assert.equal(denortAdvice(stderr, undefined), null);
});
