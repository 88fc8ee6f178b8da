/**
 * A typed-API script on a GGUF model waits seconds for node-llama-cpp and the model to load before its first
 * turn: one line on stderr says so when that load starts, none when the model is loaded already, and stdout
 * (which may be a wire) stays the script's own. Runs with OAM_GGUF_TESTS=1 (`deno task test:gguf`).
 */
import assert from "node:assert/strict";
import { fixtureConfig, GGUF_ENABLED } from "./fixture.ts";

const MOD = new URL("../../../mod.ts", import.meta.url).href;

Deno.test({
  name: "gguf typed API: the first load of a model says so on stderr, once; stdout is the script's",
  ignore: !GGUF_ENABLED,
  async fn() {
    const path = (await fixtureConfig()).path;
    const dir = await Deno.makeTempDir();
    try {
      const script = `${dir}/npc.ts`;
      // Two sessions on the same file: the second finds it loaded.
      await Deno.writeTextFile(
        script,
        `import { Bridge, modelFromArgs } from ${JSON.stringify(MOD)};\n` +
          "await using bridge = await Bridge.open();\n" +
          "const model = modelFromArgs(Deno.args);\n" +
          "for (const name of ['a', 'b']) {\n" +
          "  const session = await bridge.createSession({ session: name, model });\n" +
          "  await session.respond('Say hi.', { maximumResponseTokens: 4 });\n" +
          "  console.log(`turn ${name}`);\n" +
          "}\n",
      );
      const out = await new Deno.Command(Deno.execPath(), {
        args: ["run", "--quiet", "--no-lock", "-A", script, "--model", `gguf:${path}#gpu=false,threads=1`],
        cwd: dir,
        stdin: "null",
        env: { NO_COLOR: "1" },
      }).output();
      const stdout = new TextDecoder().decode(out.stdout);
      const stderr = new TextDecoder().decode(out.stderr);
      assert.equal(out.code, 0, stderr);
      assert.equal(stdout, "turn a\nturn b\n");
      const notices = stderr.split("\n").filter((line) => line.startsWith("[oam] Loading"));
      assert.deepEqual(notices, [`[oam] Loading the model '${path}'…`], stderr);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});
