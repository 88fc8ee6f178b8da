/**
 * A paused `oam respond` on a GGUF model prints the command that continues it; pasted in the folder it was
 * printed in, that command finishes the turn and leaves the checkout's `deno.lock` as it was (node-llama-cpp
 * must never be pinned there: the command carries `--no-lock`, as every task that runs `cli.ts` does).
 * Runs with OAM_GGUF_TESTS=1 (`deno task test:gguf`).
 */
import assert from "node:assert/strict";
import { fixtureModelPath, GGUF_ENABLED, GGUF_RUN_FLAGS } from "./fixture.ts";

const CLI = new URL("../../../cli.ts", import.meta.url).pathname;
const LOCK = new URL("../../../deno.lock", import.meta.url).pathname;
/** A real model on a shared 2-core machine: loading and generating can take seconds under load. */
const SLOW_MS = 120_000;

async function run(args: string[], cwd: string) {
  const output = await new Deno.Command(Deno.execPath(), {
    args,
    cwd,
    env: { NO_COLOR: "1" },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(SLOW_MS),
  }).output();
  const decoder = new TextDecoder();
  return { code: output.code, stdout: decoder.decode(output.stdout), stderr: decoder.decode(output.stderr) };
}

Deno.test({
  name:
    "gguf: the command a paused respond prints, pasted where it was printed, finishes the turn and pins nothing",
  ignore: !GGUF_ENABLED,
  async fn() {
    const model = await fixtureModelPath();
    const dir = await Deno.makeTempDir();
    const lockBefore = await Deno.readTextFile(LOCK);
    try {
      await Deno.writeTextFile(
        `${dir}/tools.json`,
        JSON.stringify([{
          name: "get_weather",
          description: "Weather for a city.",
          parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
        }]),
      );
      // The README's GGUF permissions and --no-lock, run from a folder of the user's own.
      const first = await run([
        "run",
        "--quiet",
        ...GGUF_RUN_FLAGS,
        CLI,
        "respond",
        "--tools",
        "tools.json",
        "--tool-choice",
        "get_weather",
        "--model",
        `gguf:${model}#gpu=false,threads=1,contextSize=2048`,
        "What is the weather in Oslo?",
      ], dir);
      assert.equal(first.code, 10, first.stderr);
      const id = JSON.parse(first.stdout).calls[0].id as string;
      const command = first.stderr.split("\n").find((line) => line.includes(" respond --resume "))?.trim() ??
        "";
      assert.match(command, /^deno run --no-lock --allow-read /, first.stderr);
      // Pasted as printed (its one quoted word, the model, unquoted for the argument list).
      const words = command.replace(`${id}=<output>`, `${id}=sunny`).split(" ")
        .map((word) => word.replace(/^'(.*)'$/, "$1"));
      const resumed = await run(["run", "--quiet", ...words.slice(2)], dir);
      assert.equal(resumed.code, 0, resumed.stderr);
      assert.notEqual(resumed.stdout.trim(), "");
      assert.equal(await Deno.readTextFile(LOCK), lockBefore, "the pasted command changed deno.lock");
    } finally {
      await Deno.remove(dir, { recursive: true });
      // Left as it was even when the test failed, for the rest of the tier.
      const lockNow = await Deno.readTextFile(LOCK);
      if (lockNow !== lockBefore) await Deno.writeTextFile(LOCK, lockBefore);
    }
  },
});
