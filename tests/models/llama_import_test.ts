/**
 * node-llama-cpp not installed yet on a machine that cannot reach the npm registry: the first GGUF model a
 * designer uses makes Deno fetch the package, and when that fails the message says why, on one line, and what
 * to do (the registry, or the command that downloads it ahead). A Deno with an empty cache and a registry that
 * refuses connections stands in for that machine; the backend's runtime module needs no other npm package.
 */
import assert from "node:assert/strict";
import { NODE_LLAMA_CPP_VERSION } from "../../src/models/llama_runtime.ts";

/** Runs `args` with an empty Deno cache and an npm registry that refuses every connection. */
async function offline(
  args: string[],
  cwd: string,
): Promise<{ code: number; stdout: string; stderr: string }> {
  const output = await new Deno.Command(Deno.execPath(), {
    args,
    cwd,
    env: { DENO_DIR: `${cwd}/deno_dir`, NPM_CONFIG_REGISTRY: "http://127.0.0.1:9/", NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decoder = new TextDecoder();
  return { code: output.code, stdout: decoder.decode(output.stdout), stderr: decoder.decode(output.stderr) };
}

Deno.test("node-llama-cpp that cannot be fetched: the message is one line and says how to get it", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const runtime = new URL("../../src/models/llama_runtime.ts", import.meta.url).href;
    await Deno.writeTextFile(
      `${dir}/load.ts`,
      `import { loadLlamaModule } from "${runtime}";\n` +
        `await loadLlamaModule().then(() => console.log("loaded"), (e) => console.log(JSON.stringify(e.message)));\n`,
    );
    const r = await offline(["run", "--no-config", "--no-lock", "-A", "load.ts"], dir);
    assert.equal(r.code, 0, r.stderr);
    const message: string = JSON.parse(r.stdout);
    assert.match(
      message,
      /^node-llama-cpp could not be loaded: Failed loading http:\/\/127\.0\.0\.1:9\/node-llama-cpp/,
    );
    assert.ok(!message.includes("\n"), message);
    const command = `deno cache --no-lock npm:node-llama-cpp@${NODE_LLAMA_CPP_VERSION}`;
    assert.ok(
      message.endsWith(
        ` Deno downloads node-llama-cpp ${NODE_LLAMA_CPP_VERSION} (≈ 730 MB, once) from the npm registry the ` +
          "first time a GGUF model is used: check the connection to the registry (or NPM_CONFIG_REGISTRY, for " +
          `a mirror), or download it ahead with '${command}'.`,
      ),
      message,
    );
    // The command it names is one Deno accepts: it goes to the registry for the package.
    const cache = await offline(command.split(" ").slice(1), dir);
    assert.notEqual(cache.code, 0);
    assert.match(cache.stderr, /Failed loading http:\/\/127\.0\.0\.1:9\/node-llama-cpp/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
