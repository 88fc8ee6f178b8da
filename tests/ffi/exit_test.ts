/**
 * Spawns `deno run` scripts that use the system model: the process must exit on its own (no close, no
 * pending poll), and missing permissions must give a clean "unavailable" instead of a crash.
 */
import assert from "node:assert/strict";
import { DOUBLE_PATH, requireDouble } from "./double.ts";

const FIXTURE = new URL("./fixtures/run_step.ts", import.meta.url).pathname;

/** The variables Deno itself needs (cache location), without anything else from this process. */
function passThrough(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of ["HOME", "PATH", "DENO_DIR", "XDG_CACHE_HOME", "TMPDIR"]) {
    const value = Deno.env.get(name);
    if (value !== undefined) out[name] = value;
  }
  return out;
}

async function run(permissions: string[], env: Record<string, string>) {
  const command = new Deno.Command(Deno.execPath(), {
    args: ["run", "--no-prompt", "--quiet", ...permissions, FIXTURE],
    env: { ...passThrough(), NO_COLOR: "1", ...env },
    clearEnv: true,
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(30_000),
  });
  const { code, stdout, stderr } = await command.output();
  const err = new TextDecoder().decode(stderr);
  assert.equal(code, 0, err);
  return JSON.parse(new TextDecoder().decode(stdout));
}

const EXPECTED_OFF_MAC = Deno.build.os === "darwin" && Deno.build.arch === "aarch64"
  ? "unknown"
  : "device_not_eligible";

Deno.test("exit: a deno run script with a loaded plugin exits by itself", async () => {
  requireDouble();
  const out = await run(["--allow-ffi", "--allow-read", "--allow-env=OAM_FM_LIBRARY"], {
    OAM_FM_LIBRARY: DOUBLE_PATH,
  });
  assert.equal(out.availability.available, true);
  assert.deepEqual(out.step, { kind: "text", text: "Hello from the test double.", usage: null });
});

Deno.test("exit: without --allow-ffi the model is unavailable, with the load error as detail", async () => {
  const out = await run(["--allow-read", "--allow-env=OAM_FM_LIBRARY"], { OAM_FM_LIBRARY: DOUBLE_PATH });
  assert.equal(out.availability.available, false);
  assert.equal(out.availability.reason, EXPECTED_OFF_MAC);
  assert.match(out.availability.detail, /ffi/i);
  assert.equal(out.step.code, -32001);
  assert.equal(out.step.data.code, "model_unavailable");
});

Deno.test("exit: without --allow-env the variable counts as unset", async () => {
  const out = await run(["--allow-ffi", "--allow-read"], { OAM_FM_LIBRARY: DOUBLE_PATH });
  assert.equal(out.availability.available, false);
  assert.equal(out.availability.reason, EXPECTED_OFF_MAC);
  assert.equal(out.step.data.code, "model_unavailable");
});
