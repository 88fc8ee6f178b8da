/**
 * `deno task test` needs gcc for the FFI test double: without it, one line says so before anything runs.
 */
import assert from "node:assert/strict";
import { GCC_MISSING } from "../../scripts/build_double.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const SCRIPT = new URL("../../scripts/build_double.ts", import.meta.url).pathname;

async function run(args: string[], path?: string): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = await new Deno.Command(Deno.execPath(), {
    args,
    cwd: ROOT,
    stdin: "null",
    env: { NO_COLOR: "1", ...(path === undefined ? {} : { PATH: path }) },
  }).output();
  const decoder = new TextDecoder();
  return { code: out.code, stdout: decoder.decode(out.stdout), stderr: decoder.decode(out.stderr) };
}

Deno.test("deno task test without gcc: one line saying what is missing, exit 1, no test runs", async () => {
  const empty = await Deno.makeTempDir({ prefix: "oam-nogcc-" });
  try {
    for (const name of ["build:double", "test"]) {
      const r = await run(["task", "--quiet", name], empty);
      assert.equal(r.code, 1, `${name}: ${r.stderr}`);
      assert.equal(r.stdout, "", name);
      // (`deno task test` echoes the nested `Task build:double …` line itself.)
      const lines = r.stderr.split("\n").filter((l) => l !== "" && !l.startsWith("Task build:double "));
      assert.deepEqual(lines, [GCC_MISSING], name);
    }
  } finally {
    await Deno.remove(empty, { recursive: true });
  }
});

Deno.test("build:double with gcc builds the double (here into a temp file)", async () => {
  const dir = await Deno.makeTempDir({ prefix: "oam-double-" });
  try {
    const r = await run([
      "run",
      "--allow-run",
      "--allow-read",
      "--allow-write",
      "--allow-env",
      SCRIPT,
      `${dir}/x.so`,
    ]);
    assert.equal(r.code, 0, r.stderr);
    assert.ok(Deno.statSync(`${dir}/x.so`).size > 0);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
