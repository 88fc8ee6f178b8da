/**
 * A GGUF model's availability check says when waiting cannot cure it (`permanent`): a permission this process
 * lacks cannot be granted while it runs, so `oam serve` answers its 503 without asking for a retry. Each case
 * runs the check in a child `deno` with the permissions of the case (node-llama-cpp is never loaded: the
 * checks fail before it).
 */
import assert from "node:assert/strict";

const MODEL = new URL("../../src/models/llama_model.ts", import.meta.url).href;

/** The availability of `gguf:<path>` in a child run with `permissions`. */
async function availabilityIn(permissions: string[], path: string): Promise<Record<string, unknown>> {
  const code = `import { createLlamaModel } from ${JSON.stringify(MODEL)};\n` +
    `const a = await createLlamaModel({ path: ${JSON.stringify(path)} }).availability();\n` +
    "await Deno.stdout.write(new TextEncoder().encode(JSON.stringify(a)));\n";
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--quiet", "--no-lock", "--no-prompt", ...permissions, "-"],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
    env: { OAM_MODELS_DIR: "" },
  }).spawn();
  const writer = out.stdin.getWriter();
  await writer.write(new TextEncoder().encode(code));
  await writer.close();
  const result = await out.output();
  const stderr = new TextDecoder().decode(result.stderr);
  assert.equal(result.code, 0, stderr);
  return JSON.parse(new TextDecoder().decode(result.stdout));
}

Deno.test("gguf availability: a missing permission is permanent; a missing file is not", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const model = `${dir}/model.gguf`;
    await Deno.writeFile(model, new Uint8Array([...new TextEncoder().encode("GGUF"), 3, 0, 0, 0]));
    // node-llama-cpp's own permissions (the stdio task's grants).
    const noRun = await availabilityIn(["--allow-read", "--allow-env", "--allow-ffi"], model);
    assert.match(String(noRun.detail), /node-llama-cpp cannot run without --allow-sys --allow-run/);
    assert.equal(noRun.permanent, true);
    // A cached name that cannot be looked up without the environment.
    const noEnv = await availabilityIn(["--allow-read"], "qwen");
    assert.match(String(noEnv.detail), /without --allow-env no cached model can be looked up/);
    assert.equal(noEnv.permanent, true);
    // A file not there yet (a download still running): waiting may cure it.
    const missing = await availabilityIn(["-A"], `${dir}/none.gguf`);
    assert.match(String(missing.detail), /does not exist/);
    assert.equal(missing.permanent, undefined);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
