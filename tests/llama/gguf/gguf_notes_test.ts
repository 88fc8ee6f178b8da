/**
 * What the bridge says on stderr about a GGUF model that runs, but not as the designer expects.
 *
 * A GGUF model without a chat template (a base model, or a file converted without one): node-llama-cpp then
 * writes its prompts in a general format the model was not trained on, and the answers and tool calls come
 * out poor without a word. The bridge says so on stderr, once, with what to use instead; a model with a
 * template hears nothing. The fixture with its template key renamed stands in for such a model.
 *
 * A `contextSize` larger than the model was trained for is capped at the training size: the designer who asked
 * for 100000 tokens hears that the model has 4096.
 * Runs with OAM_GGUF_TESTS=1 (`deno task test:gguf`).
 */
import assert from "node:assert/strict";
import { fixtureModelPath, GGUF_ENABLED } from "./fixture.ts";

const CLI = new URL("../../../cli.ts", import.meta.url).pathname;
const FLAGS = ["--no-lock", "--allow-read", "--allow-env", "--allow-sys", "--allow-ffi", "--allow-run"];
const SETTINGS = "#gpu=false,threads=1,contextSize=512";

async function respond(
  path: string,
  settings = SETTINGS,
): Promise<{ code: number; stdout: string; stderr: string }> {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--quiet", ...FLAGS, CLI, "respond", "--model", `gguf:${path}${settings}`, "Hello"],
    env: { NO_COLOR: "1" },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decoder = new TextDecoder();
  return { code: output.code, stdout: decoder.decode(output.stdout), stderr: decoder.decode(output.stderr) };
}

/** A copy of `path` whose `tokenizer.chat_template` key is renamed (same length), so it has no template. */
async function withoutTemplate(path: string, dir: string): Promise<string> {
  const bytes = await Deno.readFile(path);
  const key = new TextEncoder().encode("tokenizer.chat_template");
  const at = indexOf(bytes, key);
  assert.ok(at > 0, "the fixture has a chat template");
  bytes[at + key.length - 1] = "X".charCodeAt(0);
  const copy = `${dir}/no-template.gguf`;
  await Deno.writeFile(copy, bytes);
  return copy;
}

function indexOf(haystack: Uint8Array, needle: Uint8Array): number {
  outer: for (let i = 0; i + needle.length <= haystack.length; i++) {
    for (let j = 0; j < needle.length; j++) if (haystack[i + j] !== needle[j]) continue outer;
    return i;
  }
  return -1;
}

/** The line that starts each run's first load of a model file (see gguf_load_notice_test.ts). */
const LOADING = (path: string) => `[oam] Loading the model '${path}'…\n`;

const WARNING = (path: string) =>
  `[oam] The model '${path}' has no chat template node-llama-cpp knows: it writes the prompts in a general ` +
  "format the model was not trained on, so answers and tool calls may be poor. Use an instruct (chat) model " +
  "with a template, such as Qwen2.5-1.5B-Instruct (README: A local model in two commands).\n";

Deno.test({
  name: "gguf: a model without a chat template is said to be one on stderr, once; one with a template is not",
  ignore: !GGUF_ENABLED,
  async fn() {
    const dir = await Deno.makeTempDir();
    try {
      const fixture = await fixtureModelPath();
      const copy = await withoutTemplate(fixture, dir);
      const bare = await respond(copy);
      assert.equal(bare.code, 0, bare.stderr);
      assert.equal(bare.stderr, LOADING(copy) + WARNING(copy));
      const templated = await respond(fixture);
      assert.equal(templated.code, 0, templated.stderr);
      assert.equal(templated.stderr, LOADING(fixture));
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test({
  name: "gguf: a contextSize larger than the model was trained for is said to be capped, on stderr",
  ignore: !GGUF_ENABLED,
  async fn() {
    const fixture = await fixtureModelPath();
    const r = await respond(fixture, "#gpu=false,threads=1,contextSize=100000");
    assert.equal(r.code, 0, r.stderr);
    assert.equal(
      r.stderr,
      LOADING(fixture) +
        `[oam] The model '${fixture}' was trained for 4096 tokens of context: its contextSize is 4096, not the ` +
        "100000 asked for.\n",
    );
  },
});
